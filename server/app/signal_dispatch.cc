#include "server/app/signal_dispatch.h"

#include <signal.h>
#include <unistd.h>

namespace keel {

void SignalDispatch::Handle(int signo) {
  if (signo == SIGHUP) {
    actions_.reload_policy();
    return;
  }
  // The first signal drains like EOF; a second one ends the grace at once.
  if (++stop_signals_ == 1) {
    actions_.begin_shutdown(signo == SIGINT ? "SIGINT" : "SIGTERM");
  } else {
    actions_.shutdown_now();
  }
}

void SignalDispatch::Drain(int fd) {
  char byte;
  while (read(fd, &byte, 1) == 1) Handle(byte);
}

}  // namespace keel
