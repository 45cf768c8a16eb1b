// TaskStore: durable MCP tasks (2025-11-25 `tasks/*`, TASK-1, TASK-2) in keel's SQLite file.
// One row per task: its id, tool, status and statusMessage, times, ttl and pollInterval,
// the request that created it, its idempotency key and argument fingerprint, the terminal
// outcome (exactly what tools/call would have returned: a CallToolResult or a JSON-RPC
// error object), the cancel phase, and which process runs it (owner, pid, lease).
//
// Thread-safety: none; one TaskStore per connection, on that connection's thread. Several
// processes may share the file: every write is one BEGIN IMMEDIATE transaction.
//
// Invariants:
//  1. A task is created `working`. Terminal states (completed, failed, cancelled) never
//     change status again: Finish() and Cancel() are compare-and-set on a non-terminal row.
//  2. Only a cancelled row takes RecordAfterCancel(): the cancel phase moves requested ->
//     observed (a worker checkpoint saw the cancel) or -> finished_after_cancel (the work
//     completed anyway; `late_outcome` keeps what it returned, TASK-1). Status stays cancelled.
//  3. With an idempotency key, (tool, key) names at most one unexpired task: Create() of a
//     used key returns the existing task (same fingerprint) or kKeyMismatch (different one).
//     An expired row under the key is deleted and replaced.
//  4. A task with a ttl expires at created_ms + ttl_ms; Get() still returns an expired row
//     until SweepExpired() deletes it (callers answer "expired"), List() never shows one.
//  5. Times are wall-clock milliseconds since the Unix epoch, passed in by the caller.
//  6. A stored JSON column that cannot be read back (not JSON, or nested deeper than
//     kMaxJsonDepth: bounded_json.h) reads as null; a completed task then has no result.
//  7. A task waiting for input (input_required) holds what it asks (input_requests: key ->
//     {method, params}) and the answers given so far (input_answers). Park() moves a working
//     task there; AnswerInput() adds answers to outstanding keys only, and once none is
//     outstanding moves it back to working, owned by the process that resumes it.
//
// Errors: every member throws SqliteError when SQLite fails (SQLITE_BUSY included, after
// the connection's busy timeout).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ledger/database.h"

namespace keel {

using Json = nlohmann::json;

enum class TaskStatus { kWorking, kInputRequired, kCompleted, kFailed, kCancelled };
// "working", "input_required", "completed", "failed", "cancelled" (the MCP names, stored).
std::string_view TaskStatusName(TaskStatus status);
std::optional<TaskStatus> ParseTaskStatus(std::string_view name);
bool IsTerminal(TaskStatus status);

// TASK-1: what keel knows about the work of a cancelled task.
enum class CancelPhase {
  kNone,                 // not cancelled
  kRequested,            // tasks/cancel acknowledged; the work has not stopped yet
  kObserved,             // the worker reached a checkpoint and stopped
  kFinishedAfterCancel,  // the work ran to its end anyway; late_outcome says how
};
// "none", "requested", "observed", "finished_after_cancel".
std::string_view CancelPhaseName(CancelPhase phase);

struct TaskRecord {
  int64_t seq = 0;  // creation order, assigned by Create (list order and cursors)
  std::string task_id;
  std::string tool;
  TaskStatus status = TaskStatus::kWorking;
  std::string status_message;  // empty: none
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  std::optional<int64_t> ttl_ms;  // nullopt: unlimited
  int64_t poll_interval_ms = 1000;
  Json request;                 // the tools/call params as received: {name, arguments, _meta?}
  std::string idempotency_key;  // empty: none
  std::string fingerprint;      // of (tool, arguments); empty without a key
  Json result;                  // completed/failed: the CallToolResult; null otherwise
  Json error;  // failed with a JSON-RPC error: {code, message, data?}; null otherwise
  CancelPhase cancel_phase = CancelPhase::kNone;
  Json late_outcome;  // kFinishedAfterCancel: what the work returned; null otherwise
  std::string owner;  // the keel process running it ("keel-<pid>-<random>")
  int64_t owner_pid = 0;
  int64_t lease_until_ms = 0;  // the owner renews it while the task runs
  Json input_requests;         // input_required: what it asks, key -> {method, params}; else null
  Json input_answers;          // the answers given so far (an object), kept across runs; or null

  bool Expired(int64_t now_ms) const { return ttl_ms && created_ms + *ttl_ms <= now_ms; }
};

class TaskStore {
 public:
  // `db` must stay open while the store is used; its schema must be migrated.
  explicit TaskStore(Database& db) : db_(db) {}

