// The kill switch for writes (OPS-2): one persisted setting, so it survives restarts and a
// shell can flip it while keel runs (`keel admin block-writes on|off`). Every write-class
// tool call reads it just before it would start; keel's in-database mutations read it inside
// their own write transaction instead (MutationLedger::Options::kill_switch), where no write
// can slip in between the check and the commit. A blocked call leaves no ledger claim.
//
// Thread-safety: none; use the calling thread's own connection.
// Errors: WritesBlocked() fails closed (reports blocked) if the setting cannot be read;
// SetWritesBlocked() throws SqliteError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ledger/database.h"

namespace keel {

struct KillSwitchState {
  bool blocked = false;
  bool unreadable = false;  // blocked because the setting could not be read (`updated_by` says why)
  int64_t updated_ms = 0;   // 0: never set
  std::string updated_by;   // who set it ("keel admin (pid 123)", "--block-writes")
};

// The current state. A file without the setting: not blocked. A read that fails: blocked
// (a write must not slip through because the switch could not be read).
KillSwitchState ReadKillSwitch(Database& db);
bool WritesBlocked(Database& db);
// Sets it in one write transaction.
void SetWritesBlocked(Database& db, bool blocked, int64_t now_ms, std::string_view who);

}  // namespace keel
