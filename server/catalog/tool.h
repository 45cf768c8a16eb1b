// Tool: one operation keel serves through tools/call, plus the context a call runs in.
//
// Thread-safety: Call() runs on a worker thread (or on the loop thread for tools whose
// spec says runs_on_loop: those must return at once and never block). A Tool object is
// shared by concurrent calls, so Call() must be reentrant.
// Cancellation is cooperative: a tool calls ctx.checkpoint() between steps, checks
// ctx.cancelled(), or waits on ctx.token(); its worker slot is free as soon as it returns.
// Whatever it returns after a cancel or a timeout is discarded by the RequestCoordinator,
// and so are its progress and log messages.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/logging_level.h"
#include "protocol/tool_result.h"
#include "server/call/call_identity.h"
#include "server/policy/policy_types.h"
#include "server/runtime/cancellation.h"
#include "server/runtime/clock.h"

namespace keel {

using Json = nlohmann::json;

// MCP 2025-11-25 `execution.taskSupport`: may a client call the tool as a task?
enum class TaskSupport { kForbidden, kOptional, kRequired };
// "forbidden", "optional", "required".
std::string_view TaskSupportName(TaskSupport support);

struct ToolSpec {
  std::string name;  // ^[a-zA-Z0-9_-]{1,64}$ (hosts reject anything else)
  std::string title;
  std::string description;
  Json input_schema;  // a JSON Schema object with "type": "object"
  // keel validates the arguments against input_schema (the registry checks the schema once)
  // and reads output_schema (ForOutputSchema). False only for a wrapped server's tool whose
  // schemas keel's validator cannot read: they are listed as the upstream wrote them, and
  // the upstream validates.
  bool validate_arguments = true;
  Json annotations;  // MCP ToolAnnotations hints, or null
  // Instant and non-blocking: runs on the loop thread and takes no worker slot.
  bool runs_on_loop = false;
  TaskSupport task_support = TaskSupport::kForbidden;
  // What the tool does to the world; write classes are stopped by the kill switch (OPS-2).
  EffectClass effect = EffectClass::kRead;
  // The tool reads the kill switch itself, inside the write transaction of its effect, and
  // answers KillSwitchAnswer (server/call/kill_switch_answer.h) when it is on: exact (no
  // write between the check and the commit) and one read per transaction. The call runner
  // then does not read it first. keel's in-database mutations (ledger_tools.h) do.
  bool kill_switch_in_transaction = false;

  // From the tool catalog (server/catalog/catalog.h; docs/catalog.md). Built-in specs leave
  // them at their defaults until the catalog describes the tool.
  Json output_schema;   // listed as outputSchema when not null
  std::string backend;  // the retry budget's and breaker's scope; empty: the tool's name
  // OPS-3: calls need an `approval_id` argument, which becomes part of the idempotency key.
  bool approval_required = false;
  // The arguments that make a call's intent for idempotency; empty: all of them.
  std::vector<std::string> key_components;
  std::optional<TimeoutSettings> timeouts;  // nullopt: the policy's
  std::optional<RetrySettings> retry;       // nullopt: the policy's
  std::optional<int64_t> result_ttl_ms;     // nullopt: the server's default
  // The tool may answer AskForInput (protocol/tool_result.h) to ask the client for input
  // (server/input/input_round.h). It must ask before it acts: an asking call did nothing.
  bool asks_for_input = false;
  // `keel wrap` only (catalog_overlay.h): the upstream tool takes the call's idempotency key
  // (from either place), so keel forwards it as _meta["dev.keel/idempotency-key"], and as the
  // idempotencyKey argument too when the upstream's own inputSchema declares that property.
  // False: the _meta key stays keel's; an idempotencyKey argument reaches the upstream only
  // when the upstream declares it (it is then the upstream's own argument).
  bool upstream_takes_key = false;

