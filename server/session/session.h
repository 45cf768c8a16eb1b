// Session: keel serving its clients — lifecycle, method dispatch, the admission of tools/call
// (Admit) and the hand-over of admitted calls to the worker pool, and the shutdown sequence.
// This is the orchestrator; the rules it applies live in the pieces it wires (codec,
// registry, admission, coordinator, call runner, task manager).
//
// One Session serves every peer of a transport (server/transport/exchange.h): over stdio the
// one connection; over Streamable HTTP each modern POST and each legacy HTTP session. They
// share the coordinator, the worker pool, the task manager and the ledger; what is a peer's
// own is its JSON-RPC ids and, for a legacy peer, its LegacyPeer (legacy_peer.h).
//
// Thread: loop thread only. The worker side of a call is the CallRunner's (call_runner.h);
// it reports back through a CallInbox, posted to the loop.
// Invariants:
//  1. ping is answered at once, at any time, whatever the workers are doing (unless its id
//     is in flight: 3).
//  2. Before its initialize a legacy peer is served only ping; unknown methods get -32601 at
//     any time.
//  3. A request whose id is still in flight for its peer (a tools/call, a task creation not
//     yet answered, a waiting tasks/result; 1 and "1" are different ids) gets -32600
//     whatever its method, and is not served. Ids are the peer's: another peer may use the
//     same id at once, and notifications/cancelled reaches only its sender's requests.
//  4. Every request gets exactly one answer, except a tools/call that was cancelled.
//     tools/call fates are the RequestCoordinator's; the session arms one loop timer at
//     its next deadline (timeouts, rate-limited progress).
//  5. Once shutdown begins, no new input is read; live calls get `shutdown_grace` to
//     finish, then are settled with an error; then on_finished runs once (after the
//     task store has written what was decided).
//  6. Durable tasks (2025-11-25 only, and only with a task store): a tools/call with
//     params.task creates a task (TaskManager) whose work runs like a call without a
//     request waiting; tasks/* are the TaskManager's. With 2025-06-18 the task capability
//     is not offered, tasks/* are unknown methods and params.task is ignored.
//  7. Handlers take typed requests and give typed results (protocol/mcp_types.h,
//     mcp_results.h): which methods exist, how params decode and how results are written
//     is the request's era's (protocol/mcp_era.h), never a handler's choice.
//  8. Two eras on one connection (reference/mcp-2026-07-28.md §2.2): a request with the
//     2026-07-28 envelope in its _meta (and every server/discover) is served statelessly
//     by that envelope: it needs no initialize and leaves every peer's state untouched; its
//     log messages follow its own logLevel. Any other request is legacy: its peer's
//     initialize first, then that peer's negotiated era and log level (LegacyPeer).
//  9. The 2026-07-28 tasks extension (with a task store): tasks/get, tasks/update and
//     tasks/cancel need the request to declare it (-32021 otherwise). A declaring
//     tools/call becomes a task when its tool's taskSupport is "required" (answered once
//     the row is committed), or when it is still running after `task_after` or its tool
//     asks to (ToolContext::BecomeTask), and the tool's taskSupport is not "forbidden" (its
//     work goes on as the task's). A "required" tool that asks for input
//     (ToolSpec::asks_for_input) runs its rounds of questions as a call and becomes a task
//     when it says so: MRTR first, then the task. A non-declaring call of a "required" tool
//     is -32021; otherwise it runs as a plain call.
//     A legacy params.task on a modern call is ignored.
// 10. A tool that asks for input (ToolSpec::asks_for_input; server/input/input_round.h) is
//     asked in the era of its call: a modern call's question is its InputRequiredResult
//     (BeginInput, EncodeCallResult), a legacy call's questions go to the client as
//     requests (client_requests_, answered through HandleMessage by the call's peer) while
//     the call stays open. The only requests keel sends are these.
// 11. Every line goes to the exchange of the request it answers or concerns, through the
//     OutputRouter (set_router; by default every exchange is the constructor's sink):
//     responses, errors, progress, a call's log messages and questions. Lines about no
//     request (legacy task status notifications) go to kNoExchange. A closed exchange's
//     lines are dropped; OnExchangeClosed cancels what is still waiting on it.
// 13. Resources, prompts and completion (server/surface/): lists are answered on the loop;
//     resources/read, prompts/get and a completion command run as calls of internal tools
//     through the same admission, pool, coordinator and trace as tools/call, and their
//     CallToolResult becomes the method's answer (surface_answer.h). Without a surface (or
//     an empty part of it) the methods are -32601 and nothing is declared.
// 12. subscriptions/listen (2026-07-28): the stream's first message is
//     notifications/subscriptions/acknowledged listing what keel will send (toolsListChanged
//     only); every notification on it carries _meta subscriptionId = the listen id. It ends
//     when the client closes it (its exchange closes), cancels it (stdio: notifications/
//     cancelled), its peer is forgotten, or keel shuts down (then the listen result is sent,
//     the graceful end). Its id stays in flight until then.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/json_rpc.h"
#include "protocol/mcp_era.h"
#include "server/call/admission.h"
#include "server/call/call_inbox.h"
#include "server/call/call_runner.h"
#include "server/call/call_tracer.h"
#include "server/call/request_coordinator.h"
#include "server/catalog/server_identity.h"
#include "server/catalog/tool_registry.h"
#include "server/input/client_requests.h"
#include "server/input/input_round.h"
#include "server/input/request_state.h"
#include "server/policy/policy.h"
#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"
#include "server/runtime/worker_pool.h"
#include "server/session/client_log.h"
#include "server/session/legacy_peer.h"
#include "server/session/request_spans.h"
#include "server/surface/surface.h"
#include "server/tasks/task_manager.h"
#include "server/tasks/task_store_thread.h"
#include "server/trace/trace_log.h"
#include "server/transport/exchange.h"
#include "server/transport/output_router.h"
#include "server/transport/output_sink.h"

