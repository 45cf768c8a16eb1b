#include "ledger/database.h"

#include <sqlite3.h>

namespace keel {

std::unique_ptr<Database> Database::Open(const std::string& path, std::string* error) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    *error = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close_v2(raw);
    return nullptr;
  }
  std::unique_ptr<Database> db(new Database(raw));
  sqlite3_busy_timeout(raw, 5000);
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                             "PRAGMA foreign_keys=ON"}) {
    if (std::string e = db->Exec(pragma); !e.empty()) {
      *error = e;
      return nullptr;
    }
  }
  return db;
}

Database::~Database() { sqlite3_close_v2(db_); }

std::string Database::Exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return {};
  std::string error = message ? message : "unknown SQLite error";
  sqlite3_free(message);
  return error;
}

std::string Database::Pragma(const std::string& name) {
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "PRAGMA " + name;
  std::string value;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    if (text) value = reinterpret_cast<const char*>(text);
  }
  sqlite3_finalize(stmt);
  return value;
}

}  // namespace keel
