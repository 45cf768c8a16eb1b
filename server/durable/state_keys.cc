#include "server/durable/state_keys.h"

#include <nlohmann/json.hpp>

#include "ledger/settings.h"
#include "protocol/hex.h"
#include "protocol/json_rpc.h"
#include "server/runtime/random_hex.h"

namespace keel {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kSetting = "mrtr.state_keys";
constexpr size_t kKeyBytes = 32;

std::string NewKeyHex() { return RandomHex(kKeyBytes); }

// The stored keys as they are, or nullopt when the row is absent or unreadable.
std::optional<Json> Stored(const std::optional<Setting>& setting) {
  if (!setting) return std::nullopt;
  Json json = Json::parse(setting->value, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("current") || !json["current"].is_string() ||
      !json.contains("created_ms") || !json["created_ms"].is_number_integer()) {
    return std::nullopt;
  }
  return json;
}

std::string KeyBytes(const Json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_string()) return std::string();
  return HexDecode(it->get<std::string>()).value_or(std::string());
}

}  // namespace

StateKeys LoadStateKeys(Database& db, int64_t now_ms, int64_t rotate_after_ms) {
  const std::string value = UpdateSetting(
      db, kSetting, now_ms, "keel",
      [&](const std::optional<Setting>& setting) -> std::optional<std::string> {
        const std::optional<Json> stored = Stored(setting);
        if (stored && now_ms - (*stored)["created_ms"].get<int64_t>() < rotate_after_ms) {
          return std::nullopt;  // current and young enough: keep
        }
        Json next = {{"current", NewKeyHex()}, {"created_ms", now_ms}};
        if (stored) next["previous"] = (*stored)["current"];
        return DumpCompact(next);
      });
  const Json json = Json::parse(value, nullptr, /*allow_exceptions=*/false);
  StateKeys keys{KeyBytes(json, "current"), KeyBytes(json, "previous")};
  if (keys.current.size() != kKeyBytes) return EphemeralStateKeys();  // cannot happen
  return keys;
}

StateKeys EphemeralStateKeys() {
  return StateKeys{HexDecode(NewKeyHex()).value_or(std::string()), std::string()};
}

}  // namespace keel
