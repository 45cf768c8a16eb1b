// Loading the resilience policy file (--policy FILE; issue 6 item 2, BUD-1), and keeping
// the current and previous versions in the settings table so `keel policy show
// [--previous]` can print them from a shell.
//
// Thread-safety: pure functions; the setting functions use the caller's connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ledger/database.h"
#include "server/policy/policy.h"

namespace keel {

struct LoadedPolicy {
  PolicyHandle policy;                // set exactly when problems is empty
  std::vector<std::string> problems;  // every one, each naming the field (or the file)
};
// Reads and validates `path` completely (a file that cannot be read is one problem).
LoadedPolicy LoadPolicyFile(const std::string& path);

// Records `policy` as the current one; the one it replaces becomes the previous one when
// their versions differ. Throws SqliteError.
void RecordPolicy(Database& db, const Policy& policy, int64_t now_ms, const std::string& who);
// The stored current (or previous) policy as pretty JSON; nullopt when none was recorded.
std::optional<std::string> StoredPolicy(Database& db, bool previous);

}  // namespace keel
