// CommitGroup: group commit for one process's writes to one SQLite file. Writes that arrive
// while a transaction is being written wait in a queue, and the next transaction takes
// them all (up to kMaxUnits). N concurrent keyed mutations then cost one fsync
// (WAL, synchronous=FULL) where they cost N, and the write lock changes hands once per
// batch, not once per mutation.
//
// How a batch runs: the first waiting writer leads. It enters the WriterGate (so the
// process's other writers still exclude it) and, on the group's own connection (or, without
// one, on its own), runs BEGIN IMMEDIATE, then each unit's body in a SAVEPOINT of its own,
// then COMMIT. Every writer of the batch is woken (its own wake-up: no herd) only after
// COMMIT has returned, and the oldest queued writer is woken to lead the next batch. One
// connection for every batch keeps SQLite's page cache warm: connections that take turns
// each re-read the pages the others changed. A unit is still all-or-nothing on its own:
//  - a body that throws is rolled back to its savepoint, and its writer gets the exception;
//  - a body that returns kUndo is rolled back the same way, and its writer gets kUndo;
//  - the other units of the batch keep their changes in both cases.
// When the whole transaction is lost, every unit it held fails with SqliteError and
// nothing of them was committed: COMMIT failed, or SQLite rolled back on its own
// (SQLITE_FULL, an I/O error, a body that ended the transaction). Units not yet run go on in
// the next transaction. One exception: a COMMIT whose answer was lost with its PostgreSQL
// connection (SQLITE_IOERR, pg_database.h) may have committed; its units fail with that
// error, and the caller finds out by reading back (MutationLedger::FoundOut).
//
// Bodies run on the leader's thread, against the Database they are given; they must use
// nothing of their caller's connection, and must not call Run(). A waiter blocks its thread
// (it does not suspend).
//
// Budgets: a unit still queued when its budget runs out leaves the queue with
// SqliteError(SQLITE_BUSY), having run nothing. The leader waits for the gate and the SQLite
// lock (another process's writer) at most until the earliest deadline of its batch. If that
// runs out, the units past their deadline fail with SQLITE_BUSY and the rest are queued
// again, ahead of newer ones.
//
// Written here, not taken from a library: the batching has to sit between keel's
// per-thread connections and SQLite's single write lock, which no Debian-packaged SQLite
// wrapper offers.
//
// Thread-safety: Run() may be called from any thread, each with that thread's own connection.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "ledger/database.h"
#include "ledger/writer_gate.h"

namespace keel {

class CommitGroup {
 public:
  // The most units one transaction takes: bounds how long the write lock is held.
  static constexpr size_t kMaxUnits = 64;

  enum class Keep { kKeep, kUndo };
  using Body = std::function<Keep(Database& db)>;

  // `gate`: the process's writer queue, shared with writers outside the group (may be null).
  // `connection`: the connection every batch runs on; null: each leader's own.
  explicit CommitGroup(WriterGate* gate = nullptr, std::unique_ptr<Database> connection = nullptr)
      : gate_(gate), connection_(std::move(connection)) {}
  CommitGroup(const CommitGroup&) = delete;
  CommitGroup& operator=(const CommitGroup&) = delete;

  // Runs `body` in a group transaction, on `own` (this thread's connection) or on another
  // writer's, and returns what the body returned once that transaction has committed.
  // Throws what the body threw, or SqliteError (see above).
  Keep Run(Database& own, std::chrono::milliseconds budget, const Body& body);

  // For tests and figures: transactions committed, and units run in them.
  uint64_t transactions() const;
  uint64_t units() const;
  // Units waiting for a transaction (not yet taken by a leader).
  size_t queued() const;
  // The number of the group's transaction that is (or was last) begun: called from a body,
  // the same for every unit of its transaction and new for each transaction, so a body can
  // tell whether a read it made in an earlier unit was made under this same write lock.
  uint64_t transaction_serial() const { return begun_.load(std::memory_order_acquire); }

 private:
  struct Unit {
    const Body* body = nullptr;
    std::chrono::steady_clock::time_point deadline;
    bool queued = true;  // guarded by mu_
    bool done = false;   // guarded by mu_
    // Notified (with mu_) when the unit is done, or when it is first in the queue and
    // nobody leads.
    std::condition_variable wake;
    Keep keep = Keep::kUndo;
    std::exception_ptr error;
  };
  using Clock = std::chrono::steady_clock;

  // Runs `batch` on `db` as one transaction; fills each unit's keep/error, or returns the
  // units it could not start (their deadline not yet passed) to be queued again.
  std::vector<Unit*> Write(Database& db, std::vector<Unit*> batch);
  // Runs units from `next` on in the open transaction; stops after a unit whose body lost
  // the transaction and returns the index after it (batch.size() when all ran).
  size_t RunUnits(Database& db, const std::vector<Unit*>& batch, size_t next);

  WriterGate* const gate_;
  const std::unique_ptr<Database> connection_;  // used by one leader at a time
  mutable std::mutex mu_;
  std::deque<Unit*> queue_;    // guarded by mu_
  bool leading_ = false;       // guarded by mu_
  uint64_t transactions_ = 0;  // guarded by mu_
  uint64_t units_ = 0;         // guarded by mu_
  std::atomic<uint64_t> begun_{0};
};

}  // namespace keel
