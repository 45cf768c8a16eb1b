#include "server/policy/failure_classify.h"

#include <limits>
#include <string_view>

#include "protocol/tool_result.h"

namespace keel {
namespace {

using Json = nlohmann::json;

// The table in the header: the class an error type implies.
FailureClass ClassOfType(std::string_view type) {
  if (type == "not_sent" || type == "ledger_busy") return FailureClass::kNotSent;
  if (type == "transport_unavailable" || type == "backend_429" || type == "backend_503" ||
      type == "rate_limited" || type == "idempotency_in_progress") {
    return FailureClass::kRejectedTransient;
  }
  if (type == "attempt_timeout" || type == "lost_response" || type == "ambiguous") {
    return FailureClass::kAmbiguous;
  }
  return FailureClass::kRejectedPermanent;
}

std::optional<FailureClass> ParseFailureClass(std::string_view name) {
  for (FailureClass c : {FailureClass::kNotSent, FailureClass::kRejectedTransient,
                         FailureClass::kRejectedPermanent, FailureClass::kAmbiguous}) {
    if (FailureClassName(c) == name) return c;
  }
  return std::nullopt;
}

// A non-negative integer that fits int64; anything else (negative, fractional, a string,
// a number too large) is ignored, as an invalid Retry-After header would be.
std::optional<int64_t> RetryAfterMs(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) {
    const auto v = value.get<int64_t>();
    if (v < 0) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

// The status of a type "backend_<status>": one to three digits, nothing else.
std::optional<int> BackendStatus(std::string_view type) {
  constexpr std::string_view kPrefix = "backend_";
  if (type.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const std::string_view digits = type.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 3) return std::nullopt;
  int status = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    status = status * 10 + (c - '0');
  }
  return status;
}

}  // namespace

std::optional<AttemptFailure> ClassifyResult(const Json& result) {
  if (!result.is_object()) return std::nullopt;
  const auto is_error = result.find("isError");
  if (is_error == result.end() || !is_error->is_boolean() || !is_error->get<bool>()) {
    return std::nullopt;
  }

  AttemptFailure failure;
  failure.type = "tool_error";
  const Json* error = StructuredErrorOf(result);
  if (error == nullptr) return failure;

  if (const auto type = error->find("type"); type != error->end() && type->is_string()) {
    failure.type = type->get<std::string>();
  }
  failure.failure = ClassOfType(failure.type);
  failure.backend_status = BackendStatus(failure.type);
  if (const auto cls = error->find("failure_class"); cls != error->end() && cls->is_string()) {
    if (auto parsed = ParseFailureClass(cls->get<std::string>())) failure.failure = *parsed;
  }
  if (const auto hint = error->find("retry_after_ms"); hint != error->end()) {
    failure.retry_after_ms = RetryAfterMs(*hint);
  }
  return failure;
}

}  // namespace keel
