// LedgerService: the mutation ledger as tools use it. Opens and migrates the database once,
// then lends connections (each with its MutationLedger) from a pool of at most
// Options::connections (--db-connections): a connection is used by one job at a time, as
// SQLite's threading rule for keel and libpq both ask. Turns ledger outcomes into what a tool
// returns: the result, a replay marked in `_meta`, or an `isError` result the model can act
// on (idempotency_key_mismatch, idempotency_in_progress, needs_reconciliation, ledger_busy,
// ledger_error).
//
// The pool: Borrow() lends an idle connection, opens a new one while fewer than the limit
// are open, or waits (bounded) for one to come back. A job that borrows again while it
// holds one gets the same connection (so nested helpers never wait on their own caller),
// and a lease may be kept across a Suspend() (it belongs to the job, not to the thread).
// Keep a lease for one use, or one transaction: a lease held while waiting on something
// slow (an upstream's answer) keeps a connection from every other call. Connections stay
// open until the service is destroyed. On top of the pool keel opens three connections of
// its own: the group-commit writer below, the task store's thread, and (PostgreSQL) the
// heartbeat.
//
// Thread-safety: every member may be called from any thread.
// Invariants: a keyed mutation runs its effect at most once per (tool, key) (the ledger's
// transaction guarantees it); a returned result is always rebuilt from stored JSON; no
// connection is lent to two jobs at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "ledger/commit_group.h"
#include "ledger/database.h"
#include "ledger/finished_rows.h"
#include "ledger/mutation_ledger.h"
#include "ledger/writer_gate.h"
#include "server/durable/instance_heartbeat.h"

namespace keel {

using Json = nlohmann::json;

// One connection of LedgerService's pool, with the ledger that uses it.
struct PooledConnection {
  std::unique_ptr<Database> db;
  std::unique_ptr<MutationLedger> ledger;
};

class LedgerService {
 public:
  struct Options {
    std::string path;                     // the database file
    int64_t ttl_ms = 24LL * 3600 * 1000;  // --idempotency-ttl
    std::string owner;                    // unique per process
    size_t connections = 8;               // --db-connections: the pool's most, at least 1
  };

  // A borrowed connection and its ledger; returned to the pool when destroyed. Move-only;
  // use it from one thread at a time.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    Database& db() const;
    MutationLedger& ledger() const;

   private:
    friend class LedgerService;
    Lease(LedgerService* owner, PooledConnection* pooled, const void* job)
        : owner_(owner), pooled_(pooled), job_(job) {}
    LedgerService* owner_;
    PooledConnection* pooled_;
    const void* job_;
  };

  // How long Borrow() waits for a connection when all are lent, by default.
  static constexpr std::chrono::milliseconds kBorrowWait{5000};

  // Opens, checks and migrates the file. On failure returns null with *error set and
  // *exit_code 73 (cannot open or create; a second hard link; not writable; damaged pages:
  // see DatabaseCheck) or 78 (written by a newer keel, or a migration failed).
  static std::unique_ptr<LedgerService> Open(Options options, std::string* error, int* exit_code);
  // Logs how many keyed writes were committed, in how many transactions.
  ~LedgerService();

  // A connection for the calling job (see above). Throws SqliteError: SQLITE_BUSY when
  // none came free within `wait`; another code when a new one cannot be opened.
  Lease Borrow(std::chrono::milliseconds wait = kBorrowWait);
  // For tests and figures: connections open in the pool, and lent now.
  size_t connections_open() const;
  size_t connections_lent() const;

  // What a mutation answers when the kill switch, read in its transaction, is on.
  using BlockedAnswer = std::function<Json(const KillSwitchState& state)>;

