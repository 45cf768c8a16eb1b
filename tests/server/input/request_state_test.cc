// The sealed requestState of multi round-trip requests (MRTR-1): keel opens only what it
// sealed, for the request it sealed it for, before it expires; a rotated key still opens
// the rounds in flight.
#include "server/input/request_state.h"

#include <string>
#include <variant>

#include <catch2/catch.hpp>

namespace keel::request_state_test {
namespace {

const StateKeys kKeys{std::string(32, 'a'), std::string()};

StateClaims Claims() {
  StateClaims claims;
  claims.method = "tools/call";
  claims.name = "charge_account";
  claims.args_digest = "d1";
  claims.round = 2;
  claims.expires_ms = 1000;
  claims.nonce = "n1";
  return claims;
}

std::string Why(const std::variant<StateClaims, std::string>& opened) {
  REQUIRE(std::holds_alternative<std::string>(opened));
  return std::get<std::string>(opened);
}

}  // namespace

TEST_CASE("a sealed state opens to the same claims before it expires", "[MRTR-1]") {
  const std::string token = SealState(Claims(), kKeys);
  CHECK(token.rfind("v1.", 0) == 0);
  const auto opened = OpenState(token, kKeys, 999);
  REQUIRE(std::holds_alternative<StateClaims>(opened));
  CHECK(std::get<StateClaims>(opened) == Claims());
  CHECK(Why(OpenState(token, kKeys, 1000)) == "expired");
}

TEST_CASE("a state changed anywhere, or sealed with another key, is refused", "[MRTR-1]") {
  const std::string token = SealState(Claims(), kKeys);
  CHECK(Why(OpenState(token + "-TAMPERED", kKeys, 0)) == "not sealed by this server");
  std::string flipped = token;
  flipped[5] = flipped[5] == '0' ? '1' : '0';  // inside the claims
  CHECK(Why(OpenState(flipped, kKeys, 0)) == "not sealed by this server");
  const StateKeys other{std::string(32, 'b'), std::string()};
  CHECK(Why(OpenState(token, other, 0)) == "not sealed by this server");
}

TEST_CASE("after a rotation the previous key still opens a round in flight", "[MRTR-1]") {
  const std::string token = SealState(Claims(), kKeys);
  const StateKeys rotated{std::string(32, 'c'), kKeys.current};
  CHECK(std::holds_alternative<StateClaims>(OpenState(token, rotated, 0)));
  const StateKeys twice{std::string(32, 'd'), std::string(32, 'c')};
  CHECK(Why(OpenState(token, twice, 0)) == "not sealed by this server");
}

TEST_CASE("tokens that are not keel's states are malformed, never a crash", "[MRTR-1]") {
  for (const std::string& token :
       {std::string(), std::string("v1."), std::string("v1.."), std::string("v2.00.00"),
        std::string("eyJ0b29sIjoi"), std::string(5000, 'v'), std::string("v1.zz.")}) {
    const auto opened = OpenState(token, kKeys, 0);
    CHECK(std::holds_alternative<std::string>(opened));
  }
}

TEST_CASE("a state is bound to its method, tool and arguments", "[MRTR-1]") {
  const StateClaims claims = Claims();
  CHECK(StateMatches(claims, "tools/call", "charge_account", "d1"));
  CHECK_FALSE(StateMatches(claims, "prompts/get", "charge_account", "d1"));
  CHECK_FALSE(StateMatches(claims, "tools/call", "other", "d1"));
  CHECK_FALSE(StateMatches(claims, "tools/call", "charge_account", "d2"));
}

TEST_CASE("two rounds of one intent get different states", "[MRTR-1]") {
  StateClaims second = Claims();
  second.nonce = "n2";
  CHECK(SealState(Claims(), kKeys) != SealState(second, kKeys));
}

}  // namespace keel::request_state_test
