// Failure classification (RET-1): every row of the type table, the failure_class override,
// the retry-after hint (only a non-negative integer counts), and success as nullopt.
#include "server/policy/failure_classify.h"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::failure_classify_test {
namespace {

using Json = nlohmann::json;
using F = FailureClass;

Json Failed(Json error) {
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", "failed"}}})},
              {"isError", true},
              {"structuredContent", Json{{"error", std::move(error)}}}};
}

Json FailedType(const std::string& type) { return Failed(Json{{"type", type}}); }

struct Row {
  const char* type;
  FailureClass failure;
};

// The table of failure_classify.h, one row per type it names, plus examples of "anything else".
const std::vector<Row> kTable = {
    {"not_sent", F::kNotSent},
    {"ledger_busy", F::kNotSent},
    {"transport_unavailable", F::kRejectedTransient},
    {"backend_429", F::kRejectedTransient},
    {"backend_503", F::kRejectedTransient},
    {"rate_limited", F::kRejectedTransient},
    {"idempotency_in_progress", F::kRejectedTransient},
    {"attempt_timeout", F::kAmbiguous},
    {"lost_response", F::kAmbiguous},
    {"ambiguous", F::kAmbiguous},
    {"invalid_arguments", F::kRejectedPermanent},
    {"policy_denied", F::kRejectedPermanent},
    {"approval_required", F::kRejectedPermanent},
    {"kill_switch", F::kRejectedPermanent},
    {"backend_404", F::kRejectedPermanent},
    {"backend_400", F::kRejectedPermanent},
    {"something_new", F::kRejectedPermanent},
};

TEST_CASE("every error type in the table maps to its failure class", "[retry]") {
  for (const Row& row : kTable) {
    CAPTURE(row.type);
    const auto failure = ClassifyResult(FailedType(row.type));
    REQUIRE(failure.has_value());
    CHECK(failure->failure == row.failure);
    CHECK(failure->type == row.type);
    CHECK_FALSE(failure->retry_after_ms.has_value());
  }
}

TEST_CASE("an error result without a structured error is a permanent tool_error", "[retry]") {
  const Json bare = {{"content", Json::array()}, {"isError", true}};
  const Json no_error = {{"isError", true}, {"structuredContent", Json{{"x", 1}}}};
  const Json error_not_object = {{"isError", true}, {"structuredContent", Json{{"error", "boom"}}}};
  const Json no_type = Failed(Json{{"message", "boom"}});
  for (const Json& result : {bare, no_error, error_not_object, no_type}) {
    CAPTURE(result.dump());
    const auto failure = ClassifyResult(result);
    REQUIRE(failure.has_value());
    CHECK(failure->failure == F::kRejectedPermanent);
    CHECK(failure->type == "tool_error");
  }
}

TEST_CASE("a result without isError true is a success and classifies as nullopt", "[retry]") {
  CHECK_FALSE(ClassifyResult(Json{{"content", Json::array()}}).has_value());
  CHECK_FALSE(ClassifyResult(Json{{"content", Json::array()}, {"isError", false}}).has_value());
  // A structured error on a result that does not say isError is still a success.
  Json not_flagged = FailedType("backend_503");
  not_flagged["isError"] = false;
  CHECK_FALSE(ClassifyResult(not_flagged).has_value());
}

TEST_CASE("failure_class overrides the class the type implies", "[retry]") {
  const auto ambiguous =
      ClassifyResult(Failed(Json{{"type", "invalid_arguments"}, {"failure_class", "ambiguous"}}));
  REQUIRE(ambiguous.has_value());
  CHECK(ambiguous->failure == F::kAmbiguous);
  CHECK(ambiguous->type == "invalid_arguments");

  const auto not_sent =
      ClassifyResult(Failed(Json{{"type", "attempt_timeout"}, {"failure_class", "not_sent"}}));
  REQUIRE(not_sent.has_value());
  CHECK(not_sent->failure == F::kNotSent);

  const auto transient =
      ClassifyResult(Failed(Json{{"type", "custom"}, {"failure_class", "rejected_transient"}}));
  REQUIRE(transient.has_value());
  CHECK(transient->failure == F::kRejectedTransient);

  const auto permanent = ClassifyResult(
      Failed(Json{{"type", "backend_503"}, {"failure_class", "rejected_permanent"}}));
  REQUIRE(permanent.has_value());
  CHECK(permanent->failure == F::kRejectedPermanent);
}

TEST_CASE("an unknown or non-string failure_class is ignored and the type decides", "[retry]") {
  for (const Json& cls : {Json("maybe"), Json("AMBIGUOUS"), Json(3), Json(nullptr)}) {
    CAPTURE(cls.dump());
    const auto failure =
        ClassifyResult(Failed(Json{{"type", "backend_503"}, {"failure_class", cls}}));
    REQUIRE(failure.has_value());
    CHECK(failure->failure == F::kRejectedTransient);
  }
}

TEST_CASE("retry_after_ms is read when it is a non-negative integer", "[retry]") {
  const auto hint = ClassifyResult(Failed(Json{{"type", "backend_429"}, {"retry_after_ms", 1500}}));
  REQUIRE(hint.has_value());
  CHECK(hint->retry_after_ms == std::optional<int64_t>(1500));

  const auto zero = ClassifyResult(Failed(Json{{"type", "backend_429"}, {"retry_after_ms", 0}}));
  REQUIRE(zero.has_value());
  CHECK(zero->retry_after_ms == std::optional<int64_t>(0));
}

TEST_CASE("a negative or non-integer retry_after_ms is ignored", "[retry]") {
  for (const Json& bad : {Json(-1), Json(1.5), Json("1500"), Json(true), Json(nullptr),
                          Json(18446744073709551615ULL)}) {
    CAPTURE(bad.dump());
    const auto failure =
        ClassifyResult(Failed(Json{{"type", "backend_429"}, {"retry_after_ms", bad}}));
    REQUIRE(failure.has_value());
    CHECK(failure->failure == F::kRejectedTransient);
    CHECK_FALSE(failure->retry_after_ms.has_value());
  }
}

}  // namespace
}  // namespace keel::failure_classify_test
