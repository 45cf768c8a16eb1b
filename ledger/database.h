// Database: one SQLite connection, opened the way keel's durable state needs it.
// The ledger layer is the only code that includes <sqlite3.h>.
//
// Ownership: owns the connection; closing checkpoints the WAL.
// Thread-safety: one connection per thread (SQLite's rule for keel); not shareable.
// Invariants, once Open() succeeds: journal_mode=WAL (or "memory" for ":memory:"),
// synchronous=FULL (NORMAL may lose the last commits on power loss, which would re-run an
// effect), foreign_keys=ON, and a busy timeout so a competing writer waits instead of failing.
#pragma once

#include <memory>
#include <string>

struct sqlite3;

namespace keel {

class Database {
 public:
  // Opens (creating if needed) the database at `path`. On failure returns null and sets
  // *error to a readable reason.
  static std::unique_ptr<Database> Open(const std::string& path, std::string* error);

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs SQL without results. Returns an empty string, or the error.
  std::string Exec(const std::string& sql);

  // The value of a pragma as text ("wal", "2", ...); empty on error.
  std::string Pragma(const std::string& name);

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace keel
