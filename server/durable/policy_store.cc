#include "server/durable/policy_store.h"

#include "ledger/settings.h"
#include "protocol/bounded_json.h"
#include "server/policy/policy_json.h"

namespace keel {
namespace {

constexpr const char* kCurrent = "policy_current";
constexpr const char* kPrevious = "policy_previous";

}  // namespace

void RecordPolicy(Database& db, const Policy& policy, int64_t now_ms, const std::string& who) {
  const std::string json = PolicyToJson(policy).dump();
  const std::optional<Setting> current = ReadSetting(db, kCurrent);
  if (current && current->value == json) return;
  if (current) {
    // The stored text is the file's, which anyone may have written: read it bounded
    // (bounded_json.h).
    const BoundedJson old = ParseBoundedJson(current->value);
    if (old.value.is_object() && old.value.value("version", "") != policy.version) {
      WriteSetting(db, kPrevious, current->value, current->updated_ms, current->updated_by);
    }
  }
  WriteSetting(db, kCurrent, json, now_ms, who);
}

std::optional<std::string> StoredPolicy(Database& db, bool previous) {
  const std::optional<Setting> setting = ReadSetting(db, previous ? kPrevious : kCurrent);
  if (!setting) return std::nullopt;
  // Shown as stored when it cannot be read (bounded_json.h: a deep value would recurse in
  // dump), else pretty-printed.
  const BoundedJson json = ParseBoundedJson(setting->value);
  return json.ok() ? json.value.dump(2) : setting->value;
}

}  // namespace keel
