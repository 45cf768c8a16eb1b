// Database: one connection to keel's durable state, SQLite (SqliteDatabase, below) or
// PostgreSQL (PgDatabase, pg_database.h). The ledger layer is the only code that includes
// <sqlite3.h> or <libpq-fe.h>.
//
// Ownership: owns the connection; closing a SQLite one checkpoints the WAL.
// Thread-safety: one connection per thread (SQLite's rule for keel); not shareable.
// Invariants of a SQLite connection, once Open() succeeds: journal_mode=WAL (or "memory" for
// ":memory:"), synchronous=FULL (NORMAL may lose the last commits on power loss, which would re-run
// an effect), foreign_keys=ON, and a busy timeout so a competing writer waits instead of failing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace keel {

// A failed SQLite call. `code` is the (extended) SQLite result code.
struct SqliteError : std::runtime_error {
  SqliteError(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

// One prepared statement of one connection, as its backend implements it (SQLite, or
// PostgreSQL: pg_database.h). Owned by the connection's cache; used through Statement.
class StatementCursor {
 public:
  virtual ~StatementCursor() = default;
  virtual void Bind(int index, int64_t value) = 0;
  virtual void Bind(int index, std::string_view value) = 0;
  virtual void BindNull(int index) = 0;
  virtual bool Step() = 0;
  virtual int64_t Int64(int column) const = 0;
  virtual std::string Text(int column) const = 0;
  virtual bool IsNull(int column) const = 0;
  // Forgets the bindings and any rows not stepped through; ready to run again.
  virtual void Reset() noexcept = 0;

 private:
  friend class Database;
  friend class Statement;
  bool borrowed_ = false;  // a Statement holds it (a second Prepare of the SQL throws)
};

// A prepared statement borrowed from its connection's cache. Binds are 1-based, placeholders
// written ?1, ?2... whatever the backend. Column getters copy. Destroying it resets and
// unbinds the cached statement, so each SQL text has at most one Statement alive at a time.
class Statement {
 public:
  Statement(Statement&& other) noexcept : cursor_(other.cursor_) { other.cursor_ = nullptr; }
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value) {
    cursor_->Bind(index, value);
    return *this;
  }
  Statement& Bind(int index, std::string_view value) {
    cursor_->Bind(index, value);
    return *this;
  }
  Statement& BindNull(int index) {
    cursor_->BindNull(index);
    return *this;
  }
  // True when a row is ready; false when done. Throws SqliteError (SQLITE_BUSY included).
  bool Step() { return cursor_->Step(); }
  // Steps to completion (a write): throws on failure.
  void Run() {
    while (Step()) {
    }
  }
  int64_t Int64(int column) const { return cursor_->Int64(column); }
  std::string Text(int column) const { return cursor_->Text(column); }
  bool IsNull(int column) const { return cursor_->IsNull(column); }

 private:
  friend class Database;
  explicit Statement(StatementCursor* cursor) : cursor_(cursor) {}
  StatementCursor* cursor_;
};

// A connection to keel's durable state: SQLite (a file path) or PostgreSQL (a
// postgresql:// URL, pg_database.h). The SQL keel writes is the part the two share; where it
// cannot be (the schema, the kill switch's upsert...), the caller asks dialect().
class Database {
 public:
  enum class Dialect { kSqlite, kPostgres };

  // Opens `spec`: a postgresql:// or postgres:// URL connects to PostgreSQL; anything else is
  // a SQLite file, created if needed. On failure returns null and sets *error to a readable
  // reason. A SQLite file with more than one name (a hard link count above one, of the
  // database or of its -wal or -shm file) is refused: SQLite keeps the WAL per name, so
  // connections through two names would not exclude each other. Symlinks are fine.
  static std::unique_ptr<Database> Open(const std::string& spec, std::string* error);
  // True when `spec` names a PostgreSQL database rather than a SQLite file.
  static bool IsPostgresUrl(const std::string& spec);
  // `spec` as messages and logs may show it: a PostgreSQL URL's password replaced by "***".
  static std::string Describe(const std::string& spec);

  virtual ~Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  virtual Dialect dialect() const = 0;

  // Runs SQL without results. Returns an empty string, or the error.
  virtual std::string Exec(const std::string& sql) = 0;