namespace keel {

struct SessionOptions {
  // keel wrap: the wrapped server's own instructions, sent first (its tools are what the
  // model uses); empty: none.
  std::string upstream_instructions;
  // The catalog's `server` section: serverInfo's name, title and version, and the
  // instructions (unset: generated, session_instructions.h).
  ServerIdentity identity;
  // keel wrap: tools/list follows the upstream's, so every era is offered tools.listChanged
  // and told of changes (legacy peers too). Otherwise only a 2026-07-28 listener is, of a
  // policy reload.
  bool tools_follow_upstream = false;
  size_t max_inflight = 256;
  // --max-inflight-per-client: at most this many of those from one client (Exchange::client:
  // a legacy HTTP session, a modern HTTP client's address, stdio); 0: no share.
  size_t max_inflight_per_client = 0;
  size_t page_size = 100;  // tools per tools/list page
  Duration shutdown_grace = Millis(1500);
  CallLimits call_limits;                   // --idle-timeout, --max-timeout
  Duration progress_interval = Millis(50);  // per request: at most 20 progress/s
  Duration hold_after = Millis(100);        // a cancelled tool still running is "held"
  std::string correlation_prefix = "k";     // correlation ids are "<prefix>-<n>"
  size_t max_line_bytes = 16 << 20;         // quoted in the oversized-line error
  std::string server_version = "0.0.0";
  TaskOptions tasks;  // used when the session has a task store
  // --task-after: a modern call that declared the tasks extension, of a tool whose
  // taskSupport is not "forbidden", still running this long becomes a task (invariant 9).
  // Zero: never.
  Duration task_after = Millis(10000);
  // The caching hints of server/discover and tools/list for modern requests (MCP
  // 2026-07-28): the tool list changes only when keel restarts with another catalog.
  CacheHints cache{300000, "public"};
  // The keys that seal multi round-trip request states (server/durable/state_keys.h). Empty:
  // random keys for this session only.
  StateKeys state_keys;
  // OPS-1 for every tool (--shadow): retry decisions are recorded, not applied.
  bool shadow = false;
  // 64 random bits for backoff jitter; called on worker threads, so it must be thread-safe.
  // Null: a per-thread std::mt19937_64 seeded from std::random_device.
  std::function<uint64_t()> random;
  // The kill switch for writes (OPS-2), read on the worker just before a write-class tool
  // would start; must be thread-safe. Null: writes are never blocked.
  std::function<KillSwitchState()> writes_blocked;
  // The clock the worker side reads (call deadlines, attempt durations, backoff, breakers);
  // must be thread-safe and outlive the session. Null: the steady clock (in production the
  // loop's clock is the steady clock too, so both sides agree).
  const Clock* worker_clock = nullptr;
  // --trace-file (OBS-1): one record per call start/end, attempt start/end, timeout and
  // cancel. Null: no trace. `trace_arguments` adds the call's arguments (--trace-arguments).
  TraceLog* trace = nullptr;
  bool trace_arguments = false;
  // The client log level until the client sets one (--client-log-level); nullopt: no
  // notifications/message before logging/setLevel.
  std::optional<LoggingLevel> client_log_level;
};

class Session {
 public:
  // Without `task_store`, durable tasks are not offered. Everything is written to `sink`
  // until set_router.
  Session(EventLoop& loop, OutputSink& sink, const ToolRegistry& tools, WorkerPool& pool,
          SessionOptions options, TaskStoreThread* task_store = nullptr,
          std::function<int64_t()> wall_clock_ms = nullptr);

