// MutationLedger: exactly-once mutations under an idempotency key, durable in SQLite
// (IDEM-2..5). One row per (tool, key): the argument fingerprint, the state, the stored
// terminal result, who holds the claim and until when, how often the key was presented
// (attempts) and how often its effect ran (executions), the backend operation id, and
// created/updated/expiry times.
//
// Thread-safety: none; one MutationLedger per thread, over that thread's own Database
// connection (SQLite's rule for keel). Several connections, in one process or several,
// may share the file. Every write runs in a savepoint of a BEGIN IMMEDIATE transaction,
// which the ledgers of one process share when they share a CommitGroup (group commit: one
// fsync for the writes that arrived together; each write still all-or-nothing).
//
// Invariants:
//  1. A key with a terminal row (committed or failed) never runs its effect again: the
//     same fingerprint gets the stored result (rebuilt from its JSON every time, so no
//     caller can change what the next one reads), a different one gets kMismatch.
//  2. In-database effects (RunInDatabase) commit the claim, the effect, the execution
//     counter and the result in one transaction (IDEM-3): a crash anywhere before COMMIT
//     leaves no trace, after it the row is committed. Two connections racing one key:
//     one runs the effect, the other waits for the write lock and replays. The effect runs
//     in a savepoint, on whichever connection leads the group's transaction: it must
//     use only the Database it is given.
//  3. Remote effects (Claim, then Complete or Release) commit an in_progress claim first.
//     A claim whose lease has expired was left by a process that died between claim and
//     outcome: it is never re-executed blindly; it becomes needs_reconciliation.
//  4. Only terminal outcomes are stored as results. A transient failure stores nothing
//     (the transaction rolls back, or Release() drops the claim) so a retry runs again.
//  5. Terminal rows expire `ttl` after they were written; ReapExpired() deletes them.
//     in_progress and needs_reconciliation rows are never reaped.
//
// Conventions:
//  - A transient outcome of RunInDatabase returns kExecuted with the effect's `result`, but
//    no row exists afterwards: `record` stays default (record.key is empty, executions 0).
//    The caller reports the transient error; a retry under the same key runs the effect.
//  - A throwing effect returns kError; everything it wrote is rolled back, no row remains.
//  - attempts counts every Claim/RunInDatabase that finds or creates the row (replays,
//    mismatches and in-progress answers included); executions counts effect starts (a
//    Claim counts its effect as started).
//  - updated_ms is when the state last changed; terminal rows expire at updated_ms + ttl.
//  - Adopt() keeps the row's recorded attempt: the next reconciler must still see it.
//  - Complete() and Release() also accept our own needs_reconciliation row: that is how a
//    reconciliation by key records what it found out (happened / surely did not happen).
//  - A new key's write whose COMMIT lost its answer (a PostgreSQL connection lost while it
//    ran) is found out by reading the key back (FoundOut), never guessed.
//  - Complete/Release/MarkNeedsReconciliation/ReapExpired wait up to 5 s for the write lock;
//    if SQLite still fails they return false (0) and the row stays as it was, so an
//    unrecorded outcome surfaces as needs_reconciliation once the lease expires.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ledger/commit_group.h"
#include "ledger/database.h"
#include "ledger/kill_switch.h"
#include "ledger/writer_gate.h"

