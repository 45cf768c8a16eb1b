// keel --version (ADO-1): the version and the commit the binary was built from.
#include "server/app/build_commit.h"

#include <regex>
#include <string>

#include <catch2/catch.hpp>

namespace keel::build_commit_test {
namespace {

TEST_CASE("the version text names the version and a short commit or unknown (ADO-1)") {
  const std::string commit = KeelCommit();
  CHECK(std::regex_match(commit, std::regex("[0-9a-f]{7,}|unknown")));
  CHECK(KeelVersionText() == std::string("keel ") + KEEL_VERSION + " (commit " + commit + ")");
}

}  // namespace
}  // namespace keel::build_commit_test
