#include "ledger/database_check.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <sqlite3.h>

namespace keel {
namespace {

// quick_check reads every page of the file once, so its cost grows with the file: measured
// here, ~2.5 s for 165 MB on a loaded machine, nearly all of it one b-tree walk inside a
// single VDBE opcode. A progress handler is not called during that walk (SQLite 3.40, what
// keel builds with), so a time bound needs sqlite3_interrupt(), the one call SQLite allows
// from another thread: this helper waits for the deadline and interrupts the scan, unless
// the scan is done first.
class Watchdog {
 public:
  Watchdog(sqlite3* db, std::chrono::steady_clock::time_point until)
      : thread_([this, db, until] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!wake_.wait_until(lock, until, [this] { return done_; })) sqlite3_interrupt(db);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool done_ = false;   // guarded by mu_
  std::thread thread_;  // last: starts once the members above exist
};

bool IsBusy(int code) { return (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED; }
bool IsDamage(int code) {
  return (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB;
}

// A write that is rolled back: BEGIN IMMEDIATE takes the write lock, and rewriting the schema
// version with its own value makes the header page dirty, which a read-only connection
// refuses. So a file opened read-only (no write permission, a read-only filesystem) or a lock
// keel cannot take fails here rather than on every keyed call. Rolled back rather than
// committed: a commit would cost a WAL frame now and a checkpoint with three fsyncs at exit
// (~15 ms here, on every start, where keel otherwise writes nothing), and the one failure only
// a commit would show, a full disk, is one that a later retry can get past.
void ProveWritable(SqliteDatabase& db, DatabaseCheck& check) {
  if (sqlite3_db_readonly(db.handle(), "main") == 1) {
    check.verdict = DatabaseCheck::Verdict::kNotWritable;
    check.problem = "it opens read-only (no write permission, or a read-only filesystem)";
    return;
  }
  try {
    WriteTransaction txn(db);  // rolls back when it goes out of scope
    int64_t version = 0;
    {
      Statement read = db.Prepare("PRAGMA user_version");
      if (read.Step()) version = read.Int64(0);
    }
    db.Prepare("PRAGMA user_version = " + std::to_string(version)).Run();
  } catch (const SqliteError& e) {
    if (IsBusy(e.code)) {
      check.write_proven = false;
      return;
    }
    check.verdict =
        IsDamage(e.code) ? DatabaseCheck::Verdict::kDamaged : DatabaseCheck::Verdict::kNotWritable;
    check.problem = e.what();
  }
}

void ScanPages(SqliteDatabase& db, std::chrono::steady_clock::time_point scan_until,
               DatabaseCheck& check) {
  if (std::chrono::steady_clock::now() >= scan_until) {
    check.scan_complete = false;
    return;
  }
  // quick_check(1): stop at the first problem; one is enough to refuse the file.
  const Watchdog watchdog(db.handle(), scan_until);
  try {
    Statement scan = db.Prepare("PRAGMA quick_check(1)");
    std::string first = scan.Step() ? scan.Text(0) : "no answer";
    if (first != "ok") {
      std::replace(first.begin(), first.end(), '\n', ' ');  // one line in a log
      check.verdict = DatabaseCheck::Verdict::kDamaged;
      check.problem = "PRAGMA quick_check: " + first;
    }
  } catch (const SqliteError& e) {
    if ((e.code & 0xff) == SQLITE_INTERRUPT) {
      check.scan_complete = false;
    } else if (IsBusy(e.code)) {
      check.scan_complete = false;  // a reader never waits in WAL mode; but do not refuse
    } else {
      check.verdict = DatabaseCheck::Verdict::kDamaged;
      check.problem = std::string("PRAGMA quick_check: ") + e.what();
    }
  }
}

}  // namespace

DatabaseCheck CheckDatabase(Database& db, std::chrono::steady_clock::time_point scan_until) {
  DatabaseCheck check;
  auto* file = dynamic_cast<SqliteDatabase*>(&db);
  if (file == nullptr) return check;  // a PostgreSQL server checks its own pages
  ProveWritable(*file, check);
  if (check.verdict != DatabaseCheck::Verdict::kUsable) return check;
  ScanPages(*file, scan_until, check);
  return check;
}

}  // namespace keel
