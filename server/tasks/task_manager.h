// TaskManager: durable tasks on the loop thread (TASK-1, TASK-2, TASKX-1), for both the MCP
// 2025-11-25 tasks (SEP-1686) and the 2026-07-28 tasks extension (SEP-2663): one store, each
// answer in the dialect of the request it answers (task_wire.h). It answers tasks/get,
// tasks/list, tasks/result, tasks/cancel and tasks/update, creates a task for a
// task-augmented tools/call (or a call the server makes a task), and turns the fate of a
// task's work (from the RequestCoordinator) into durable task state. Every read and write
// goes through the TaskStoreThread; answers come back through EventLoop::Post.
//
// Files: task_manager.cc (request tracking, notifications, upkeep), task_creation.cc
// (creation and promotion), task_methods.cc (tasks/get|list|result|cancel),
// task_lifecycle.cc (the work's fate), task_input.cc (parking, tasks/update, resuming).
//
// Thread: loop thread only.
// Invariants:
//  1. CreateTaskResult is sent only after the task row is committed; the work starts after.
//  2. The loop decides each live task's terminal state once, in memory, before the write
//     (first of: the work settles, tasks/cancel). The store thread writes in that order
//     (FIFO), so tasks/get posted after a decision reads it.
//  3. tasks/cancel of a live task: the task is cancelled in memory, its work is cancelled
//     (no progress after), the row is written cancelled (phase requested), and only then is
//     the response sent, saying what was written. Answers and status notifications always
//     show a state once it is written, in the order written. Whatever the work does later
//     leaves the status cancelled; when its worker returns, the phase becomes observed (it
//     stopped at a checkpoint, or never started) or finished_after_cancel (it ran to its end;
//     what it returned is kept).
//  4. tasks/result of a live task waits, without polling, until the terminal state is
//     written; it answers what the call would have returned plus the related-task _meta,
//     and a JSON-RPC error (-32603, data.status "cancelled") for a cancelled task.
//  5. Every request this class answers later is tracked by its id and peer (ReplyTo; two
//     peers may use one id): it counts as in flight for that peer, and
//     notifications/cancelled for it from that peer drops the answer (a cancelled creation
//     cancels the task it made). Progress and status notifications go out only after
//     notifications/initialized; status notifications carry the full Task.
//  6. Shutdown leaves unfinished tasks `working` in the file: the next start-up (or another
//     keel on the same file) recovers them (see task_recovery.h).
//  7. Extension dialect: tasks/cancel and tasks/update answer an empty acknowledgement, and
//     cancelling a terminal task is acknowledged the same (only an unknown or expired id is
//     -32602). A promoted call (Promote) is answered with its CreateTaskResult once its row
//     is committed, like a creation; its work runs on meanwhile. Extension tasks get no
//     notifications/tasks/status (the extension has none outside subscriptions/listen).
//  8. Every answer goes to the exchange of the request it answers, through the OutputRouter
//     (output_router.h); status notifications concern no request: kNoExchange. A line
//     whose exchange is gone is dropped (counted: unroutable()).
//  9. Extension dialect: a task's work that asks for input (AskForInput) parks the task:
//     it is written input_required with its inputRequests (TaskStore::Park), and the loop
//     forgets it once its worker returned: a parked task is a stored row only, run by
//     nobody, and stays parked across restarts (task_recovery.h) until answered, cancelled
//     or expired. tasks/update keeps the answers to outstanding keys with the task (at most
//     kMaxCarriedAnswerBytes); when none is outstanding the task is working again, owned by
//     this process, and its work runs again from the start with every answer so far
//     (ToolContext::InputResponse): a tool asks before it acts, so the re-run is safe. The
//     acknowledgement goes out after the write. tasks/cancel of a parked task cancels it,
//     phase observed. A legacy task's work that asks still ends input_unavailable.
// 10. A tasks/cancel answered by another keel sharing the store writes the row cancelled
//     (phase requested) there; every cancel_watch_ms, while this keel runs a task's work,
//     it asks the store for its tasks so cancelled and cancels their work here as a
//     tasks/cancel would (no progress after, waiters answered cancelled); when the worker
//     returns, the phase is written as in invariant 3. A cancel thus reaches the work within
//     about cancel_watch_ms plus one store read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "ledger/task_store.h"
#include "protocol/mcp_era.h"
#include "server/call/call_answer.h"
#include "server/call/settlement.h"
#include "server/runtime/event_loop.h"
#include "server/tasks/task_store_thread.h"
#include "server/tasks/task_wire.h"
#include "server/transport/exchange.h"
#include "server/transport/output_router.h"
#include "server/transport/output_sink.h"

