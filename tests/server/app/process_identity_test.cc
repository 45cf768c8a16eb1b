// The names a serving keel gives itself: a correlation prefix random per process, and an
// owner name that carries the pid.
#include "server/app/process_identity.h"

#include <unistd.h>

#include <cctype>
#include <string>

#include <catch2/catch.hpp>

namespace keel::process_identity_test {
namespace {

TEST_CASE("a correlation prefix is k and eight hex digits, fresh each time") {
  const std::string prefix = CorrelationPrefix();
  REQUIRE(prefix.size() == 9);
  CHECK(prefix[0] == 'k');
  for (size_t i = 1; i < prefix.size(); ++i) CHECK(std::isxdigit(prefix[i]));
  CHECK(CorrelationPrefix() != prefix);
}

TEST_CASE("the owner name carries this process's pid and a random prefix") {
  const std::string owner = ProcessOwner();
  const std::string head = "keel-" + std::to_string(getpid()) + "-k";
  CHECK(owner.rfind(head, 0) == 0);
  CHECK(owner.size() == head.size() + 8);
  CHECK(ProcessOwner() != owner);
}

}  // namespace
}  // namespace keel::process_identity_test