  // Where each exchange's lines go from now on (invariant 11), for the session and all its
  // parts; must outlive the session. Null: back to the constructor's sink.
  void set_router(OutputRouter* router);

  // One input line (without its newline) that came on `exchange` from `peer` (kNoPeer: the
  // exchange is its own peer).
  void HandleLine(std::string_view line, ExchangeId exchange = kNoExchange, PeerId peer = kNoPeer);
  // One decoded message (what a Dispatcher receives, server/transport/transport.h) that
  // came on `exchange` from `peer` (kNoPeer: the peer is `exchange`; Exchange::peer()). Its
  // answers are written to `exchange`; the close of `exchange` cancels it while it is
  // unanswered; its id is `peer`'s (invariant 3).
  void HandleMessage(Message& message, ExchangeId exchange = kNoExchange, PeerId peer = kNoPeer,
                     uint64_t client = 0);
  // `exchange` is gone (Dispatcher::OnExchangeClosed): the requests that came on it and
  // are not answered yet are cancelled, as by notifications/cancelled (CAN-2, CAN-5): no
  // answer, their work stopped. Tasks they created live on. Returns how many.
  size_t OnExchangeClosed(ExchangeId exchange);
  // `peer` is gone for good (a legacy HTTP session deleted or expired): its requests still
  // unanswered are cancelled as a closed exchange's are, and its LegacyPeer is erased (a
  // legacy request from it would need initialize again). Returns how many were cancelled.
  size_t ForgetPeer(PeerId peer);
  // Whether `peer` has initialized (and has not been forgotten since).
  bool PeerInitialized(PeerId peer) const { return peers_.count(peer) != 0; }
  // An input line longer than max_line_bytes was skipped; its error goes to `exchange`.
  void HandleOversizedLine(size_t bytes, ExchangeId exchange = kNoExchange);
  // Stops serving: `why` is logged. Idempotent; a second call during the grace is ignored.
  void BeginShutdown(std::string_view why);
  // Ends the grace at once (a second signal).
  void ShutdownNow();

  // The outbox dropped unsent progress of request stream `stream` for a slow client (BP-1):
  // the request is marked needs_resync.
  void OnProgressDropped(uint64_t stream) { coordinator_.MarkNeedsResync(stream); }

  // The tools, or the policy that shapes them, changed (a SIGHUP reload): every
  // subscriptions/listen stream that asked for toolsListChanged hears
  // notifications/tools/list_changed (invariant 12).
  void NotifyToolsListChanged();
  size_t listeners() const { return listeners_.size(); }

  void set_on_finished(std::function<void()> fn) { on_finished_ = std::move(fn); }
  void set_on_stop_reading(std::function<void()> fn) { on_stop_reading_ = std::move(fn); }

