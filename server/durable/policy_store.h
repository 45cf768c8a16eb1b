// The policy in the database: the current and previous versions in the settings table, so
// `keel policy show [--previous]` can print them from a shell (BUD-1).
//
// Thread-safety: the caller's connection; no state of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ledger/database.h"
#include "server/policy/policy.h"

namespace keel {

// Records `policy` as the current one; the one it replaces becomes the previous one when
// their versions differ. Throws SqliteError.
void RecordPolicy(Database& db, const Policy& policy, int64_t now_ms, const std::string& who);
// The stored current (or previous) policy as pretty JSON; nullopt when none was recorded.
std::optional<std::string> StoredPolicy(Database& db, bool previous);

}  // namespace keel
