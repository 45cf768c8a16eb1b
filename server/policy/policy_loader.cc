#include "server/policy/policy_loader.h"

#include <fstream>
#include <sstream>

#include "ledger/settings.h"
#include "server/policy/policy_json.h"

namespace keel {
namespace {

constexpr const char* kCurrent = "policy_current";
constexpr const char* kPrevious = "policy_previous";

}  // namespace

LoadedPolicy LoadPolicyFile(const std::string& path) {
  LoadedPolicy loaded;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    loaded.problems.push_back(path + ": cannot read the policy file");
    return loaded;
  }
  std::ostringstream text;
  text << in.rdbuf();
  PolicyParseResult parsed = ParsePolicy(text.str());
  if (!parsed.policy) {
    loaded.problems = std::move(parsed.problems);
    return loaded;
  }
  loaded.policy = std::make_shared<const Policy>(std::move(*parsed.policy));
  return loaded;
}

void RecordPolicy(Database& db, const Policy& policy, int64_t now_ms, const std::string& who) {
  const std::string json = PolicyToJson(policy).dump();
  const std::optional<Setting> current = ReadSetting(db, kCurrent);
  if (current && current->value == json) return;
  if (current) {
    const nlohmann::json old = nlohmann::json::parse(current->value, nullptr, false);
    if (!old.is_discarded() && old.value("version", "") != policy.version) {
      WriteSetting(db, kPrevious, current->value, current->updated_ms, current->updated_by);
    }
  }
  WriteSetting(db, kCurrent, json, now_ms, who);
}

std::optional<std::string> StoredPolicy(Database& db, bool previous) {
  const std::optional<Setting> setting = ReadSetting(db, previous ? kPrevious : kCurrent);
  if (!setting) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(setting->value, nullptr, false);
  return json.is_discarded() ? setting->value : json.dump(2);
}

}  // namespace keel