namespace keel {

using Json = nlohmann::json;

struct TaskOptions {
  size_t max_tasks = 64;                    // --max-tasks: live tasks in this process
  int64_t max_ttl_ms = 24LL * 3600 * 1000;  // --task-max-ttl; 0: unlimited (ttl null)
  int64_t poll_interval_ms = 1000;          // --task-poll-interval
  size_t page_size = 100;                   // tasks per tasks/list page
  std::string owner;                        // this process, as in the ledger
  int64_t pid = 0;
  int64_t lease_ms = 60000;  // renewed every lease_ms / 3
  // How often the store is asked whether another keel cancelled a task this one runs
  // (invariant 10); 0: never (a single keel needs no watch).
  int64_t cancel_watch_ms = 0;
};

class TaskManager {
 public:
  // Starts the work of a freshly created task; returns its coordinator generation, or
  // nullopt when the server is shutting down (the task then fails without running).
  using StartFn =
      std::function<std::optional<uint64_t>(const TaskRecord& task, Json progress_token)>;
  // Cancels a task's work in the coordinator (CancelTask).
  using CancelWorkFn = std::function<void(uint64_t generation)>;

  // Answers go to `sink` until set_router.
  TaskManager(EventLoop& loop, OutputSink& sink, TaskStoreThread& store, TaskOptions options,
              std::function<int64_t()> now_ms);

  // Where answers go from now on (invariant 8); must outlive this. Null: back to the
  // constructor's sink.
  void set_router(OutputRouter* router) { router_ = router != nullptr ? router : &own_router_; }

  // A request this manager answers (now or later): its JSON-RPC id, the exchange it came on
  // (where its answer goes; its close cancels it) and the peer that sent it (invariant 5).
  struct ReplyTo {
    Json id;
    ExchangeId exchange = kNoExchange;
    PeerId peer = kNoPeer;
  };

  void set_start(StartFn fn) { start_ = std::move(fn); }
  // How extension-dialect answers name the server (protocol/mcp_era.h); must outlive this.
  void set_stamp(const ResultStamp* stamp) { stamp_ = stamp; }
  void set_cancel_work(CancelWorkFn fn) { cancel_work_ = std::move(fn); }

  // A validated task-augmented tools/call.
  struct CreateRequest {
    Json id;                            // the tools/call request id
    ExchangeId exchange = kNoExchange;  // where it came on: its close cancels the creation
    PeerId peer = kNoPeer;              // who sent it
    std::string tool;
    Json params;  // {name, arguments, _meta?}, stored as the task's request
    std::optional<int64_t> requested_ttl_ms;     // params.task.ttl
    std::string idempotency_key;                 // empty: none
    std::string fingerprint;                     // of (tool, arguments) when keyed
    Json progress_token;                         // null: no progress notifications
    TaskDialect dialect = TaskDialect::kLegacy;  // how the creation is answered
  };
  // No room for another task (--max-tasks), counting creations not yet committed.
  bool AtLimit() const { return live_.size() + creating_ >= options_.max_tasks; }
  void Create(CreateRequest request);

