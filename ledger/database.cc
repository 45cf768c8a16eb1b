#include "ledger/database.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "ledger/pg_database.h"

namespace keel {

namespace {

// The busy timeout a fresh connection starts with, until a caller bounds it by its deadline.
constexpr int kDefaultBusyTimeoutMs = 5000;

[[noreturn]] void Throw(sqlite3* db, int rc, std::string_view what) {
  const int code = db ? sqlite3_extended_errcode(db) : rc;
  std::string message(what);
  message += ": ";
  message += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(code, message);
}

void WarnIfWalResetBug() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (Database::HasWalResetBug(sqlite3_libversion_number())) {
      spdlog::info(
          "SQLite {} has the WAL-reset bug (3.7.0-3.51.2; fixed in 3.51.3, 3.50.7, "
          "3.44.6): two connections checkpointing and writing at once can corrupt the "
          "database; upgrade libsqlite3",
          sqlite3_libversion());
    }
  });
}

// SQLite names the write-ahead log and its shared-memory index after the name the database
// was opened by. Two names of one file (hard links) get two WALs and two lock files, so
// connections through different names neither see each other's commits nor wait for each
// other's write lock: two keels would each run every key, and a checkpoint would overwrite
// the other's acknowledged writes (IDEM-3). A symlink is fine: SQLite resolves it
// to the one real name. So a link count above one is refused, on the database file and on a
// side file that exists (one hard-linked to another database's would mix their logs).
// Empty when the file has one name.
std::string SecondNameProblem(sqlite3* db) {
  const char* name = sqlite3_db_filename(db, "main");
  if (name == nullptr || name[0] == '\0') return {};  // in-memory or temporary: no file
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string file = std::string(name) + suffix;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 || st.st_nlink <= 1) continue;  // absent side file too
    return file + " has " + std::to_string(st.st_nlink) +
           " hard links (names): SQLite keeps the write-ahead log per name, so keels using "
           "different names of one file would not see each other's writes and would each run "
           "every key; use one name (a symlink is fine) or a copy of the file";
  }
  return {};
}

// Runs `sql` on a fresh connection, retrying while the file is busy, for as long as the busy
// timeout. Switching a new file to WAL takes its exclusive lock; when two keels open one new
// file at once, SQLite may answer SQLITE_BUSY at once instead of calling the busy handler (the
// handler is skipped where waiting could deadlock), so the wait is done here: seen as
// "database is locked" from the second of two keels started together on one new --db.
std::string ExecRetryingBusy(SqliteDatabase& db, sqlite3* raw, const char* sql) {
  constexpr auto kPause = std::chrono::milliseconds(10);
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kDefaultBusyTimeoutMs);
  for (;;) {
    std::string error = db.Exec(sql);
    const int code = sqlite3_errcode(raw) & 0xff;
    if (error.empty() || (code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() >= until) {
      return error;
    }
    std::this_thread::sleep_for(kPause);
  }
}