  // Runs `effect` inside the ledger's transaction under (tool, key) (IDEM-3), and returns
  // the CallToolResult to send: the effect's, a marked replay, or an isError result.
  // `wait` bounds how long it waits for another writer. A new key's effect runs only if the
  // kill switch, read in the same transaction, is off; else `blocked` answers (OPS-2).
  Json RunKeyed(const std::string& tool, const std::string& key, const Json& arguments,
                std::chrono::milliseconds wait,
                const std::function<EffectOutcome(Database&)>& effect,
                const BlockedAnswer& blocked);
  // Without a key: the effect runs every time, in its own transaction (IDEM-1), if the kill
  // switch read in it is off.
  Json RunUnkeyed(const std::function<EffectOutcome(Database&)>& effect,
                  const BlockedAnswer& blocked);

  const Options& options() const { return options_; }

  // DIST-2: on PostgreSQL, registers this keel in keel_instances and keeps its heartbeat
  // until destruction (instance_heartbeat.h); a no-op on SQLite. Only a keel that serves
  // joins (not `keel admin`). Returns the error, empty on success.
  std::string JoinInstances();
  // True when the database may be shared by keels on several machines (PostgreSQL): then
  // a pid or a boot id recorded by another keel may be another machine's.
  bool spans_machines() const { return Database::IsPostgresUrl(options_.path); }
  // Whether the keel that wrote ledger or task owner `owner` surely runs no more: on
  // PostgreSQL, it is gone from the registry (InstanceRegistry::Gone, by the server's
  // clock); on SQLite, LedgerOwnerGone (its pid). Our own owner is never gone; a registry
  // that cannot be read says "not known to be gone".
  bool OwnerGone(const std::string& owner);
  // Keyed writes committed so far, and the transactions (fsyncs) they took.
  uint64_t writes_committed() const { return group_->units(); }
  uint64_t write_transactions() const { return group_->transactions(); }

 private:
  explicit LedgerService(Options options) : options_(std::move(options)) {}
  // Opens one connection for the pool (not counted: the caller reserved its place).
  std::unique_ptr<PooledConnection> OpenPooled(std::unique_ptr<Database> db);
  void GiveBack(PooledConnection* pooled, const void* job);
  MutationLedger::Options LedgerOptions();

  Options options_;
  WriterGate writer_;  // this process's ledger writers queue here
  // Keyed writes of every thread, batched into shared transactions (one fsync for many) on
  // a connection of their own. Set by Open().
  std::unique_ptr<CommitGroup> group_;
  mutable std::mutex mu_;
  std::condition_variable returned_;                    // a connection came back to idle_
  std::vector<std::unique_ptr<PooledConnection>> all_;  // guarded by mu_: every open one
  std::vector<PooledConnection*> idle_;                 // guarded by mu_: the last returned last
  size_t opening_ = 0;                                  // guarded by mu_: being opened now
  struct Holding {
    PooledConnection* pooled;
    int leases;
  };
  std::unordered_map<const void*, Holding> held_;  // guarded by mu_: by CurrentJob()
  std::unique_ptr<InstanceHeartbeat> heartbeat_;   // PostgreSQL, once JoinInstances()
  // The kill switch as read in the current group transaction (mutation_ledger.h).
  KillSwitchMemo kill_switch_;
  // Finished rows kept for replays (finished_rows.h): on PostgreSQL a replay is otherwise a
  // round trip; on both, a new key then skips a read before its write transaction.
  std::unique_ptr<FinishedRows> finished_;
};

// Whether the process that wrote ledger owner `owner` ("keel-<pid>-...") surely no longer
// runs on this machine: its pid is ours (but the owner is not `self`), or no process has
// that pid. Meaningful only for keels that share this machine (a SQLite file).
bool LedgerOwnerGone(const std::string& owner, const std::string& self);

// What a ledger outcome that ran nothing (or RunInDatabase's kExecuted) means for the caller:
// the result of kExecuted, a replay marked in `_meta`, or an isError result naming the key
// (idempotency_key_mismatch, idempotency_in_progress, needs_reconciliation, ledger_busy,
// ledger_error, and stored_result_unreadable for a replay whose stored result reads as null).
Json LedgerAnswer(MutationLedger::Outcome outcome, const std::string& tool, const std::string& key);

}  // namespace keel
