// The protocol streams of a serving keel, moved off fds 0 and 1: once taken, fd 1 points at
// stderr and fd 0 at /dev/null, so no stray write from a library or a child process can
// corrupt the protocol stream and no child can steal its input. The private fds never block
// and leave the inherited ones' flags alone (stdio_fd.h).
//
// Thread: the main thread, once, before serving (it rewires the process's stdio).
#pragma once

#include "server/transport/stdio_fd.h"

namespace keel {

// Takes stdin and stdout for the protocol. False (errno set) if the fds cannot be moved.
bool TakeProtocolFds(StdioFd* in, StdioFd* out);

}  // namespace keel
