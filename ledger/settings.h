// Operator settings that survive restarts, one row per name in the settings table (schema
// 3): the kill switch for writes, and the current and previous resilience policy.
// Thread-safety: none; use the calling thread's own connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ledger/database.h"

namespace keel {

struct Setting {
  std::string value;
  int64_t updated_ms = 0;
  std::string updated_by;
};

// Throws SqliteError (a missing table included).
std::optional<Setting> ReadSetting(Database& db, std::string_view name);
// One write transaction. Throws SqliteError.
void WriteSetting(Database& db, std::string_view name, std::string_view value, int64_t now_ms,
                  std::string_view who);

}  // namespace keel
