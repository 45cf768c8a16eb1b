// PgDatabase: one PostgreSQL connection behind Database (issue 23: `--db postgresql://...`),
// through libpq (Debian libpq-dev): the client library PostgreSQL itself ships, with no
// C++ layer between it and keel's Database (libpqxx would add one and nothing keel needs),
// loaded when the first connection is made (ledger/pq_api.h: Debian's libpq5 at run time).
//
// What the SQL keel shares with SQLite becomes here:
//  - placeholders ?1, ?2... are rewritten to $1, $2... (outside quoted literals); every
//    statement is prepared once per connection (PQprepare) and run with text parameters; a
//    boolean column reads through Int64() as 1 or 0, as SQLite gives it;
//  - BeginImmediate() is BEGIN, then pg_advisory_xact_lock(kWriterLock, hash of the current
//    schema): like SQLite's write lock, one write transaction at a time for keel's tables
//    (the schema the connection's search_path names first), across every keel instance
//    that shares them, released by COMMIT or ROLLBACK. Reads take no lock.
//  - SetBusyTimeout(t) is SET lock_timeout: a writer that waits longer for that lock fails
//    with SQLITE_BUSY, as on SQLite.
//  - errors are SqliteError with the SQLite code that means the same thing to the callers:
//    SQLITE_BUSY for lock_not_available, a serialization failure or a deadlock;
//    SQLITE_CONSTRAINT for a constraint violation; SQLITE_IOERR when the connection is lost
//    (then a COMMIT's outcome is unknown); SQLITE_ERROR otherwise. The message carries
//    PostgreSQL's own text and SQLSTATE.
//  - Commit() throws unless the server answered COMMIT: an aborted transaction's COMMIT is a
//    ROLLBACK to PostgreSQL, never a success here. A connection lost while COMMIT ran throws
//    SQLITE_IOERR saying the outcome is unknown.
//  - Connecting gives up after kConnectTimeoutS unless the URL sets connect_timeout.
//  - Every statement has a statement_timeout of kStatementTimeoutMs unless the URL (or the
//    role) sets one: a server that stops answering fails a statement with SQLITE_BUSY
//    rather than holding a worker forever.
//  - A lost connection (PostgreSQL restarted, failed over, or ended the session) is opened
//    again by the next statement, and statements prepared before are prepared again on it;
//    never inside a transaction: every statement of a transaction whose connection was lost
//    fails until Rollback() (or the next BeginImmediate()), so none runs outside it.
//
// Thread-safety: one connection per thread, as for SQLite.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ledger/database.h"

struct pg_conn;

namespace keel {

class PgDatabase final : public Database {
 public:
  // The first key of the advisory lock every write transaction takes ("keel" in ASCII).
  static constexpr int32_t kWriterLock = 0x6b65656c;
  // Connecting (and connecting again) gives up after this long unless the URL says.
  static constexpr int kConnectTimeoutS = 5;
  // Every ledger statement is short; 30 s means the server is stuck, not busy.
  static constexpr int64_t kStatementTimeoutMs = 30000;
  static constexpr const char* kStatementTimeoutSql = "SET statement_timeout = 30000";

  // Connects to `url` (a libpq connection URI). On failure returns null with *error set.
  static std::unique_ptr<PgDatabase> Connect(const std::string& url, std::string* error);
  ~PgDatabase() override;

  Dialect dialect() const override { return Dialect::kPostgres; }
  std::string Exec(const std::string& sql) override;
  void RunScript(std::span<const std::string_view> statements) override;
  std::string Pragma(const std::string&) override { return {}; }
  int64_t Changes() const override { return changes_; }
  void SetBusyTimeout(std::chrono::milliseconds timeout) override;
  void BeginImmediate() override;
  void Commit() override;
  void Rollback() noexcept override;
  bool InTransaction() const override;
  // clock_timestamp() of the server (not now(), which stands still within a transaction),
  // read at most every kClockReadEveryMs per connection and advanced in between by this
  // machine's monotonic clock: a round trip saved per keyed write, for an error of a
  // round trip and a second's drift next to leases of seconds.
  int64_t ClockMs() override;
  static constexpr int64_t kClockReadEveryMs = 1000;

  // `sql` with ?N placeholders rewritten to $N (outside single-quoted literals), and the
  // highest N found.
  static std::string Rewrite(std::string_view sql, int* parameters);

 protected:
  std::unique_ptr<StatementCursor> NewCursor(std::string_view sql) override;

 private:
  friend class PgCursor;
  explicit PgDatabase(pg_conn* conn) : conn_(conn) {}
  // Runs `sql` (no parameters, no rows wanted); throws SqliteError on failure. Run() first
  // opens a lost connection again (EnsureConnected); RunHere() does not.
  void Run(const char* sql);
  void RunHere(const char* sql);
  // Opens the connection again if it was lost, outside a transaction; throws SqliteError
  // (SQLITE_IOERR) inside one, or when the server cannot be reached.
  void EnsureConnected();
  void PrepareOn(const std::string& name, const std::string& text, int parameters,
                 std::string_view sql);

  pg_conn* conn_;
  int64_t changes_ = 0;                 // rows changed by the last statement that changed rows
  int next_statement_ = 0;              // names the next prepared statement
  int64_t lock_timeout_ms_ = -1;        // as set on the connection; -1: unknown
  int64_t wanted_timeout_ms_ = 5000;    // as last asked for (set again after a reconnect)
  bool own_statement_timeout_ = false;  // keel set statement_timeout (set again after a reconnect)
  int64_t clock_ms_ = 0;                // the server's clock when last read
  std::chrono::steady_clock::time_point clock_read_at_;
  bool clock_read_ = false;
  bool in_transaction_ = false;  // BeginImmediate() ran; Commit()/Rollback() not yet
  uint64_t generation_ = 0;      // connections opened again so far
};

}  // namespace keel