namespace keel {

using Json = nlohmann::json;
class FinishedRows;

// The kill switch as last read inside a group transaction (MutationLedger::Options::
// kill_switch): the units of one transaction share that read. One per process.
struct KillSwitchMemo {
  std::mutex mu;
  const CommitGroup* group = nullptr;  // guarded by mu, as the two below
  uint64_t serial = 0;                 // the group's transaction_serial() of the read
  KillSwitchState state;
};

enum class LedgerState { kInProgress, kCommitted, kFailed, kNeedsReconciliation };
// "in_progress", "committed", "failed", "needs_reconciliation" (the strings stored).
std::string_view LedgerStateName(LedgerState state);

// The process run of a remote claim (IDEM-5), recorded so that whoever finds the
// claim after its claimant died can tell whether that run may still be going
// (server/runtime/process_attempt.h decides).
struct LedgerAttempt {
  std::string boot_id;      // the machine's boot id when the run started ("" unreadable)
  int64_t pgid = 0;         // its process group (= the leader's pid); 0: not recorded yet
  int64_t start_ticks = 0;  // the leader's start time, clock ticks since boot; 0: unknown
  bool operator==(const LedgerAttempt& other) const {
    return boot_id == other.boot_id && pgid == other.pgid && start_ticks == other.start_ticks;
  }
};

struct LedgerRecord {
  std::string tool;
  std::string key;
  std::string fingerprint;
  LedgerState state = LedgerState::kInProgress;
  // The stored CallToolResult; null unless terminal, and null when the stored text cannot be
  // read (not JSON, or nested deeper than kMaxJsonDepth: bounded_json.h).
  Json result;
  std::string owner;           // who holds (or held) the claim
  int64_t lease_until_ms = 0;  // in_progress: the claim is live until then
  // Times the key reached the write path (executions, refused claims). Replays and
  // mismatches of a finished key are answered from a plain read and not counted: a replay
  // costs no write and no fsync.
  int64_t attempts = 0;
  int64_t executions = 0;    // times the effect ran
  std::string operation_id;  // the backend's id for the effect, when it gave one
  int64_t created_ms = 0;    // wall-clock milliseconds since the Unix epoch
  int64_t updated_ms = 0;
  int64_t expires_ms = 0;  // 0: never (non-terminal rows)
  // The claim's process run; nullopt: none recorded (an in-database effect, an effect that
  // is not a local process, or a claim written before schema version 5).
  std::optional<LedgerAttempt> attempt;
};

// What an in-database effect returns from inside the ledger's transaction.
struct EffectOutcome {
  Json result;             // the CallToolResult to store and return
  bool failed = false;     // a terminal failure (stored as `failed`, replayed as such)
  bool transient = false;  // nothing is stored: the transaction rolls back, a retry runs
  std::string operation_id;
};

class MutationLedger {
 public:
  struct Options {
    std::string owner;                    // unique per process, e.g. "keel-<pid>-<random>"
    int64_t ttl_ms = 24LL * 3600 * 1000;  // terminal rows kept this long
    int64_t lease_ms = 60000;             // a remote claim is live this long
    // The clock of leases and row times; null: the database's (Database::ClockMs: the
    // server's on PostgreSQL, so that instances whose clocks differ agree on a lease).
    std::function<int64_t()> now_ms;
    // Shared by the ledgers of one process: their writes are batched into shared
    // transactions, one fsync for many (commit_group.h). Null: this ledger batches only its
    // own writes, queuing on `writer` before BEGIN IMMEDIATE.
    CommitGroup* group = nullptr;
    // The process's writer queue (see WriterGate), used when `group` is null. Null: none.
    WriterGate* writer = nullptr;
    // Shared by the ledgers of one process: finished rows kept in memory, so that a replay
    // needs no read of the database (finished_rows.h). Null: every replay reads.
    FinishedRows* finished = nullptr;
    // OPS-2, decided where it is exact: RunInDatabase reads the kill switch inside the write
    // transaction, right before a new key's effect (a switch set by anyone, in any process,
    // needs the same write lock, so no write slips in between the check and the commit).
    // On: kBlocked, nothing written. Read once per group transaction, shared by its units:
    // one read, not one per write. Null: not checked here (the caller checks first).
    KillSwitchMemo* kill_switch = nullptr;
  };

  enum class Status {
    kExecuted,             // the effect ran now (RunInDatabase) / the claim is ours (Claim)
    kReplayed,             // a terminal row with the same fingerprint: its result
    kMismatch,             // the key was used with other arguments: nothing ran
    kInProgress,           // another live claim holds the key: retry after retry_after_ms
    kNeedsReconciliation,  // an earlier claim died without an outcome: reconcile by key
    kBlocked,              // the kill switch is on (Options::kill_switch): nothing ran
    kBusy,                 // the write lock was not free within the wait budget
    kError,                // SQLite failed, or the effect threw: `error` says why
  };

  struct Outcome {
    Status status = Status::kError;
    Json result;          // kExecuted (RunInDatabase) and kReplayed
    LedgerRecord record;  // the row as it stands after the call (when there is one)
    int64_t retry_after_ms = 0;
    std::string error;
    KillSwitchState kill_switch;  // kBlocked: the switch as read in the transaction
  };

  // `db` must stay open while the ledger is used; its schema must be migrated.
  MutationLedger(Database& db, Options options);

  // IDEM-3. In one BEGIN IMMEDIATE transaction (waiting at most `wait_budget` for the
  // write lock): look the key up; replay, mismatch, in-progress or needs-reconciliation
  // return without running `effect`; otherwise run effect(db) inside the transaction,
  // write the row (committed, or failed when the outcome says so; executions 1) and COMMIT.
  // A transient outcome or a throwing effect rolls everything back.
  Outcome RunInDatabase(const std::string& tool, const std::string& key,
                        const std::string& fingerprint, std::chrono::milliseconds wait_budget,
                        const std::function<EffectOutcome(Database&)>& effect);

