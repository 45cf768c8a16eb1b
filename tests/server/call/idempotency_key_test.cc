// The idempotency key of a call (idempotency_key.h): where it comes from, what makes it
// invalid, and how an approval scopes it — the one function admission and reconciliation share.
#include "server/call/idempotency_key.h"

#include <catch2/catch.hpp>

namespace keel::idempotency_key_test {

TEST_CASE("a call's key comes from _meta or the idempotencyKey argument, scoped by its approval",
          "[call][idempotency]") {
  CHECK(CallKeyOf(Json{{"dev.keel/idempotency-key", "k1"}}, Json::object()).key == "k1");
  CHECK(CallKeyOf(Json(), Json{{"idempotencyKey", "k2"}}).key == "k2");
  CHECK(CallKeyOf(Json{{"dev.keel/idempotency-key", "k3"}}, Json{{"idempotencyKey", "k3"}}).key ==
        "k3");
  CHECK(CallKeyOf(Json(), Json{{"idempotencyKey", "k4"}, {"approval_id", "ap"}}).key ==
        "k4|approval:ap");
  CHECK(CallKeyOf(Json(), Json{{"approval_id", "ap"}}).key == "approval:ap");
  const CallKey none = CallKeyOf(Json(), Json::object());
  CHECK(none.key.empty());
  CHECK(none.problem.empty());
}

TEST_CASE("an invalid or contradictory key is a problem, and no key of the client's counts",
          "[call][idempotency]") {
  const CallKey empty = CallKeyOf(Json(), Json{{"idempotencyKey", ""}});
  CHECK(empty.key.empty());
  CHECK(empty.problem == "arguments.idempotencyKey must be a string of 1 to 255 characters");
  const CallKey two =
      CallKeyOf(Json{{"dev.keel/idempotency-key", "a"}}, Json{{"idempotencyKey", "b"}});
  CHECK(two.problem == "_meta[\"dev.keel/idempotency-key\"] and arguments.idempotencyKey differ");
  CHECK_FALSE(
      CallKeyOf(Json{{"dev.keel/idempotency-key", std::string(256, 'x')}}, Json()).problem.empty());
  // The approval still scopes the call, so it runs once per approval.
  CHECK(CallKeyOf(Json(), Json{{"idempotencyKey", 7}, {"approval_id", "ap"}}).key == "approval:ap");
}

}  // namespace keel::idempotency_key_test
