// LedgerService: the mutation ledger as tools use it. Opens and migrates the database
// file once, then gives each thread (each worker) its own connection and MutationLedger,
// as SQLite's threading rule for keel asks. Turns ledger outcomes into what a tool
// returns: the result, a replay marked in `_meta`, or an `isError` result the model can
// act on (idempotency_key_mismatch, idempotency_in_progress, needs_reconciliation,
// ledger_busy, ledger_error).
//
// Thread-safety: every member may be called from any thread.
// Invariants: a keyed mutation runs its effect at most once per (tool, key) (the ledger's
// transaction guarantees it); a returned result is always rebuilt from stored JSON.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "ledger/commit_group.h"
#include "ledger/database.h"
#include "ledger/finished_rows.h"
#include "ledger/mutation_ledger.h"
#include "ledger/writer_gate.h"
#include "server/durable/instance_heartbeat.h"

namespace keel {

using Json = nlohmann::json;

class LedgerService {
 public:
  struct Options {
    std::string path;                     // the database file
    int64_t ttl_ms = 24LL * 3600 * 1000;  // --idempotency-ttl
    std::string owner;                    // unique per process
  };

  // Opens, checks and migrates the file. On failure returns null with *error set and
  // *exit_code 73 (cannot open or create; a second hard link; not writable; damaged pages:
  // see DatabaseCheck) or 78 (written by a newer keel, or a migration failed).
  static std::unique_ptr<LedgerService> Open(Options options, std::string* error, int* exit_code);
  // Logs how many keyed writes were committed, in how many transactions.
  ~LedgerService();

  // This thread's connection and ledger, opened on first use. Throws SqliteError if the
  // file cannot be opened any more. Ask again after anything that may suspend (suspend.h):
  // the job may then run on another thread, with another connection.
  Database& Db();
  MutationLedger& Ledger();

  // Runs `effect` inside the ledger's transaction under (tool, key) (IDEM-3), and returns
  // the CallToolResult to send: the effect's, a marked replay, or an isError result.
  // `wait` bounds how long it waits for another writer.
  Json RunKeyed(const std::string& tool, const std::string& key, const Json& arguments,
                std::chrono::milliseconds wait,
                const std::function<EffectOutcome(Database&)>& effect);
  // Without a key: the effect runs every time, in its own transaction (IDEM-1).
  Json RunUnkeyed(const std::function<EffectOutcome(Database&)>& effect);

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
  struct PerThread {
    std::unique_ptr<Database> db;
    std::unique_ptr<MutationLedger> ledger;
  };
  // Never inlined: the thread's id comes from pthread_self(), which the compiler may take
  // once per function (glibc declares it const), and a job that suspends (suspend.h) can go
  // on on another thread between two uses.
  [[gnu::noinline]] PerThread& ForThisThread();
  MutationLedger::Options LedgerOptions();

  Options options_;
  WriterGate writer_;  // this process's ledger writers queue here
  // Keyed writes of every thread, batched into shared transactions (one fsync for many) on
  // a connection of their own. Set by Open().
  std::unique_ptr<CommitGroup> group_;
  std::mutex mu_;
  std::unordered_map<std::thread::id, std::unique_ptr<PerThread>> threads_;  // guarded by mu_
  std::unique_ptr<InstanceHeartbeat> heartbeat_;  // PostgreSQL, once JoinInstances()
  // PostgreSQL: finished rows kept for replays (finished_rows.h); a replay from a local
  // SQLite file is a cheap read already.
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
