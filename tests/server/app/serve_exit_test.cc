// What keel says at exit about work it will not wait for: tool calls that ignored their
// cancellation, and jobs nothing cancelled (the client closed stdout).
#include "server/app/serve_exit.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::serve_exit_test {
namespace {

using Lines = std::vector<std::string>;

TEST_CASE("tool calls that ignored their cancellation are named at exit") {
  CHECK(UnfinishedWorkWarnings(2, 2, false) ==
        Lines{"2 tool call(s) did not stop after cancellation; not waiting for them"});
}

TEST_CASE("jobs still running when the client closed stdout say they were cancelled") {
  CHECK(UnfinishedWorkWarnings(0, 3, true) ==
        Lines{"3 job(s) still running when the client closed stdout (cancelled, not stopped "
              "yet); not waiting for them"});
}

TEST_CASE("held calls and other running jobs are reported separately") {
  CHECK(UnfinishedWorkWarnings(1, 4, false) ==
        Lines{"1 tool call(s) did not stop after cancellation; not waiting for them",
              "3 job(s) still running; not waiting for them"});
}

TEST_CASE("an idle pool leaves nothing to report") {
  CHECK(UnfinishedWorkWarnings(0, 0, true).empty());
}

}  // namespace
}  // namespace keel::serve_exit_test
