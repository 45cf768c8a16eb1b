// Database: one SQLite connection, opened the way keel's durable state needs it.
// The ledger layer is the only code that includes <sqlite3.h>.
//
// Ownership: owns the connection; closing checkpoints the WAL.
// Thread-safety: one connection per thread (SQLite's rule for keel); not shareable.
// Invariants, once Open() succeeds: journal_mode=WAL (or "memory" for ":memory:"),
// synchronous=FULL (NORMAL may lose the last commits on power loss, which would re-run an
// effect), foreign_keys=ON, and a busy timeout so a competing writer waits instead of failing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
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

// A prepared statement borrowed from its connection's cache. Binds are 1-based. Column
// getters copy (text pointers die at the next step). Destroying it resets and unbinds the
// cached statement, so each SQL text has at most one Statement alive at a time.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view value);
  Statement& BindNull(int index);
  // True when a row is ready; false when done. Throws SqliteError (SQLITE_BUSY included).
  bool Step();
  // Steps to completion (a write): throws on failure.
  void Run();
  int64_t Int64(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  friend class Database;
  Statement(sqlite3* db, sqlite3_stmt* stmt, bool* borrowed)
      : db_(db), stmt_(stmt), borrowed_(borrowed) {}
  void Check(int rc) const;  // throws SqliteError unless rc is SQLITE_OK
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  bool* borrowed_;  // the cache entry's flag: set while this Statement holds it
};

class Database {
 public:
  // Opens (creating if needed) the database at `path`. On failure returns null and sets
  // *error to a readable reason. A file with more than one name (a hard link count above
  // one, of the database or of its -wal or -shm file) is refused: SQLite keeps the WAL per
  // name, so connections through two names would not exclude each other. Symlinks are fine.
  static std::unique_ptr<Database> Open(const std::string& path, std::string* error);

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs SQL without results. Returns an empty string, or the error.
  std::string Exec(const std::string& sql);

  // The value of a pragma as text ("wal", "2", ...); empty on error.
  std::string Pragma(const std::string& name);

  // A cached prepared statement. Throws SqliteError if the SQL does not compile, or with
  // SQLITE_MISUSE while a Statement of the same SQL text is still alive.
  Statement Prepare(std::string_view sql);
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const;

  // How long a write waits for another connection's lock (the caller's remaining
  // deadline; zero fails at once with SQLITE_BUSY).
  void SetBusyTimeout(std::chrono::milliseconds timeout);

  // Write transactions: BEGIN IMMEDIATE takes the write lock at once (waiting up to the
  // busy timeout). Throw SqliteError on failure.
  void BeginImmediate();
  void Commit();
  // Never throws; a no-op outside a transaction.
  void Rollback() noexcept;

  sqlite3* handle() const { return db_; }

  // True when SQLite `version_number` (as sqlite3_libversion_number()) has the WAL-reset
  // bug: 3.7.0 to 3.51.2, except the fixed backports 3.50.7+ and 3.44.6+. Open() logs a
  // warning (once per process) when the runtime library is affected.
  static bool HasWalResetBug(int version_number);

 private:
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool borrowed = false;  // a Statement holds it (a second Prepare of the SQL throws)
  };
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  // SQL text -> prepared. Node-based, so a Statement's pointer to `borrowed` stays valid.
  std::unordered_map<std::string, Cached> statements_;
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