  // A modern tools/call still running that the server makes a task (--task-after): its work
  // goes on as generation `generation` (the caller moves it to the task in the coordinator,
  // RequestCoordinator::PromoteToTask, right after this returns). Request `id` is answered
  // with the CreateTaskResult once the row is committed (invariant 7). Returns the row.
  struct PromoteRequest {
    Json id;
    ExchangeId exchange = kNoExchange;
    PeerId peer = kNoPeer;
    std::string task_id;  // NewTaskId(), chosen by the caller
    std::string tool;
    Json params;  // {name, arguments, _meta}
    std::optional<int64_t> requested_ttl_ms;
    uint64_t generation = 0;
    Json input_answers;  // the call's answers so far (its input round), kept with the task
  };
  TaskRecord Promote(PromoteRequest request);
  // The task whose work is generation `generation` (a promoted call's worker does not know
  // it); empty when none.
  std::string TaskOfWork(uint64_t generation) const;
  // The tasks/* methods (task_methods.cc), decoded (protocol/mcp_types.h), for request `to`.
  // tasks/list's result goes out as `wire`'s era writes it.
  void Get(const ReplyTo& to, const GetTaskRequest& request, TaskDialect dialect);
  void List(const ReplyTo& to, const ListTasksRequest& request, const WireForm& wire);
  void Result(const ReplyTo& to, const TaskResultRequest& request);
  void Cancel(const ReplyTo& to, const CancelTaskRequest& request, TaskDialect dialect);
  // Extension only (invariants 7 and 9).
  void Update(const ReplyTo& to, const UpdateTaskRequest& request);

  // The coordinator settled a task's work (its on_settle).
  void OnSettled(const std::string& task_id, CallState state, CallAnswer answer);
  enum class WorkEnd { kNeverStarted, kStoppedAtCheckpoint, kReturned, kParked };
  // A task's worker returned (`result` is what the tool returned) or its job found the
  // work settled before it started.
  void OnWorkEnded(const std::string& task_id, WorkEnd how, Json result);

  // `peer`'s request `id` is ours and still unanswered (invariant 5).
  bool InFlight(const Json& id, PeerId peer = kNoPeer) const;
  // notifications/cancelled from `peer` for one of its requests: true when it was ours.
  bool CancelRequest(const Json& id, PeerId peer = kNoPeer);
  // The exchange of some of our requests is gone: they are cancelled as by CancelRequest
  // (never answered; a creation not yet answered cancels its task). The tasks themselves
  // live on. Returns how many requests were cancelled.
  size_t CancelExchange(ExchangeId exchange);
  // `peer` is gone (Session::ForgetPeer): its requests are cancelled as by CancelExchange.
  size_t CancelPeer(PeerId peer);
  // Answers and notifications whose exchange was gone (invariant 8).
  uint64_t unroutable() const { return dropped_.lines(); }

  void set_client_ready() { client_ready_ = true; }
  // Shutdown: unanswered tasks/result requests get an error now.
  void ShutDown();
  // No store job is outstanding (shutdown waits for it).
  bool idle() const { return jobs_in_flight_ == 0; }
  void set_on_idle(std::function<void()> fn) { on_idle_ = std::move(fn); }

  // Periodic upkeep on the store thread: lease renewal for this process's tasks, and the
  // sweep of expired tasks plus recovery of orphans (`recover` runs on the store thread).
  void StartMaintenance(std::function<void(TaskStore&)> recover);

  size_t live() const { return live_.size(); }
  // The coordinator generation of a live task's work (tests and diagnostics).
  std::optional<uint64_t> GenerationOf(const std::string& task_id) const {
    const auto it = live_.find(task_id);
    if (it == live_.end()) return std::nullopt;
    return it->second.generation;
  }

 private:
  struct Live {
    TaskRecord record;                 // the loop's view: status is the decided one
    uint64_t generation = 0;           // its work in the coordinator
    bool work_ended = false;           // the worker returned, or the work never started
    bool terminal_written = false;     // terminal (or parked) state written, or failed to be
    size_t writes_pending = 0;         // store writes of this task not yet come back
    std::vector<ReplyTo> waiters;      // tasks/result requests, in arrival order
    bool parked = false;               // its work asked for input (invariant 9)
    std::optional<TaskRecord> resume;  // answered while this run is still tracked: run next
  };

  // Runs `work` on the store thread and `done` on the loop with what it returned, or with
  // the SqliteError text (`error` non-empty, value default). Defined in task_store_job.h.
  template <typename T>
  void Store(std::function<T(TaskStore&)> work, std::function<void(T, std::string error)> done);