  // Some legacy peer has initialized (over stdio: the one client).
  bool initialized() const { return !peers_.empty(); }
  const RequestCoordinator& coordinator() const { return coordinator_; }
  // Null without a task store.
  TaskManager* tasks() { return tasks_.get(); }
  // session_surface.cc: the resources, prompts and completions served (invariant 13). Null:
  // none (resources/*, prompts/* and completion/complete are -32601). A new surface replaces
  // the one in force (a catalog reload): listeners hear of the lists that changed; the old
  // one is kept while calls may still run its readers.
  void SetSurface(std::shared_ptr<Surface> surface);
  const std::shared_ptr<Surface>& surface() const { return surface_; }
  // A mounted directory or a resource file changed (server/resources/file_watch.h): mounts
  // are listed again (resources/list_changed when the list changed), and subscribers of
  // the URIs of `paths` hear notifications/resources/updated.
  void OnResourceFilesChanged(const std::vector<std::string>& paths);
  // The prompt list changed (a reload, or the conformance fixture that says so).
  void NotifyPromptsListChanged();
  void NotifyResourcesListChanged();
  void NotifyResourceUpdated(const std::string& uri);

  // The resilience policy in force; a reload swaps it (loop thread). Its version goes into
  // every trace record.
  void SetPolicy(PolicyHandle policy) { policy_ = std::move(policy); }
  const PolicyHandle& policy() const { return policy_; }

 private:
  // What a handler knows of the request it serves, besides its params.
  struct RequestContext {
    const Json& id;
    ExchangeId exchange = kNoExchange;  // where its answers go
    PeerId peer = kNoPeer;              // whose id it is
    // The era the request speaks: its peer's (legacy), or its own (modern).
    WireForm wire;
    // A modern request's io.modelcontextprotocol/logLevel; nullopt: no log messages for it.
    // Unused for a legacy request (its peer's level, logging/setLevel, applies).
    std::optional<LoggingLevel> log_level;
    // A modern request's clientCapabilities (null for {}); null for a legacy request.
    const Json* client_capabilities = nullptr;
  };

  // session_dispatch.cc: the era, the method, the typed request, the handler.
  void HandleRequest(Message& message, ExchangeId exchange, PeerId peer);
  // HandleRequest inside its OTLP request span (RequestSpans), when tracing as otlp.
  void TraceRequest(Message& message, ExchangeId exchange, PeerId peer);
  void HandleModernRequest(Message& message, ExchangeId exchange, PeerId peer);
  void DecodeAndServe(const RequestContext& request, McpMethod method, Json params);
  // A decoded request, to its handler. `tool`: the tool a tools/call names (found while
  // decoding it); null for other methods.
  void Serve(const RequestContext& request, McpRequest& decoded, Tool* tool);
  void Initialize(const RequestContext& request, const InitializeRequest& initialize);
  void Discover(const RequestContext& request);
  void ListTools(const RequestContext& request, const ListToolsRequest& list);
  // session_surface.cc: resources, prompts, completion (invariant 13).
  void ListResources(const RequestContext& request, const ListResourcesRequest& list);
  void ListResourceTemplates(const RequestContext& request,
                             const ListResourceTemplatesRequest& list);
  void ReadResource(const RequestContext& request, const ReadResourceRequest& read);
  void Subscribe(const RequestContext& request, const SubscribeRequest& subscribe);
  void ListPrompts(const RequestContext& request, const ListPromptsRequest& list);
  void GetPrompt(const RequestContext& request, GetPromptRequest get);
  void Complete(const RequestContext& request, const CompleteRequest& complete);
  // A page of `items` as `member` of a list result, with the era's caching hints.
  void ReplyPage(const RequestContext& request, const std::vector<Json>& items, size_t offset,
                 const char* member, const char* cursor_list);
  // Whether keel serves `method` now: resources/*, prompts/* and completion/complete only
  // with something to serve (invariant 13); every other method of the era.
  bool Serves(McpMethod method) const;
  // What initialize and server/discover declare for the surface.
  void DeclareSurface(ServerCapabilities& capabilities) const;
  // Sends `method` (params + the subscription id) on every listen stream that `wants` it.
  struct Listener;
  void NotifyListeners(const char* method, bool Listener::*wants, Json params = Json::object());
  // Sends `method` to every initialized legacy peer (subscribed to `subscribed_uri`, unless
  // empty) on its own stream.
  void NotifyLegacyPeers(const char* method, const Json& params, const std::string& subscribed_uri);
  void CallTool(const RequestContext& request, Tool& tool, CallToolRequest call);
  // A modern tools/call: a plain call, a task, or a call that may become one (9).
  void CallToolModern(const RequestContext& request, Tool& tool, CallToolRequest call);
  // session_input.cc: a modern call of a tool that needs an approval, without one, from a
  // client that can be asked (server/input/approval_input.h). False when the call was
  // answered here; true when it goes on, approved (call.arguments has its approval_id).
  bool ApproveByElicitation(const RequestContext& request, const ToolSpec& spec,
                            CallToolRequest& call);
  // session_input.cc: a modern call of a tool that may ask for input begins its round
  // (server/input/input_round.h): the answers so far, or null after answering the request
  // with the error that refuses its requestState or inputResponses.
  std::shared_ptr<const InputRound> BeginInput(const RequestContext& request, const ToolSpec& spec,
                                               const CallToolRequest& call, bool* refused);

