// ReadMountFile: the bytes of one regular file under a directory mount, read whole and
// consistently, with the MIME type and text-or-binary decision a resources/read answer
// needs. Confinement is mount_path.h's (OpenInMount); this file adds the type check, the
// size cap and the torn-read check.
// Thread-safety: a function of the file system; any thread. Blocks on disk I/O (at most
// `max_bytes` of it), so a caller on the loop thread keeps the cap small or uses a worker.
//
// Rules:
//  1. Only a regular file is read: the fd from OpenInMount is fstat()ed first, and a
//     directory, FIFO (opened non-blocking, so never waited on), socket or device is
//     kNotRegularFile.
//  2. A file whose fstat size exceeds `max_bytes` is kTooLarge, with a message naming the
//     size and the cap — decided by fstat alone, so a 2 GB sparse file costs no read. A
//     file is never truncated to fit.
//  3. Consistency: the bytes come from the fd opened in step 1 and are checked: reading
//     stops at fstat size + 1 byte; if the count differs from the size at open, or a
//     second fstat shows another size, mtime or ctime, the attempt is void. The whole read
//     (open included) is tried kReadAttempts times; then kChangedWhileRead. No torn mix is
//     ever returned. A file replaced by rename while being read is never torn either (the
//     fd keeps the old inode); Linux file systems bump the replaced inode's ctime as the
//     rename unlinks it, so that attempt is void and the retry reads the new file.
//     (Not detected: an in-place rewrite of the same size within the file system's
//     timestamp granularity; writers that care write then rename.)
//  4. `text` is true when the MIME type is a text type (mime_type.h) and the bytes are
//     valid UTF-8; otherwise the caller sends the bytes as a base64 `blob` (protocol/base64.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "server/resources/mount_error.h"

namespace keel {

// Rule 3: a file that keeps changing gets this many tries (one retry), then an error.
constexpr int kReadAttempts = 2;

struct MountReadOptions {
  uint64_t max_bytes = 0;  // rule 2's cap; required
  // Test seam: runs between the fstat at open and the first read, once per attempt, so a
  // test can change the file at exactly that point. Empty in production.
  std::function<void(int attempt)> after_fstat;
};

struct MountFile {
  std::string bytes;
  std::string mime_type;  // MimeTypeFor(relative)
  bool text = false;      // rule 4
  int64_t mtime_ms = 0;   // since the Unix epoch (for IsoTime)
};

struct MountReadResult {
  MountFailure failure;  // failure.error == kNone on success
  MountFile file;        // meaningful only on success
  bool ok() const { return failure.error == MountError::kNone; }
};

// Reads `relative` (percent-decoded, '/'-separated) under the directory `root`.
MountReadResult ReadMountFile(const std::string& root, std::string_view relative,
                              const MountReadOptions& options);

}  // namespace keel
