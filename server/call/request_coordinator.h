// RequestCoordinator: owns every tools/call from admission to settle, and is the single
// authority on its fate. Loop thread only; workers reach it through EventLoop::Post().
//
// Invariants:
//  1. Each admitted request settles exactly once (see Settlement): completed, failed,
//     cancelled, timed_out or shut_down, with a reason. The first terminal event wins.
//     Whatever arrives for a settled request (a late result, late progress, a second
//     cancel) is dropped here and counted, never trusted to the tool.
//  2. Entries are keyed by a generation, never reused; the JSON-RPC id, scoped by its peer
//     (CallIdentity::peer; two peers may use one id at once), maps to the live generation
//     only, so a reused id never touches an old entry nor another peer's.
//  3. Cancelled settles silently: no response, and no progress after it: unsent progress
//     is taken back from the sink (DiscardProgress) and rate-limited progress is dropped.
//  4. A call settled while queued never runs (CallControl). A call settled while running
//     stays counted ("draining") until its worker returns, so admission accounts for slots
//     a slow-to-stop tool still holds; one still running `hold_after` later is reported
//     through on_held (and on_released when it finally returns).
//  5. Progress: only strictly increasing values are accepted. An accepted value resets the
//     idle clock whether or not the client asked for progress; it is sent only with the
//     client's token (echoed with its exact type), at most once per `progress_interval`
//     per request (the newest value wins; one left over is sent when the interval ends).
//  6. Two clocks per call (TMO-1): idle (since acceptance, the last accepted progress, or
//     the end of a retry's backoff: keel's own wait between attempts is not the tool
//     going silent) and maximum (since acceptance; time queued counts; never reset). One deadline
//     per call, min(last_progress + idle, accepted + max); when it passes, the call gets one
//     isError result with structuredContent.error {type: "timeout", layer, elapsed_ms,
//     limit_ms, correlation_id} and its work is cancelled as in 3-4.
//  7. Time comes from the injected Clock; the owner arms one loop timer at NextDeadline()
//     and calls RunDue() when it fires.
//  8. Task work (BeginTask) has no JSON-RPC request waiting: it is not reachable by
//     notifications/cancelled or a closed exchange (only CancelTask), and its terminal
//     outcome goes to its on_settle callback instead of stdout. Its progress carries
//     `progress_meta` in _meta. It counts as live (shutdown grace, admission) like any call.
//  9. A call can become task work while it runs (PromoteToTask, the 2026-07-28 tasks
//     extension): from then on it is as 8, sends no progress and no log messages (the
//     extension sends neither for tasks), and its maximum clock is the task's.
// 10. Every line about a call goes to the exchange it came on (CallIdentity::exchange), found
//     through the OutputRouter: its response, progress, DiscardProgress (a task's work, of
//     no exchange: kNoExchange). A line whose exchange is gone is dropped and counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/call/call_answer.h"
#include "server/call/call_control.h"
#include "server/call/call_identity.h"
#include "server/call/settlement.h"
#include "server/policy/policy_types.h"
#include "server/runtime/clock.h"
#include "server/transport/output_router.h"
#include "server/transport/output_sink.h"

namespace keel {

using Json = nlohmann::json;

// The two clocks of one call. A zero idle means no idle clock.
struct CallLimits {
  Duration idle = Millis(30000);
  Duration max = Millis(55000);
  // Named in a timeout's text: the setting an operator changes to change the limit.
  TimeoutSource source = TimeoutSource::kFlags;
};

class RequestCoordinator {
 public:
  struct Options {
    size_t max_inflight = 256;
    Duration progress_interval = Millis(50);  // at most 20 notifications/s per request
    Duration hold_after = Millis(100);        // a settled call still running is "held"
    std::string correlation_prefix = "k";
  };

  struct Admitted {
    uint64_t generation = 0;
    std::shared_ptr<CallControl> control;  // shared with the worker job
    CallIdentity identity;                 // the call's, with its correlation id
  };

  // What was dropped or ignored, for tests, logs and traces.
  struct Stats {
    uint64_t late_results_dropped = 0;    // a worker returned after its call settled
    uint64_t late_progress_dropped = 0;   // progress for a settled or unknown call
    uint64_t stale_progress_dropped = 0;  // a value not above the last one
    uint64_t ignored_cancels = 0;         // unknown, settled or malformed requestId
    uint64_t never_started = 0;           // settled while queued: never ran
    uint64_t timeouts = 0;
    uint64_t held = 0;        // slots reported through on_held so far
    uint64_t resyncs = 0;     // requests whose progress the sink dropped
    uint64_t unroutable = 0;  // writes for an exchange the router no longer knows (10)
  };

  // Every call's output goes to `sink` until set_router.
  RequestCoordinator(OutputSink& sink, const Clock& clock, Options options);
  ~RequestCoordinator();

  // Where each call's output goes from now on (invariant 10); must outlive this. Null:
  // back to the constructor's sink.
  void set_router(OutputRouter* router) { router_ = router != nullptr ? router : &own_router_; }