  // session_listen.cc (invariant 12).
  void Listen(const RequestContext& request, const ListenRequest& listen);
  // notifications/cancelled for a listen request: ended without an answer. True if it was one.
  bool EndListener(const Json& id, PeerId peer);
  void DropListeners(ExchangeId exchange, PeerId peer);
  // Shutdown: each stream gets its listen result (a graceful end).
  void EndAllListeners();

  void HandleNotification(const Message& message, PeerId peer);
  // notifications/cancelled from `peer` for `request_id` (a tools/call or a task request of
  // ours).
  void CancelRequest(const Json& request_id, PeerId peer);
  // session_calls.cc: a parsed tools/call (not a task): admitted, and run on the loop or
  // handed to the pool; or refused.
  // `may_become_task`: the call becomes a task if it still runs after task_after, or when
  // its tool asks to (ToolContext::BecomeTask) (9).
  // `input`: a modern call of a tool that may ask for input (BeginInput).
  // `answer`: what the call answers (a surface method's internal call: session_surface.cc).
  void AdmitCall(const RequestContext& request, Tool& tool, Json arguments, Json meta,
                 Json progress_token, bool may_become_task = false,
                 std::shared_ptr<const InputRound> input = nullptr, AnswerTarget answer = {});
  // What every call's result goes through before it is encoded (the coordinator's result
  // filter): the output schema rule, and a question the call cannot ask (InputUnavailable).
  Json FilterCallResult(const CallIdentity& call, Json result) const;
  // A call's result as its request's era writes it (the coordinator's result encoder): a
  // modern call's question becomes its InputRequiredResult (FinishInputRound).
  std::string EncodeCallResult(const CallIdentity& call, const Json& result);
  // The task_after timer of call `generation` fired, or its tool asked (BecomeTask): if it is
  // still unsettled and no task yet, it becomes a task made of `params` ({name, arguments,
  // _meta}).
  void PromoteCall(uint64_t generation, Json params);
  // session_tasks.cc: a task-augmented tools/call (call.task is set), and the work of a
  // created task.
  void CreateTask(const RequestContext& request, Tool& tool, CallToolRequest call);
  std::optional<uint64_t> StartTaskWork(const TaskRecord& task, Json progress_token);
  // What admission reads of the session now (Admit, admission.h), for a call from the
  // client whose message is being handled (current_client_).
  AdmissionState AdmissionNow();
  // A refused internal call of a surface method, answered as that method's error.
  void RefuseSurfaceCall(const RequestContext& request, const AnswerTarget& answer,
                         const Refusal& refusal);
  // A refused call or task creation, answered as its request is (Refusal::as_result).
  void SendRefusal(const RequestContext& request, const ToolSpec& spec, const Refusal& refusal);
  // Queues the job of an admitted call or task's work for the pool (see unsubmitted_):
  // `policy` is the tool's effective policy, `max` bounds the whole call.
  void HandToPool(RequestCoordinator::Admitted admitted, ToolPolicy policy, Duration max,
                  Json arguments, Json meta);
  // The trace of one call or task's work (OBS-1), kept from its start to its settle. Null
  // when not tracing.
  std::shared_ptr<const CallTracer> TraceCallStart(const RequestCoordinator::Admitted& admitted,
                                                   const Json& meta, const Json& arguments);
  void TraceCallEnd(uint64_t generation, CallState state, const std::string& reason);
  // At --max-inflight: collects finished results first, then tells whether still full.
  bool AtCapacity();

