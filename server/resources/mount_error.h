// MountError: why a file under a directory mount could not be served (mount_path.h,
// mount_reader.h, mount_listing.h). A small enum plus a message for people; the session
// maps the enum to a JSON-RPC code with MeansResourceNotFound and nothing else.
// Thread-safety: plain values.
#pragma once

#include <string>

namespace keel {

enum class MountError {
  kNone,              // success
  kNotFound,          // no such file, or a hidden or malformed path (nothing to tell apart)
  kOutsideMount,      // `..`, an absolute path, or a symbolic link leading out of the root
  kNotRegularFile,    // a directory, FIFO, socket or device
  kTooLarge,          // larger than the read's cap; never truncated
  kChangedWhileRead,  // the size or times moved under the reader twice in a row
  kIo,                // anything else from the OS (permission denied, EIO, ...)
};

// A failure: what and why ("docs/a.md: file is 3000000 bytes, over the cap of 1048576").
struct MountFailure {
  MountError error = MountError::kNone;
  std::string message;
};

// True for the errors a client should see as "resource not found" (MCP: -32602, the same
// code as an unknown URI, so probing outside the mount learns nothing); the others are the
// server's problem (-32603).
inline bool MeansResourceNotFound(MountError error) {
  return error == MountError::kNotFound || error == MountError::kOutsideMount;
}

// A short stable name for logs and tests: "not found", "outside the mount", ...
const char* MountErrorName(MountError error);

}  // namespace keel
