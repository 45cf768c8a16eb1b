#include "server/app/protocol_fds.h"

#include <fcntl.h>
#include <unistd.h>

namespace keel {

bool TakeProtocolFds(StdioFd* in, StdioFd* out) {
  *in = TakeStdio(STDIN_FILENO, O_RDONLY);
  *out = TakeStdio(STDOUT_FILENO, O_WRONLY);
  if (in->fd < 0 || out->fd < 0) return false;
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    return false;
  }
  close(devnull);
  return true;
}

}  // namespace keel