  // Invariant 5: answers (or drops, when cancelled) a tracked request, on its exchange (8).
  void Track(const ReplyTo& to);
  void Answer(const ReplyTo& to, const std::string& line);
  void AnswerResult(const ReplyTo& to, const Json& result,
                    TaskDialect dialect = TaskDialect::kLegacy);
  void AnswerError(const ReplyTo& to, int code, const std::string& message,
                   const Json& data = Json());
  // tasks/result for a terminal task: its outcome, or the cancelled error.
  void AnswerOutcome(const ReplyTo& to, const TaskRecord& task);
  // The tracked request `to`; null once answered.
  struct Pending;
  Pending* PendingOf(const ReplyTo& to);
  void NotifyStatus(const TaskRecord& task);

  // Creation (task_creation.cc): the row is committed (or not); answer, then start.
  void OnCreated(const ReplyTo& to, Json progress_token, const TaskStore::Created& created,
                 const std::string& error, TaskDialect dialect);
  void OnPromoted(const ReplyTo& to, const std::string& task_id, const TaskStore::Created& created,
                  const std::string& error);
  void CancelUnannounced(const ReplyTo& to, const std::string& task_id);
  void StartWork(const ReplyTo& to, const TaskRecord& task, Json progress_token,
                 TaskDialect dialect);
  // tasks/cancel of a task this process runs, or of one only the store knows.
  void CancelLive(const ReplyTo& to, Live& live, int64_t now, TaskDialect dialect);
  void CancelStored(const ReplyTo& to, const std::string& task_id, int64_t now,
                    TaskDialect dialect);
  // Invariant 10: the store's cancelled rows of this keel's running tasks, and their work
  // cancelled here.
  void WatchForeignCancels();
  void CancelledElsewhere(const std::string& task_id);

  // Invariant 9 (task_input.cc): the work asked `asked` (an AskForInput result); and a task
  // whose questions are all answered runs again.
  void Park(const std::string& task_id, Json asked);
  void Resume(const TaskRecord& task);
  // The work of a live task could not start (shutdown): it fails, and calling again is safe.
  void FailUnstarted(const std::string& task_id);

  // Writes the decided terminal state of a live task, then answers its waiters.
  void Persist(const std::string& task_id);
  void AfterCancel(const std::string& task_id, WorkEnd how, Json result);
  void EraseIfDone(const std::string& task_id);
  // Answers the error when the store failed, or the task is unknown or expired ("Failed
  // to <action> task: ..."); false when `task` is there to use.
  bool AnswerIfUnavailable(const ReplyTo& to, const std::string& task_id,
                           const std::optional<TaskRecord>& task, const std::string& error,
                           const char* action);
  void JobDone();

  // Cancels (as CancelRequest) every unanswered request that `matches`; how many.
  template <typename Matches>
  size_t CancelWhere(Matches matches);

  EventLoop& loop_;
  SingleSinkRouter own_router_;
  OutputRouter* router_ = &own_router_;
  DroppingSink dropped_;
  TaskStoreThread& store_;
  TaskOptions options_;
  std::function<int64_t()> now_ms_;
  StartFn start_;
  CancelWorkFn cancel_work_;
  const ResultStamp* stamp_ = nullptr;

  std::unordered_map<std::string, Live> live_;  // task id -> a task this process runs
  size_t creating_ = 0;                         // creations waiting for their commit
  // PeerIdKey of every request answered later -> cancelled by notifications/cancelled.
  struct Pending {
    ExchangeId exchange = kNoExchange;
    PeerId peer = kNoPeer;
    bool cancelled = false;
  };
  std::unordered_map<std::string, Pending> pending_;
  bool client_ready_ = false;
  size_t jobs_in_flight_ = 0;
  std::function<void()> on_idle_;
  std::function<void()> renew_timer_;   // lease renewal, every lease_ms / 3
  std::function<void()> upkeep_timer_;  // recovery and sweep, every minute
  std::function<void()> watch_timer_;   // invariant 10, every cancel_watch_ms
  bool watching_ = false;               // a cancel-watch read is in flight
};

}  // namespace keel