  enum class CreateOutcome { kCreated, kExisting, kKeyMismatch };
  struct Created {
    CreateOutcome outcome = CreateOutcome::kCreated;
    TaskRecord task;  // kCreated: the new row (seq set); kExisting/kKeyMismatch: the old one
  };
  // Inserts `task` (status working; seq ignored) in one transaction, after the
  // idempotency check of invariant 3. Returns once the row is committed. The row keeps the
  // task's own times; `now_ms` only decides whether a row under the key has expired. A new
  // task has no outcome yet: cancel phase none, result, error and late_outcome null.
  Created Create(const TaskRecord& task, int64_t now_ms);

  // The row, expired or not; nullopt when there is none.
  std::optional<TaskRecord> Get(std::string_view task_id);

  struct Page {
    std::vector<TaskRecord> tasks;
    std::optional<int64_t> next_after;  // set when more tasks follow: pass it as after_seq
  };
  // Unexpired tasks with seq > after_seq, in creation order, at most `limit`.
  Page List(int64_t after_seq, size_t limit, int64_t now_ms);

  // Invariant 1: moves a non-terminal task to `status` (completed or failed) with its
  // outcome (`result` or `error`, the other null) and message. False when the task is
  // terminal already or gone: nothing changes.
  bool Finish(std::string_view task_id, TaskStatus status, std::string_view message,
              const Json& result, const Json& error, int64_t now_ms);
  // Moves a non-terminal task to cancelled, phase requested, with `message`. False when
  // terminal already or gone.
  bool Cancel(std::string_view task_id, std::string_view message, int64_t now_ms);
  // Invariant 2. False unless the row is cancelled and its phase is still requested (the
  // work ends once). `phase` is observed or finished_after_cancel; `late_outcome` is stored
  // for finished_after_cancel only.
  bool RecordAfterCancel(std::string_view task_id, CancelPhase phase, std::string_view message,
                         const Json& late_outcome, int64_t now_ms);

  // Invariant 7: moves a working task to input_required, asking `input_requests`, with the
  // answers kept so far. False when the task is not working (cancelled meanwhile, or gone).
  bool Park(std::string_view task_id, const Json& input_requests, const Json& answers,
            int64_t now_ms);
  // Who resumes a task whose last question is answered, and the bound on its answers.
  struct InputOwner {
    std::string owner;
    int64_t pid = 0;
    int64_t lease_until_ms = 0;
    size_t max_answer_bytes = 0;  // the answers, as JSON, at most this: else kTooLarge
  };
  enum class AnswerOutcome {
    kNotWaiting,    // gone, expired, or not input_required: nothing written
    kStillWaiting,  // answers kept; some keys are still outstanding
    kResumed,       // every key answered: working again, owned by `resumer`
    kTooLarge,      // the answers would exceed max_answer_bytes: nothing written
  };
  struct Answered {
    AnswerOutcome outcome = AnswerOutcome::kNotWaiting;
    std::optional<TaskRecord> task;  // the row after the write (before it when none)
  };
  // Invariant 7, in one transaction: `responses` (key -> answer) for the outstanding keys;
  // other keys are ignored.
  Answered AnswerInput(std::string_view task_id, const Json& responses, const InputOwner& resumer,
                       int64_t now_ms);

  // Renews the lease of `owner`'s non-terminal tasks. Returns how many.
  size_t RenewLeases(std::string_view owner, int64_t lease_until_ms);
  // Non-terminal tasks whose owner is not `except_owner` (start-up and periodic recovery
  // decide which of them were orphaned by a process that died).
  std::vector<TaskRecord> Unfinished(std::string_view except_owner);
  // Recovery by exactly one survivor (DIST-2): makes a working task of `from_owner` ours.
  // False when another keel took it first, or it is no longer working.
  bool TakeOver(std::string_view task_id, std::string_view from_owner, std::string_view to_owner,
                int64_t to_pid);
  // Tasks of `owner` cancelled (phase requested) by a tasks/cancel, perhaps another keel's:
  // their work must be stopped where it runs (TaskManager's cancel watch).
  std::vector<std::string> CancelRequestedOf(std::string_view owner);
  // Deletes expired tasks. Returns how many.
  size_t SweepExpired(int64_t now_ms);

  Database& db() { return db_; }

 private:
  Database& db_;
};

}  // namespace keel
