#include "server/transport/stdio_fd.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include <sys/socket.h>
#include <sys/stat.h>

namespace keel {
namespace {

// kPollFirst: true when poll() says an operation on the fd will not wait (errors included:
// the call then reports them at once).
bool Ready(int fd, short events) {
  pollfd pfd{fd, events, 0};
  int n;
  do {
    n = ::poll(&pfd, 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n == 0) errno = EAGAIN;
  return n > 0;
}

}  // namespace

StdioFd TakeStdio(int inherited_fd, int access) {
  struct stat st;
  if (::fstat(inherited_fd, &st) != 0) return {};
  StdioFd::Kind kind = StdioFd::Kind::kFile;
  if (S_ISSOCK(st.st_mode)) {
    kind = StdioFd::Kind::kSocket;
  } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    const std::string path = "/proc/self/fd/" + std::to_string(inherited_fd);
    const int own = ::open(path.c_str(), access | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (own >= 0) return {own, StdioFd::Kind::kOwn};
    kind = StdioFd::Kind::kPollFirst;
  }
  return {::fcntl(inherited_fd, F_DUPFD_CLOEXEC, 3), kind};
}

ssize_t ReadSome(const StdioFd& in, void* buffer, size_t size) {
  switch (in.kind) {
    case StdioFd::Kind::kSocket:
      return ::recv(in.fd, buffer, size, MSG_DONTWAIT);
    case StdioFd::Kind::kPollFirst:
      if (!Ready(in.fd, POLLIN)) return -1;
      break;
    case StdioFd::Kind::kOwn:
    case StdioFd::Kind::kFile:
      break;
  }
  return ::read(in.fd, buffer, size);
}

ssize_t WriteSome(const StdioFd& out, const iovec* iov, int count) {
  switch (out.kind) {
    case StdioFd::Kind::kSocket: {
      msghdr message{};
      message.msg_iov = const_cast<iovec*>(iov);
      message.msg_iovlen = static_cast<size_t>(count);
      return ::sendmsg(out.fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    case StdioFd::Kind::kPollFirst:
      if (count == 0) return 0;
      if (!Ready(out.fd, POLLOUT)) return -1;
      return ::write(out.fd, iov[0].iov_base, std::min<size_t>(iov[0].iov_len, PIPE_BUF));
    case StdioFd::Kind::kOwn:
    case StdioFd::Kind::kFile:
      break;
  }
  return ::writev(out.fd, iov, count);
}

}  // namespace keel
