// SignalDispatch: what each signal means to a serving keel. SIGHUP reloads the resilience
// policy, any number of times. The first SIGTERM or SIGINT stops serving the way stdin EOF
// does (no new input; in-flight calls get the shutdown grace); a second one ends the grace
// at once. SIGHUP does not count towards the second signal.
//
// Thread: the loop thread (the bytes come from the signal pipe, signal_pipe.h).
#pragma once

#include <functional>
#include <string_view>
#include <utility>

namespace keel {

class SignalDispatch {
 public:
  struct Actions {
    std::function<void()> reload_policy;
    std::function<void(std::string_view why)> begin_shutdown;  // why: "SIGTERM" or "SIGINT"
    std::function<void()> shutdown_now;
  };

  explicit SignalDispatch(Actions actions) : actions_(std::move(actions)) {}

  // One signal, by number (other numbers count as SIGTERM).
  void Handle(int signo);
  // Handles every byte the non-blocking pipe `fd` holds now, in order.
  void Drain(int fd);

 private:
  Actions actions_;
  int stop_signals_ = 0;  // SIGTERM and SIGINT seen
};

}  // namespace keel