  // Whether `peer`'s request `id` is a live call.
  bool InFlight(const Json& id, PeerId peer = kNoPeer) const;
  // No room for another call: live plus draining calls reach max_inflight.
  bool AtCapacity() const { return entries_.size() >= options_.max_inflight; }
  // Live plus draining calls that client `client` sent (CallIdentity::client).
  size_t LiveOf(uint64_t client) const {
    const auto it = per_client_.find(client);
    return it == per_client_.end() ? 0 : it->second;
  }

  // Admits the call `identity` (its request_id is the JSON-RPC id of its peer) in state
  // queued; the clocks start now. The identity gets its correlation id here.
  Admitted Begin(CallIdentity identity, Json progress_token, CallLimits limits);

  // How a task's work ended (invariant 8): the CallToolResult for completed, failed and
  // timed_out; the JSON-RPC error for shut_down; nothing for cancelled.
  using SettleFn = std::function<void(CallState state, CallAnswer answer)>;
  // Admits the work of a task: like Begin, without a request id.
  Admitted BeginTask(CallIdentity identity, Json progress_token, Json progress_meta,
                     CallLimits limits, SettleFn on_settle);
  // Invariant 9: the unsettled call answering `peer`'s `request_id` becomes the work of task
  // `task_id`. It leaves the id map (whoever promoted it answers the request), unsent
  // progress is taken back, its maximum clock becomes `max` (from its acceptance; idle is
  // unchanged) and its outcome goes to `on_settle`. False when no unsettled call answers
  // `request_id`.
  bool PromoteToTask(const Json& request_id, std::string task_id, Duration max, SettleFn on_settle,
                     PeerId peer = kNoPeer);
  // tasks/cancel: settles the task's work as cancelled (on_settle runs) and cancels it.
  // False if it had settled already.
  bool CancelTask(uint64_t generation);

  // The worker returned. An isError result settles as failed, anything else as completed;
  // `threw` marks a tool that raised instead of returning. Dropped if already settled.
  void Complete(uint64_t generation, Json result, bool threw = false);

  // A tool's progress report (invariant 5).
  void Progress(uint64_t generation, double progress, std::optional<double> total,
                std::string message);

  // keel scheduled a retry that starts at `attempt_at`: the idle clock restarts then (never
  // earlier than it already would). The maximum clock is untouched.
  void RestartIdleClockAt(uint64_t generation, TimePoint attempt_at);

  // keel waits for the client's answers to the call's questions (a legacy call of a tool
  // that asks, server/input/client_requests.h): while `waiting`, its idle clock is paused
  // (the user is not the tool going silent); the maximum clock runs on. Back to false, the
  // idle clock restarts now.
  void WaitForClient(uint64_t generation, bool waiting);

  // notifications/cancelled from `peer`: settles its request silently and cancels its work.
  // Unknown, settled or malformed ids are ignored (CAN-3), and so is another peer's call
  // with the same id. True when a request was cancelled.
  bool Cancel(const Json& request_id, PeerId peer = kNoPeer);

  // The exchange the requests came on is gone (server/transport/transport.h, invariant 2):
  // each unsettled call with identity.exchange == `exchange` settles silently as cancelled
  // ("exchange closed") and its work is cancelled, exactly as for notifications/cancelled
  // (CAN-2, CAN-5). kNoExchange matches nothing. Returns how many were cancelled.
  size_t CancelExchange(ExchangeId exchange);
  // `peer` is gone (a legacy HTTP session ended: Session::ForgetPeer): each of its unsettled
  // calls is cancelled as by CancelExchange ("peer gone"). Returns how many.
  size_t CancelPeer(PeerId peer);

  // Shutdown: every live request gets one error response and its work is cancelled.
  // Returns how many were settled this way.
  size_t ShutDownAll(int code, std::string_view message);

  // The sink dropped unsent progress of `stream` (a generation): the client missed values.
  void MarkNeedsResync(uint64_t stream);

  // The earliest time RunDue() has work (a timeout, a held progress value, a hold check).
  // Alarms of calls that have settled since are discarded first, so an idle server does
  // not wake up for them.
  std::optional<TimePoint> NextDeadline();
  void RunDue();

  // The state of the live call answering `peer`'s `id`, if any (tests and diagnostics).
  std::optional<CallState> StateOf(const Json& id, PeerId peer = kNoPeer) const;
  // Whether `generation` is admitted and not settled yet: what its tool sends after the
  // settle (a log message) is dropped like late progress.
  bool Unsettled(uint64_t generation) const { return UnsettledIdentity(generation) != nullptr; }
  // The identity of `generation` while it is admitted and not settled; null otherwise.
  const CallIdentity* UnsettledIdentity(uint64_t generation) const {
    const auto it = entries_.find(generation);
    if (it == entries_.end() || it->second.settlement.settled()) return nullptr;
    return &it->second.identity;
  }
  // Whether the worker of `generation` has started (tests: a task's work is running).
  bool Started(uint64_t generation) const {
    const auto it = entries_.find(generation);
    return it != entries_.end() && it->second.control->started();
  }
  // How the last settled call ended, for tests: state and reason.
  const std::pair<CallState, std::string>& last_settled() const { return last_settled_; }

