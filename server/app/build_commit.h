// KeelCommit / KeelVersionText: the commit keel was built from, for `keel --version`
// ("keel 0.1.0 (commit 1a2b3c4)"; "unknown" when built without git, from a source tarball).
//
// The commit comes from a header cmake/keel_commit.cmake writes at every build and rewrites
// only when HEAD moved; only build_commit.cc includes it (and is kept out of the unity
// batches), so a new commit recompiles one small file.
//
// Thread-safety: pure functions of constants.
#pragma once

#include <string>

namespace keel {

// The short commit hash, or "unknown".
const char* KeelCommit();

// "keel VERSION (commit HASH)".
std::string KeelVersionText();

}  // namespace keel
