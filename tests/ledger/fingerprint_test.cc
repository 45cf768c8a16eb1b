// Unit tests for ledger/fingerprint.h: what identifies a mutation's intent (IDEM-2).
#include "ledger/fingerprint.h"

#include <string>

#include <catch2/catch.hpp>

using keel::CanonicalJson;
using keel::Fingerprint;
using Json = nlohmann::json;

namespace fingerprint_test {

TEST_CASE("IDEM-2 the fingerprint does not depend on argument key order", "[ledger][IDEM-2]") {
  const Json a = Json::parse(R"({"account":"acct-1","cents":500,"memo":{"b":1,"a":2}})");
  const Json b = Json::parse(R"({"memo":{"a":2,"b":1},"cents":500,"account":"acct-1"})");
  CHECK(Fingerprint("charge", a) == Fingerprint("charge", b));
  CHECK(CanonicalJson(b) == R"({"account":"acct-1","cents":500,"memo":{"a":2,"b":1}})");
}

TEST_CASE("IDEM-2 the fingerprint leaves out idempotencyKey and _meta", "[ledger][IDEM-2]") {
  const Json plain = Json::parse(R"({"account":"acct-1","cents":500})");
  const Json keyed = Json::parse(
      R"({"account":"acct-1","cents":500,"idempotencyKey":"k-1","_meta":{"progressToken":7}})");
  const Json other_key = Json::parse(R"({"account":"acct-1","cents":500,"idempotencyKey":"k-2"})");
  CHECK(Fingerprint("charge", plain) == Fingerprint("charge", keyed));
  CHECK(Fingerprint("charge", plain) == Fingerprint("charge", other_key));
  // Nested keys of the same names are arguments like any other.
  const Json nested = Json::parse(R"({"account":"acct-1","cents":500,"x":{"_meta":1}})");
  CHECK(Fingerprint("charge", plain) != Fingerprint("charge", nested));
}

TEST_CASE("IDEM-2 the fingerprint binds the tool name and every argument value",
          "[ledger][IDEM-2]") {
  const Json args = Json::parse(R"({"account":"acct-1","cents":500})");
  CHECK(Fingerprint("charge", args) != Fingerprint("refund", args));
  CHECK(Fingerprint("charge", args) !=
        Fingerprint("charge", Json::parse(R"({"account":"acct-1","cents":501})")));
  CHECK(Fingerprint("charge", Json::parse(R"({"n":1})")) !=
        Fingerprint("charge", Json::parse(R"({"n":1.0})")));
  CHECK(Fingerprint("charge", Json::parse(R"({"n":1})")) !=
        Fingerprint("charge", Json::parse(R"({"n":"1"})")));
}

TEST_CASE("IDEM-2 the fingerprint is the SHA-256 of the canonical intent", "[ledger][IDEM-2]") {
  const Json args = Json::parse(R"({"cents":500,"account":"acct-1","idempotencyKey":"k"})");
  // Computed independently: printf '%s' '<canonical>' | sha256sum
  const std::string canonical = R"({"arguments":{"account":"acct-1","cents":500},"tool":"charge"})";
  CHECK(CanonicalJson({{"tool", "charge"},
                       {"arguments", {{"account", "acct-1"}, {"cents", 500}}}}) == canonical);
  CHECK(Fingerprint("charge", args) ==
        "4b11d12dd19226434a6eaccbbcd953195f4697f1470aa942c5a18c1ac5d82ef7");
  CHECK(Fingerprint("noop", Json::object()) ==
        "e18dd9f1dfae4a3fb65e5cdea31afb79713c532cc4bd9f2845b862fddee44973");
  CHECK(Fingerprint("noop", Json::object()).size() == 64);
}

}  // namespace fingerprint_test
