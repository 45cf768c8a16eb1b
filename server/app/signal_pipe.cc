#include "server/app/signal_pipe.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

namespace keel {
namespace {

int signal_pipe[2] = {-1, -1};

void OnSignal(int signo) {
  const char byte = static_cast<char>(signo);
  [[maybe_unused]] ssize_t n = write(signal_pipe[1], &byte, 1);
}

}  // namespace

int InstallSignalPipe() {
  if (pipe2(signal_pipe, O_NONBLOCK | O_CLOEXEC) != 0) return -1;
  signal(SIGPIPE, SIG_IGN);  // a closed stdout shows up as EPIPE instead of killing us
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  const bool installed = sigaction(SIGTERM, &action, nullptr) == 0 &&
                         sigaction(SIGINT, &action, nullptr) == 0 &&
                         sigaction(SIGHUP, &action, nullptr) == 0;
  return installed ? signal_pipe[0] : -1;
}

}  // namespace keel