  size_t live() const { return live_ids_.size() + live_tasks_; }
  size_t draining() const { return entries_.size() - live(); }
  const Stats& stats() const { return stats_; }
  size_t alarms() const { return alarms_.size(); }
  std::string CorrelationId(uint64_t generation) const;

  // Called whenever the last live request settles (shutdown waits for it).
  void set_on_idle(std::function<void()> fn) { on_idle_ = std::move(fn); }
  // A settled call's worker is still busy `hold_after` later, and when it returns.
  void set_on_held(std::function<void()> fn) { on_held_ = std::move(fn); }
  void set_on_released(std::function<void()> fn) { on_released_ = std::move(fn); }
  // Every settle, as it happens (the trace): the generation, its terminal state and reason.
  using SettledFn =
      std::function<void(uint64_t generation, CallState state, const std::string& reason)>;
  void set_on_settled(SettledFn fn) { on_settled_ = std::move(fn); }
  // Applied to every call's and task's result (its own or a timeout's) before it is sent or
  // handed to the task: the call (its Tool*) and the result, returning what to use.
  using ResultFilter = std::function<Json(const CallIdentity& call, Json result)>;
  void set_result_filter(ResultFilter fn) { result_filter_ = std::move(fn); }
  // Encodes a call's result (after the filter) as its response line. Null: EncodeResult
  // with the call's request id.
  using ResultEncoder = std::function<std::string(const CallIdentity& call, const Json& result)>;
  void set_result_encoder(ResultEncoder fn) { result_encoder_ = std::move(fn); }

 private:
  struct Entry {
    CallIdentity identity;  // request_id: the JSON-RPC id (null for a task's work)
    std::string id_key;     // IdKey of request_id, for logs
    std::string live_key;   // PeerIdKey: its key in live_ids_
    Json progress_token;    // null when the client asked for no progress
    Json progress_meta;     // tasks: the related-task _meta of its progress
    bool task = false;      // BeginTask: no request id (invariant 8)
    SettleFn on_settle;     // tasks: where the outcome goes; empty once it has run
    std::shared_ptr<CallControl> control;
    CallLimits limits;
    TimePoint accepted;
    TimePoint last_activity;  // acceptance or the last accepted progress
    std::optional<double> last_progress;
    // Rate limit: when the last notification went out, and the newest value held back.
    std::optional<TimePoint> last_sent;
    std::optional<std::string> held_back;  // encoded notification
    bool flush_scheduled = false;
    bool needs_resync = false;
    bool held = false;
    bool waiting_for_client = false;  // WaitForClient: no idle deadline meanwhile
    Settlement settlement;
  };

  enum class Due : uint8_t { kTimeout, kProgressFlush, kHoldCheck };
  struct Alarm {
    TimePoint when;
    uint64_t generation;
    Due what;
    bool operator>(const Alarm& other) const { return when > other.when; }
  };

  Entry* Find(uint64_t generation);
  TimePoint DeadlineOf(const Entry& entry) const;
  void Schedule(TimePoint when, uint64_t generation, Due what);
  void CompactAlarms();
  // An alarm still has work: its call exists and is in the state the alarm is for.
  bool Wanted(const Alarm& alarm);

  // Settles a live entry. Its answer is given first: the response line (none for nothing),
  // or the task's on_settle. The entry leaves the id map; it is erased at once unless its
  // worker is still running.
  void Settle(uint64_t generation, CallState state, std::string reason,
              CallAnswer answer = CallAnswer());
  Admitted Admit(Entry entry);
  void OnTimeout(Entry& entry, uint64_t generation, TimePoint now);
  void SendProgressLine(Entry& entry, uint64_t generation, std::string line, TimePoint now);
  void Erase(uint64_t generation);
  void NotifyIfIdle();
  // Settles as cancelled (`reason`) every unsettled call (not task work) that `matches`.
  template <typename Matches>
  size_t CancelWhere(Matches matches, const char* reason);
  // The sink of `entry`'s exchange (invariant 10).
  OutputSink& Out(const Entry& entry);

  SingleSinkRouter own_router_;
  OutputRouter* router_ = &own_router_;
  DroppingSink dropped_;
  const Clock& clock_;
  Options options_;
  uint64_t next_generation_ = 1;
  std::unordered_map<uint64_t, Entry> entries_;         // live and draining
  std::unordered_map<uint64_t, size_t> per_client_;     // client -> its entries (LiveOf)
  std::unordered_map<std::string, uint64_t> live_ids_;  // PeerIdKey -> live generation
  size_t live_tasks_ = 0;                               // unsettled BeginTask entries
  std::priority_queue<Alarm, std::vector<Alarm>, std::greater<Alarm>> alarms_;
  Stats stats_;
  std::pair<CallState, std::string> last_settled_{CallState::kQueued, ""};
  std::function<void()> on_idle_;
  std::function<void()> on_held_;
  std::function<void()> on_released_;
  SettledFn on_settled_;
  ResultFilter result_filter_;
  ResultEncoder result_encoder_;
};

}  // namespace keel
