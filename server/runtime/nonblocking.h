// SetNonBlocking: puts a file descriptor in O_NONBLOCK mode (keel's pipes never block the
// thread that owns them). Only for descriptors keel created: the flag belongs to the open file
// description, so on an inherited one it would outlive keel (stdio goes through StdioFd).
// Errors are ignored: a later read or write reports them.
#pragma once

#include <fcntl.h>

namespace keel {

inline void SetNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace keel