  // SQLite: the value of a pragma as text ("wal", "2", ...); empty on error, and always
  // empty on PostgreSQL.
  virtual std::string Pragma(const std::string& name) = 0;

  // A cached prepared statement. Throws SqliteError if the SQL does not compile, or with
  // SQLITE_MISUSE while a Statement of the same SQL text is still alive.
  Statement Prepare(std::string_view sql);
  // Runs `statements` (no parameters, no rows wanted) in order, inside the open write
  // transaction, stopping at the first that fails: throws its SqliteError. SQLite runs each
  // cached statement and keeps those before the failure; on PostgreSQL they go in one round
  // trip (group commit's savepoints, commit_group.h: one round trip per unit saved), and a
  // failure aborts the transaction, as any failed statement there does.
  virtual void RunScript(std::span<const std::string_view> statements);
  // Rows changed by the last INSERT/UPDATE/DELETE.
  virtual int64_t Changes() const = 0;

  // How long a write waits for another connection's lock (the caller's remaining
  // deadline; zero fails at once with SQLITE_BUSY).
  virtual void SetBusyTimeout(std::chrono::milliseconds timeout) = 0;

  // Write transactions: BEGIN IMMEDIATE takes the write lock at once (waiting up to the
  // busy timeout); on PostgreSQL, BEGIN and the ledger's writer lock (pg_database.h).
  // Throw SqliteError on failure.
  virtual void BeginImmediate() = 0;
  virtual void Commit() = 0;
  // Never throws; a no-op outside a transaction.
  virtual void Rollback() noexcept = 0;
  // A transaction is open (SQLite may end one on its own after some errors).
  virtual bool InTransaction() const = 0;

  // The clock leases and heartbeats are judged by, in milliseconds since the Unix epoch:
  // this machine's for SQLite (every connection to a file is on one machine), the server's
  // clock_timestamp() for PostgreSQL, so that keels on machines whose clocks differ agree
  // (DIST-2). Throws SqliteError when the server cannot be asked.
  virtual int64_t ClockMs();

  // True when SQLite `version_number` (as sqlite3_libversion_number()) has the WAL-reset
  // bug: 3.7.0 to 3.51.2, except the fixed backports 3.50.7+ and 3.44.6+. Opening a SQLite
  // file logs a warning (once per process) when the runtime library is affected.
  static bool HasWalResetBug(int version_number);

 protected:
  Database() = default;
  // A new prepared statement for `sql`; throws SqliteError if it does not compile.
  virtual std::unique_ptr<StatementCursor> NewCursor(std::string_view sql) = 0;
  // For a Database that wraps another (a test's fault injector): `inner`'s NewCursor.
  static std::unique_ptr<StatementCursor> NewCursorOf(Database& inner, std::string_view sql) {
    return inner.NewCursor(sql);
  }
  // Drops every cached statement: a backend calls it before it closes its connection.
  void ClearStatements() { statements_.clear(); }

 private:
  // SQL text -> prepared. Node-based, so a Statement's cursor pointer stays valid.
  std::unordered_map<std::string, std::unique_ptr<StatementCursor>> statements_;
};

// One SQLite connection, opened the way keel's durable state needs it (see the invariants at
// the top of this file).
class SqliteDatabase final : public Database {
 public:
  static std::unique_ptr<SqliteDatabase> Open(const std::string& path, std::string* error);
  ~SqliteDatabase() override;

  Dialect dialect() const override { return Dialect::kSqlite; }
  std::string Exec(const std::string& sql) override;
  std::string Pragma(const std::string& name) override;
  int64_t Changes() const override;
  void SetBusyTimeout(std::chrono::milliseconds timeout) override;
  void BeginImmediate() override;
  void Commit() override;
  void Rollback() noexcept override;
  bool InTransaction() const override;

  sqlite3* handle() const { return db_; }

 protected:
  std::unique_ptr<StatementCursor> NewCursor(std::string_view sql) override;

 private:
  explicit SqliteDatabase(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

// Rolls back on destruction unless Commit() was called.
class WriteTransaction {
 public:
  explicit WriteTransaction(Database& db) : db_(db) { db_.BeginImmediate(); }
  ~WriteTransaction() {
    if (!done_) db_.Rollback();
  }
  void Commit() {
    db_.Commit();
    done_ = true;
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace keel
