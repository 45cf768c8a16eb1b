// What each signal means to a serving keel: SIGHUP reloads the policy (any number of times,
// never stopping anything); the first SIGTERM or SIGINT drains like stdin EOF, a second one
// ends the grace at once. Driven byte by byte, as the signal pipe delivers them.
#include "server/app/signal_dispatch.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::signal_dispatch_test {
namespace {

// Records what the dispatch asked for, in order.
struct Recorder {
  std::vector<std::string> actions;
  SignalDispatch dispatch{{
      .reload_policy = [this] { actions.push_back("reload"); },
      .begin_shutdown =
          [this](std::string_view why) { actions.push_back("drain " + std::string(why)); },
      .shutdown_now = [this] { actions.push_back("now"); },
  }};
};

TEST_CASE("a SIGHUP reloads the policy and stops nothing, however often it comes") {
  Recorder r;
  r.dispatch.Handle(SIGHUP);
  r.dispatch.Handle(SIGHUP);
  CHECK(r.actions == std::vector<std::string>{"reload", "reload"});
}

TEST_CASE("the first SIGTERM drains and a second one ends the grace at once") {
  Recorder r;
  r.dispatch.Handle(SIGTERM);
  r.dispatch.Handle(SIGTERM);
  r.dispatch.Handle(SIGTERM);
  CHECK(r.actions == std::vector<std::string>{"drain SIGTERM", "now", "now"});
}

TEST_CASE("SIGINT names itself as the reason and counts like SIGTERM") {
  Recorder r;
  r.dispatch.Handle(SIGINT);
  r.dispatch.Handle(SIGTERM);
  CHECK(r.actions == std::vector<std::string>{"drain SIGINT", "now"});
}

TEST_CASE("a SIGHUP between two stop signals does not count as the second one") {
  Recorder r;
  r.dispatch.Handle(SIGTERM);
  r.dispatch.Handle(SIGHUP);
  r.dispatch.Handle(SIGINT);
  CHECK(r.actions == std::vector<std::string>{"drain SIGTERM", "reload", "now"});
}

TEST_CASE("Drain handles every signal waiting in the pipe, in order, and stops when it is empty") {
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  const char bytes[] = {SIGHUP, SIGTERM, SIGHUP};
  REQUIRE(write(fds[1], bytes, sizeof(bytes)) == static_cast<ssize_t>(sizeof(bytes)));
  Recorder r;
  r.dispatch.Drain(fds[0]);
  CHECK(r.actions == std::vector<std::string>{"reload", "drain SIGTERM", "reload"});
  r.dispatch.Drain(fds[0]);  // nothing more: returns at once
  CHECK(r.actions.size() == 3);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace keel::signal_dispatch_test