  const std::string& backend_or_name() const { return backend.empty() ? name : backend; }
};

// What a tool can tell, after a restart, about a call that a previous keel process was
// running when it died (a durable task left `working`).
struct Reconciled {
  enum class Outcome {
    kUnknown,       // the tool cannot tell: the work may or may not have happened
    kHappened,      // it finished; `result` is what the call returned
    kDidNotHappen,  // surely no effect: a retry is safe
  };
  Outcome outcome = Outcome::kUnknown;
  Json result;  // kHappened: the CallToolResult
};

// Thrown by ToolContext::checkpoint() once the call is cancelled; the worker catches it.
struct CallCancelled {};

class ToolContext {
 public:
  using ProgressFn =
      std::function<void(double progress, std::optional<double> total, std::string message)>;
  using LogFn = std::function<void(LoggingLevel level, std::string message)>;
  using BecomeTaskFn = std::function<void()>;

  ToolContext(Json arguments, CancellationToken token, ProgressFn progress)
      : arguments_(std::move(arguments)),
        token_(std::move(token)),
        progress_(std::move(progress)) {}

  const Json& arguments() const { return arguments_; }
  // The arguments that make the call's intent for idempotency: all of them, or only the
  // catalog's key components (and approval_id) when it names some.
  Json intent_arguments() const;
  void set_key_components(std::vector<std::string> components) {
    key_components_ = std::move(components);
  }
  // The request's params._meta (null when absent): idempotency keys travel there.
  const Json& meta() const { return meta_; }
  void set_meta(Json meta) { meta_ = std::move(meta); }
  // A tool that asks for input (ToolSpec::asks_for_input): the client's answer to its
  // question `key` of an earlier round (an ElicitResult, CreateMessageResult or
  // ListRootsResult), or null when there is none yet; and the requestState the tool gave
  // with its last question (empty: none). Every era reads the same: a call that cannot be
  // asked has no answers.
  const Json* InputResponse(const std::string& key) const;
  // Whether the client of this call declared what `input_request` ({method, params}) needs:
  // a tool asks only what it can (one asked anyway ends the call with -32021, the client
  // lacking a capability the tool cannot go on without). False when the call cannot be
  // asked anything (a legacy call, a task's work).
  bool CanAsk(const Json& input_request) const;
  const std::string& tool_state() const;
  // Who the call is (computed once, at admission): its key, for tools that run exactly once
  // per key, and its ids, for tools that pass them on (a command tool's KEEL_* variables).
  const CallIdentity& identity() const { return identity_; }
  void set_identity(CallIdentity identity) { identity_ = std::move(identity); }
  // Which attempt of the call this is: 1-based, and "<correlation_id>/<attempt>"; set
  // before each attempt.
  int attempt() const { return attempt_; }
  const std::string& attempt_id() const { return attempt_id_; }
  void set_attempt(int attempt, std::string attempt_id) {
    attempt_ = attempt;
    attempt_id_ = std::move(attempt_id);
  }
  // When the attempt ends at the latest: the attempt timeout, or a moment after the call's
  // maximum timeout (whose own timer ends the call and cancels the attempt first; see
  // retry_executor.h contract 1). Blocking waits stay inside it, and end on the cancel.
  TimePoint deadline() const { return deadline_; }
  void set_deadline(TimePoint deadline) { deadline_ = deadline; }
  // When the attempt started (the attempt timeout counts from here), on the same clock;
  // the epoch (TimePoint{}) outside the call runner.
  TimePoint attempt_started() const { return attempt_started_; }
  void set_attempt_started(TimePoint started) { attempt_started_ = started; }
  // Time left before the deadline, never negative, on the worker clock the call runs under
  // (the steady clock unless set).
  Millis remaining() const {
    const TimePoint now = clock_ != nullptr ? clock_->Now() : std::chrono::steady_clock::now();
    const auto left = deadline_ - now;
    return left > Duration::zero() ? std::chrono::duration_cast<Millis>(left) : Millis(0);
  }
  // Thread-safe; it outlives the call.
  void set_clock(const Clock* clock) { clock_ = clock; }
  const CancellationToken& token() const { return token_; }
  bool cancelled() const { return token_.IsCancelled(); }
  // Stops the tool here (throws CallCancelled) once the call is cancelled or timed out.
  void checkpoint() const {
    if (token_.IsCancelled()) throw CallCancelled{};
  }

