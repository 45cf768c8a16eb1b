// DatabaseCheck: before keel serves, proves its database file usable: that it can be
// written (a write transaction, rolled back) and that its pages read back sound (PRAGMA
// quick_check, bounded in time). A file that fails either would make every keyed write answer
// `ledger_error` "retry with the same key", which can never succeed, so
// the caller refuses to start instead.
//
// Thread-safety: runs on the calling thread, on its connection; it starts one short-lived
// helper thread that only ever calls sqlite3_interrupt() on that connection.
// Invariants: the database is left as it was (the write rewrites PRAGMA user_version with its
// own value in a BEGIN IMMEDIATE transaction, and rolls it back); the scan never runs past
// `scan_until`.
#pragma once

#include <chrono>
#include <string>

#include "ledger/database.h"

namespace keel {

struct DatabaseCheck {
  enum class Verdict {
    kUsable,
    kNotWritable,  // read-only file or filesystem, no permission, disk full...: `problem`
    kDamaged,      // quick_check found a problem, or could not read a page: `problem`
  };
  Verdict verdict = Verdict::kUsable;
  std::string problem;  // why, for kNotWritable and kDamaged
  // False when another connection held the write lock for the whole busy timeout: that says
  // nothing about the file, so the verdict stays usable without the write proven.
  bool write_proven = true;
  // False when the time budget ran out before quick_check had read every page: what it read
  // was sound (a large file is checked in part rather than delaying start-up without bound).
  bool scan_complete = true;
};

// SQLite only (a PostgreSQL connection is usable as it is): takes the write lock (waiting up
// to the connection's busy timeout), rewrites the schema
// version it finds and rolls back; then runs quick_check until it finishes or `scan_until`
// passes (already passed: no scan).
DatabaseCheck CheckDatabase(Database& db, std::chrono::steady_clock::time_point scan_until);

}  // namespace keel
