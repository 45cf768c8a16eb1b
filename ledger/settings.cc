#include "ledger/settings.h"

namespace keel {

namespace {

void Upsert(Database& db, std::string_view name, std::string_view value, int64_t now_ms,
            std::string_view who) {
  db.Prepare(
        "INSERT INTO settings(name, value, updated_ms, updated_by) VALUES(?1, ?2, ?3, ?4) "
        "ON CONFLICT(name) DO UPDATE SET value = excluded.value, "
        "updated_ms = excluded.updated_ms, updated_by = excluded.updated_by")
      .Bind(1, name)
      .Bind(2, value)
      .Bind(3, now_ms)
      .Bind(4, who)
      .Run();
}

}  // namespace

std::optional<Setting> ReadSetting(Database& db, std::string_view name) {
  Statement row = db.Prepare("SELECT value, updated_ms, updated_by FROM settings WHERE name = ?1");
  row.Bind(1, name);
  if (!row.Step()) return std::nullopt;
  return Setting{row.Text(0), row.Int64(1), row.Text(2)};
}

void WriteSetting(Database& db, std::string_view name, std::string_view value, int64_t now_ms,
                  std::string_view who) {
  WriteTransaction txn(db);
  Upsert(db, name, value, now_ms, who);
  txn.Commit();
}

std::string UpdateSetting(
    Database& db, std::string_view name, int64_t now_ms, std::string_view who,
    const std::function<std::optional<std::string>(const std::optional<Setting>&)>& next) {
  WriteTransaction txn(db);
  const std::optional<Setting> current = ReadSetting(db, name);
  std::optional<std::string> value = next(current);
  if (value) Upsert(db, name, *value, now_ms, who);
  txn.Commit();
  if (value) return *value;
  return current ? current->value : std::string();
}

}  // namespace keel