  // Reports progress. A value above the last one restarts the call's idle clock; keel
  // forwards it (rate-limited) only when the client asked for progress.
  void ReportProgress(double progress, std::optional<double> total = std::nullopt,
                      std::string message = std::string()) {
    if (progress_) progress_(progress, total, std::move(message));
  }

  // Sends `message` to the client as an MCP log message (notifications/message, the tool's
  // name as its logger) if the client's logging level lets it through; rate-limited with
  // keel's own messages, and dropped once the call has settled. Only what the tool means
  // the client to read: the message is not filtered for secrets.
  void set_log(LogFn log) { log_ = std::move(log); }
  void Log(LoggingLevel level, std::string message) const {
    if (log_) log_(level, std::move(message));
  }

  // Asks keel to make this call a task now (MCP 2026-07-28 tasks extension: the server
  // decides): for a tool about to do long work, or one that asked for input first (the
  // rounds of questions stay a call's; the task is made on the round that has the answers).
  // True when keel will try: the call is a modern one whose request declared the extension,
  // of a tool whose taskSupport is not forbidden, not a task yet. The client then gets a
  // CreateTaskResult once the task is durably created (or, if that cannot be, the call stays
  // a call, at --max-tasks), and what the tool returns becomes the task's result. The tool
  // goes on either way; a second call does nothing more.
  void set_become_task(BecomeTaskFn fn) { become_task_ = std::move(fn); }
  bool BecomeTask() const {
    if (!become_task_) return false;
    become_task_();
    return true;
  }

 private:
  Json arguments_;
  std::vector<std::string> key_components_;
  Json meta_;
  CallIdentity identity_;
  int attempt_ = 1;
  std::string attempt_id_;
  TimePoint deadline_ = TimePoint::max();
  TimePoint attempt_started_{};
  const Clock* clock_ = nullptr;
  CancellationToken token_;
  ProgressFn progress_;
  LogFn log_;
  BecomeTaskFn become_task_;
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual const ToolSpec& spec() const = 0;
  // Returns an MCP CallToolResult ({content, structuredContent?, isError?}).
  virtual Json Call(ToolContext& ctx) = 0;
  // After a restart: what became of a call with these arguments and request _meta (a
  // tool with a durable record, e.g. the ledger by idempotency key, can tell). Runs on a
  // background thread, never on the loop.
  virtual Reconciled Reconcile(const Json& arguments, const Json& meta) {
    (void)arguments;
    (void)meta;
    return Reconciled{};
  }
};

// Only the members of `arguments` named in `components`, plus approval_id and idempotencyKey
// when present (the key is left out of fingerprints anyway); all of `arguments` when
// `components` is empty.
Json IntentArguments(const Json& arguments, const std::vector<std::string>& components);

// `result` as keel may handle it: a result nested deeper than kMaxJsonDepth (bounded_json.h)
// would recurse in every copy, comparison and encoding of it, so it becomes an isError result
// naming the limit (type "result_too_deep", rejected_permanent: the tool ran). Applied once
// to every tool's result, where it leaves the tool (CallRunner's attempt, and the loop-thread
// call of a runs_on_loop tool); measured without recursion.
Json BoundedResult(Json result, const std::string& tool);

// A result as it is sent for `spec`. The official TypeScript SDK client (1.x) validates
// structuredContent against the tool's outputSchema even on an isError result and throws
// instead of returning the error; so for a tool with an outputSchema, an isError result whose
// structuredContent does not match it carries that content in _meta instead:
// _meta["dev.keel/error"] (its "error" member) or _meta["dev.keel/structuredContent"].
// Any other result is returned unchanged.
Json ForOutputSchema(const ToolSpec& spec, Json result);

}  // namespace keel