// A cached sqlite3_stmt.
class SqliteCursor final : public StatementCursor {
 public:
  SqliteCursor(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteCursor() override { sqlite3_finalize(stmt_); }

  void Bind(int index, int64_t value) override { Check(sqlite3_bind_int64(stmt_, index, value)); }
  void Bind(int index, std::string_view value) override {
    // SQLITE_TRANSIENT: SQLite copies the bytes, so `value` need not outlive the step.
    Check(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                              SQLITE_UTF8));
  }
  void BindNull(int index) override { Check(sqlite3_bind_null(stmt_, index)); }
  bool Step() override {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const std::string sql = sqlite3_sql(stmt_) ? sqlite3_sql(stmt_) : "";
    Throw(db_, rc, sql);
  }
  int64_t Int64(int column) const override { return sqlite3_column_int64(stmt_, column); }
  std::string Text(int column) const override {
    // Copy now: the pointer dies at the next step, reset or type conversion.
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column));
  }
  bool IsNull(int column) const override {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  void Reset() noexcept override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

 private:
  void Check(int rc) const {
    if (rc != SQLITE_OK) Throw(db_, rc, "bind");
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

}  // namespace

Statement::~Statement() {
  if (cursor_ == nullptr) return;
  cursor_->Reset();
  cursor_->borrowed_ = false;
}

void Database::RunScript(std::span<const std::string_view> statements) {
  for (std::string_view sql : statements) Prepare(sql).Run();
}

Statement Database::Prepare(std::string_view sql) {
  auto it = statements_.find(std::string(sql));
  if (it == statements_.end()) {
    std::unique_ptr<StatementCursor> cursor = NewCursor(sql);  // throws when it does not compile
    it = statements_.emplace(std::string(sql), std::move(cursor)).first;
  }
  StatementCursor& cursor = *it->second;
  if (cursor.borrowed_) {
    throw SqliteError(SQLITE_MISUSE,
                      "prepare: a Statement of this SQL is still alive: " + std::string(sql));
  }
  cursor.borrowed_ = true;
  return Statement(&cursor);
}

bool Database::IsPostgresUrl(const std::string& spec) {
  return spec.rfind("postgresql://", 0) == 0 || spec.rfind("postgres://", 0) == 0;
}

int64_t Database::ClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Database::Describe(const std::string& spec) {
  if (!IsPostgresUrl(spec)) return spec;
  // scheme://user:password@host/...: the authority ends at the first '/' or '?', and the
  // password lies between the first ':' in it and its last '@' (a password may hold '@').
  const size_t start = spec.find("://") + 3;
  const size_t end = std::min(spec.find('/', start), spec.find('?', start));
  const size_t at = spec.rfind('@', end == std::string::npos ? std::string::npos : end);
  if (at == std::string::npos || at < start) return spec;
  const size_t colon = spec.find(':', start);
  if (colon == std::string::npos || colon > at) return spec;
  return spec.substr(0, colon + 1) + "***" + spec.substr(at);
}

std::unique_ptr<Database> Database::Open(const std::string& spec, std::string* error) {
  if (IsPostgresUrl(spec)) return PgDatabase::Connect(spec, error);
  return SqliteDatabase::Open(spec, error);
}

std::unique_ptr<SqliteDatabase> SqliteDatabase::Open(const std::string& path, std::string* error) {
  WarnIfWalResetBug();
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    *error = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close_v2(raw);
    return nullptr;
  }
  std::unique_ptr<SqliteDatabase> db(new SqliteDatabase(raw));
  // Before anything is read or written through this name.
  if (std::string problem = SecondNameProblem(raw); !problem.empty()) {
    *error = std::move(problem);
    return nullptr;
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kDefaultBusyTimeoutMs);
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"}) {
    if (std::string e = ExecRetryingBusy(*db, raw, pragma); !e.empty()) {
      *error = e;
      return nullptr;
    }
  }
  return db;
}

bool Database::HasWalResetBug(int version_number) {
  if (version_number < 3007000 || version_number >= 3051003) return false;
  if (version_number >= 3050007 && version_number < 3051000) return false;  // 3.50.7+
  if (version_number >= 3044006 && version_number < 3045000) return false;  // 3.44.6+
  return true;
}

SqliteDatabase::~SqliteDatabase() {
  // Finalize first: sqlite3_close_v2 would otherwise keep the connection half-open.
  ClearStatements();
  sqlite3_close_v2(db_);
}

std::string SqliteDatabase::Exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return {};
  std::string error = message ? message : "unknown SQLite error";
  sqlite3_free(message);
  return error;
}

std::string SqliteDatabase::Pragma(const std::string& name) {
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

std::unique_ptr<StatementCursor> SqliteDatabase::NewCursor(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK || stmt == nullptr) {
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK) throw SqliteError(SQLITE_MISUSE, "prepare: empty SQL");
    Throw(db_, rc, "prepare");
  }
  return std::make_unique<SqliteCursor>(db_, stmt);
}

int64_t SqliteDatabase::Changes() const { return sqlite3_changes64(db_); }

void SqliteDatabase::SetBusyTimeout(std::chrono::milliseconds timeout) {
  const auto ms = std::clamp<int64_t>(timeout.count(), 0, INT32_MAX);
  sqlite3_busy_timeout(db_, static_cast<int>(ms));
}

void SqliteDatabase::BeginImmediate() { Prepare("BEGIN IMMEDIATE").Run(); }

void SqliteDatabase::Commit() { Prepare("COMMIT").Run(); }

void SqliteDatabase::Rollback() noexcept {
  if (sqlite3_get_autocommit(db_)) return;  // no transaction open
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

bool SqliteDatabase::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

}  // namespace keel
