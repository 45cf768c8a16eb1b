// Operator settings that survive restarts, one row per name in the settings table (schema
// 3): the kill switch for writes, and the current and previous resilience policy.
// Thread-safety: none; use the calling thread's own connection.
#pragma once

#include <cstdint>
#include <functional>
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
// Reads and, when `next` returns a value, writes setting `name` in one write transaction, so
// processes sharing the database never both write a first value. `next` gets the current
// setting (nullopt: none) and returns the new value, or nullopt to keep it. Returns the
// value in force afterwards (empty when there is none). Throws SqliteError.
std::string UpdateSetting(
    Database& db, std::string_view name, int64_t now_ms, std::string_view who,
    const std::function<std::optional<std::string>(const std::optional<Setting>&)>& next);

}  // namespace keel
