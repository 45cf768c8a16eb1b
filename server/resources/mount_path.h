// OpenInMount: opens a file named by a path relative to a mount root, and never anything
// outside that root, whatever the path says and whatever symbolic links lie on the way.
// The `relative` path comes from a resource URI's tail, already percent-decoded; the root
// is the operator's (trusted: symbolic links in the root's own path are followed).
// Thread-safety: a pure function of the file system; any thread. It blocks on disk I/O,
// so the loop thread calls it only for local files it is willing to wait for.
//
// How: the walk goes component by component from a directory fd of the root, each step an
// openat(..., O_NOFOLLOW) relative to the directory fd held from the step before, so no
// rename or symlink swap elsewhere can move the walk outside: each fd it holds is a
// directory it reached inside the root. Not openat2(RESOLVE_BENEATH): Linux-only (5.6),
// often refused by container seccomp profiles (ENOSYS), so a fallback would be needed
// anyway and would be the less tested path; one walk is one behaviour everywhere.
//
// Rules:
//  1. Syntax, checked before any I/O: the path is non-empty, at most kMaxPathBytes, relative
//     (no leading "/"), with no NUL, no backslash (so a path means the same on every OS),
//     and no empty, "." or ".." component — else kNotFound, or kOutsideMount for ".." and
//     an absolute path.
//  2. Hidden names — a component starting with "." — are refused as kNotFound, in the path
//     and in link targets: a mount of a project directory must not serve .git/ or .env, and
//     what ListMount does not list cannot be read.
//  3. Symbolic links inside the root are followed: a relative target is resolved by this
//     walk (its ".." steps back up the directories it holds, and a ".." above the root is
//     kOutsideMount). An absolute target is kOutsideMount even if it names a file inside
//     the root: the root may be reached by other paths, and one rule is easier to trust.
//     At most kMaxSymlinkHops links per open (a loop is kNotFound).
//  4. The final component is opened O_RDONLY | O_NONBLOCK | O_NOCTTY, so a FIFO does not
//     block the open; the caller fstat()s the fd and refuses what is not a regular file.
//     (Opening a device node may still have effects a device defines; a mount root holds
//     none in practice.)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "server/resources/mount_error.h"
#include "server/runtime/fd.h"

namespace keel {

// PATH_MAX on Linux: a longer relative path cannot name a file anyway.
constexpr size_t kMaxPathBytes = 4096;
// Linux's own limit (MAXSYMLINKS) on links followed while resolving one path.
constexpr int kMaxSymlinkHops = 40;

// Rule 1 alone: kNone when `relative` is well-formed.
MountFailure CheckMountPath(std::string_view relative);

// The opened file (any type: the caller checks), or a closed Fd with `*failure` set.
Fd OpenInMount(const std::string& root, std::string_view relative, MountFailure* failure);

}  // namespace keel
