#include "ledger/kill_switch.h"

#include "ledger/settings.h"

namespace keel {
namespace {

constexpr std::string_view kSetting = "block_writes";

}  // namespace

KillSwitchState ReadKillSwitch(Database& db) {
  KillSwitchState state;
  try {
    if (const std::optional<Setting> setting = ReadSetting(db, kSetting)) {
      state.blocked = setting->value == "on";
      state.updated_ms = setting->updated_ms;
      state.updated_by = setting->updated_by;
    }
  } catch (const SqliteError& e) {
    state.blocked = true;
    state.unreadable = true;
    state.updated_by = std::string("unreadable: ") + e.what();
  }
  return state;
}

bool WritesBlocked(Database& db) { return ReadKillSwitch(db).blocked; }

void SetWritesBlocked(Database& db, bool blocked, int64_t now_ms, std::string_view who) {
  WriteSetting(db, kSetting, blocked ? "on" : "off", now_ms, who);
}

}  // namespace keel