  // IDEM-5, phase 1: commits an in_progress claim owned by this ledger's owner, leased for
  // lease_ms (kExecuted: run the effect now, passing the key to the backend). Replays,
  // mismatches and live claims as above; an expired claim turns needs_reconciliation.
  // `lease_ms` overrides Options::lease_ms for this claim: a claimant that knows its effect
  // may run longer (a command with a long timeout) leases it for that long. `attempt`, for an
  // effect that is a local process, is stored with the claim in the same transaction (the
  // run about to start, pgid 0); RecordAttempt then names its process group.
  Outcome Claim(const std::string& tool, const std::string& key, const std::string& fingerprint,
                std::chrono::milliseconds wait_budget,
                std::optional<int64_t> lease_ms = std::nullopt,
                const std::optional<LedgerAttempt>& attempt = std::nullopt);
  // Records the process run of our in_progress claim (IDEM-5). False if the claim is
  // not ours or the ledger failed (the claim then keeps what it had: "may still run").
  bool RecordAttempt(const std::string& tool, const std::string& key, const LedgerAttempt& attempt);
  // Phase 3: stores the terminal outcome of our claim. False if the claim is not ours.
  bool Complete(const std::string& tool, const std::string& key, const Json& result, bool failed,
                const std::string& operation_id);
  // The effect surely did not happen (not sent): drops our claim so a retry runs.
  bool Release(const std::string& tool, const std::string& key);
  // The outcome is unknown: the row says so until someone reconciles it by key.
  bool MarkNeedsReconciliation(const std::string& tool, const std::string& key);

  // Reconciliation of a row another claimant left (IDEM-5): makes it ours and
  // needs_reconciliation, so that Complete or Release can then record what a lookup found.
  // Only a row still owned by `from_owner` that is needs_reconciliation, or in_progress with
  // its lease expired (or at once when `owner_gone`: its process is known dead). True when
  // the row is now ours.
  bool Adopt(const std::string& tool, const std::string& key, const std::string& from_owner,
             bool owner_gone);
  // The rows of `tool` that are in_progress or needs_reconciliation (oldest first, at most
  // `limit`): what a start-up reconciliation looks at. Throws SqliteError when the ledger
  // cannot be read (never an empty list that would mean "nothing unsettled").
  std::vector<LedgerRecord> Unsettled(const std::string& tool, size_t limit);

  // The row of (tool, key); nullopt only when there is none. Throws SqliteError when the
  // ledger cannot be read: a read that fails is never "no call with that key ran".
  std::optional<LedgerRecord> Lookup(const std::string& tool, const std::string& key);
  // Deletes terminal rows past their expiry. Returns how many.
  size_t ReapExpired();

 private:
  // Throws SqliteError when the database's clock cannot be read.
  int64_t NowMs() const;
  // Under the write lock: what an existing row means for this presentation of the key.
  // Counts the attempt and turns an abandoned claim into needs_reconciliation.
  Outcome Presented(Database& db, const LedgerRecord& row, const std::string& fingerprint,
                    int64_t now);
  // The path every new claim takes: a finished key is answered from a read; otherwise, in
  // a savepoint of the group's write transaction, a finished row is answered as that read
  // would (no write), another existing row is Presented() and a missing one is handed to
  // `claim`, which fills `out` on the connection it is given and says whether its changes
  // are kept. With Options::finished the read first is the cache's alone: a key it does not
  // hold is nearly always new, and the write transaction reads it anyway (one read of the
  // database per new key, not two; a replay it misses is read there, and kept).
  Outcome WithNewKey(
      const std::string& tool, const std::string& key, const std::string& fingerprint,
      std::chrono::milliseconds wait_budget,
      const std::function<CommitGroup::Keep(Database& db, int64_t now, Outcome* out)>& claim);
  // DIST-3: the COMMIT of the transaction that wrote (tool, key)'s new row (at `now`) lost its
  // answer (SQLITE_IOERR: the connection died while it ran), so whether it committed is
  // unknown; the row is read back to find out, never guessed. Our row, of our creation
  // time: it committed, and the outcome is kExecuted as if the answer had come. No such
  // row: nothing committed; kError, and a retry runs. Unreadable: kError, outcome unknown
  // (a claim that did commit is ours, and turns needs_reconciliation when its lease ends:
  // nothing runs twice).
  Outcome FoundOut(const std::string& tool, const std::string& key, const std::string& fingerprint,
                   int64_t now, const SqliteError& lost);
  // A committed or failed row answers at once from a plain read (no write transaction):
  // its replay, or a mismatch. Null when the key is absent or not finished. With
  // Options::finished, only the cache is read.
  std::optional<Outcome> AnswerFinished(const std::string& tool, const std::string& key,
                                        const std::string& fingerprint);
  // What a finished `row` answers: its replay, or a mismatch. Null when not finished.
  static std::optional<Outcome> AnswerRow(LedgerRecord row, const std::string& fingerprint);
  // The kill switch as read in the group transaction `db` is in (Options::kill_switch).
  KillSwitchState KillSwitchNow(Database& db);
  // One write running `sql` (waiting up to kOutcomeWait); true when exactly one row changed.
  bool WriteOwnRow(std::string_view sql, const std::function<void(Statement&, int64_t now)>& bind);
  CommitGroup& group() { return options_.group != nullptr ? *options_.group : own_group_; }

  Database& db_;
  Options options_;
  CommitGroup own_group_;  // used when options_.group is null
};

}  // namespace keel
