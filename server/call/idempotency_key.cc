#include "server/call/idempotency_key.h"

namespace keel {
namespace {

constexpr size_t kMaxKeyLength = 255;  // as the problem text says

}  // namespace

std::string IdempotencyKey(const Json& meta, const Json& arguments, std::string* problem) {
  std::string key;
  auto take = [&](const Json& value, const char* where) {
    if (!value.is_string() || value.get_ref<const std::string&>().empty() ||
        value.get_ref<const std::string&>().size() > kMaxKeyLength) {
      *problem = std::string(where) + " must be a string of 1 to 255 characters";
      return;
    }
    const std::string& given = value.get_ref<const std::string&>();
    if (!key.empty() && key != given) {
      *problem = "_meta[\"dev.keel/idempotency-key\"] and arguments.idempotencyKey differ";
      return;
    }
    key = given;
  };
  if (meta.is_object()) {
    const auto it = meta.find("dev.keel/idempotency-key");
    if (it != meta.end()) take(*it, "_meta[\"dev.keel/idempotency-key\"]");
  }
  if (problem->empty() && arguments.is_object()) {
    const auto it = arguments.find("idempotencyKey");
    if (it != arguments.end()) take(*it, "arguments.idempotencyKey");
  }
  return problem->empty() ? key : std::string();
}

std::string ApprovalScopedKey(std::string key, const Json& arguments) {
  if (!arguments.is_object()) return key;
  const auto it = arguments.find("approval_id");
  if (it == arguments.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return key;
  }
  const std::string scope = "approval:" + it->get<std::string>();
  return key.empty() ? scope : key + "|" + scope;
}

CallKey CallKeyOf(const Json& meta, const Json& arguments) {
  CallKey call;
  call.key = ApprovalScopedKey(IdempotencyKey(meta, arguments, &call.problem), arguments);
  return call;
}

}  // namespace keel