  // A request of `peer` answered later (a call, a task request) still uses `id`.
  bool IdInUse(const Json& id, PeerId peer) const;
  // The legacy state of `peer`; null before its initialize.
  const LegacyPeer* FindPeer(PeerId peer) const;
  // The era `peer`'s legacy requests speak: the one its initialize negotiated, or the
  // unnegotiated one.
  WireForm LegacyWireOf(PeerId peer) const;
  // Where the lines of `exchange` go (invariant 11): its sink, or nowhere when it is gone.
  OutputSink& Out(ExchangeId exchange) { return SinkOf(*router_, exchange, dropped_); }
  // A result, as the request's era writes it (EncodeResultAs), to its exchange.
  void Reply(const RequestContext& request, const Json& result);
  void ReplyError(const RequestContext& request, const RpcError& error) {
    ReplyError(request.exchange, request.id, error);
  }
  void ReplyError(ExchangeId exchange, const Json& id, const RpcError& error);

  void FinishShutdown();
  // Hands the calls accepted so far to the pool in one go (see unsubmitted_).
  void SubmitHeldCalls();
  // Keeps one loop timer at the coordinator's next deadline.
  void ArmDeadlineTimer();

  EventLoop& loop_;
  OutputSink& sink_;  // the constructor's: where everything goes without set_router
  SingleSinkRouter own_router_{sink_};
  OutputRouter* router_ = &own_router_;
  DroppingSink dropped_;  // lines of exchanges that were gone
  const ToolRegistry& tools_;
  WorkerPool& pool_;
  SessionOptions options_;
  RequestCoordinator coordinator_;
  ClientLog client_log_;
  std::unique_ptr<TaskManager> tasks_;
  // Live calls' tracers, when tracing.
  std::unordered_map<uint64_t, std::shared_ptr<const CallTracer>> traces_;
  // --trace-format otlp: the SERVER span of each request no tracer covers (ADO-3).
  RequestSpans request_spans_{options_.trace};
  std::shared_ptr<CallInbox> inbox_;    // where jobs report (they hold a weak_ptr)
  std::shared_ptr<CallRunner> runner_;  // the worker side; jobs share it
  PolicyHandle policy_;
  std::shared_ptr<Surface> surface_;
  std::vector<std::shared_ptr<Surface>> retired_surfaces_;  // readers calls may still run
  // Who keel is (initialize), and what every modern result adds (encoded once).
  ResultStamp stamp_;
  // The questions legacy calls' tools send their client (MRTR-1).
  ClientRequests client_requests_{sink_};
  // Each legacy peer's state, from its initialize (LegacyPeer). Bounded by the transport:
  // one over stdio; HTTP forgets a legacy session's peer when it ends (ForgetPeer).
  std::unordered_map<PeerId, LegacyPeer> peers_;
  std::function<int64_t()> wall_clock_ms_;  // request state expiry, task times
  // Calls accepted in this loop iteration and not yet handed to the pool. They go together
  // before the loop waits, so the calls of one read of stdin wake each worker once, not once
  // per call (a wake-up costs more than an echo). At most kMaxHeldCalls wait here, which
  // bounds how long a call waits for the lines behind it to be parsed.
  static constexpr size_t kMaxHeldCalls = 16;
  std::vector<WorkerPool::Job> unsubmitted_;

  // Open subscriptions/listen streams, by PeerIdKey of the listen request (invariant 12).
  struct Listener {
    Json id;
    ExchangeId exchange = kNoExchange;
    PeerId peer = kNoPeer;
    bool tools_list_changed = false;
    bool prompts_list_changed = false;
    bool resources_list_changed = false;
    std::vector<std::string> resource_subscriptions;
  };
  std::unordered_map<std::string, Listener> listeners_;

  // The client (Exchange::client) of the message HandleMessage is handling; 0 between messages.
  uint64_t current_client_ = 0;

  bool shutting_down_ = false;
  bool finished_ = false;
  bool waiting_for_task_store_ = false;
  std::optional<EventLoop::TimerId> grace_timer_;
  std::optional<EventLoop::TimerId> deadline_timer_;
  std::optional<TimePoint> armed_deadline_;
  std::function<void()> on_finished_;
  std::function<void()> on_stop_reading_;
};

}  // namespace keel
