#include "ledger/kill_switch.h"

namespace keel {
namespace {

constexpr std::string_view kSetting = "block_writes";

}  // namespace

KillSwitchState ReadKillSwitch(Database& db) {
  KillSwitchState state;
  try {
    Statement row =
        db.Prepare("SELECT value, updated_ms, updated_by FROM settings WHERE name = ?1");
    row.Bind(1, kSetting);
    if (row.Step()) {
      state.blocked = row.Text(0) == "on";
      state.updated_ms = row.Int64(1);
      state.updated_by = row.Text(2);
    }
  } catch (const SqliteError& e) {
    state.blocked = true;
    state.updated_by = std::string("unreadable: ") + e.what();
  }
  return state;
}

bool WritesBlocked(Database& db) { return ReadKillSwitch(db).blocked; }

void SetWritesBlocked(Database& db, bool blocked, int64_t now_ms, std::string_view who) {
  WriteTransaction txn(db);
  db.Prepare(
        "INSERT INTO settings(name, value, updated_ms, updated_by) VALUES(?1, ?2, ?3, ?4) "
        "ON CONFLICT(name) DO UPDATE SET value = excluded.value, "
        "updated_ms = excluded.updated_ms, updated_by = excluded.updated_by")
      .Bind(1, kSetting)
      .Bind(2, blocked ? "on" : "off")
      .Bind(3, now_ms)
      .Bind(4, who)
      .Run();
  txn.Commit();
}

}  // namespace keel
