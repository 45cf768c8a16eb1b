#include "server/session/session.h"

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "protocol/mcp_envelope.h"
#include "protocol/mcp_version.h"
#include "server/catalog/effective_policy.h"
#include "server/durable/state_keys.h"
#include "server/tasks/task_wire.h"
#include "server/transport/inbound.h"
#include "server/transport/peer_id_key.h"

namespace keel {

Session::Session(EventLoop& loop, OutputSink& sink, const ToolRegistry& tools, WorkerPool& pool,
                 SessionOptions options, TaskStoreThread* task_store,
                 std::function<int64_t()> wall_clock_ms)
    : loop_(loop),
      sink_(sink),
      tools_(tools),
      pool_(pool),
      options_(std::move(options)),
      coordinator_(sink, loop.clock(),
                   RequestCoordinator::Options{options_.max_inflight, options_.progress_interval,
                                               options_.hold_after, options_.correlation_prefix}),
      client_log_(sink, loop.clock()),
      policy_(std::make_shared<const Policy>(BuiltinPolicyWithTimeouts(
          ToMillis(options_.call_limits.idle), ToMillis(options_.call_limits.max)))),
      stamp_(Implementation{options_.identity.name.value_or("keel"),
                            options_.identity.title.value_or("keel reliable MCP server"),
                            options_.identity.version.value_or(options_.server_version)}),
      wall_clock_ms_(wall_clock_ms ? std::move(wall_clock_ms) : WallClockMs) {
  if (options_.state_keys.current.empty()) options_.state_keys = EphemeralStateKeys();
  // A legacy peer's level is its own (LegacyPeer), from its initialize on.
  client_log_.set_level_of([this](PeerId peer) -> std::optional<LoggingLevel> {
    const LegacyPeer* legacy = FindPeer(peer);
    return legacy != nullptr ? legacy->log_level : std::nullopt;
  });
  coordinator_.set_on_idle([this] {
    if (shutting_down_) FinishShutdown();
  });
  // A tool that ignores cancellation keeps its thread: the pool starts a replacement, so
  // the calls admitted next (up to --max-inflight, which still counts the held slot) run.
  coordinator_.set_on_held([this] { pool_.Hold(); });
  coordinator_.set_result_filter([this](const CallIdentity& call, Json result) {
    return FilterCallResult(call, std::move(result));
  });
  // Every call's answer as its request's era writes it.
  coordinator_.set_result_encoder([this](const CallIdentity& call, const Json& result) {
    return EncodeCallResult(call, result);
  });
  coordinator_.set_on_released([this] { pool_.Release(); });
  coordinator_.set_on_settled(
      [this](uint64_t generation, CallState state, const std::string& reason) {
        // A settled call's open questions are moot: cancelled at the client now, before the
        // call's exchange may end (an HTTP stream ends with a cancelled call).
        client_requests_.AbandonCall(generation);
        if (options_.trace != nullptr) TraceCallEnd(generation, state, reason);
      });
  if (task_store != nullptr) {
    tasks_ =
        std::make_unique<TaskManager>(loop_, sink_, *task_store, options_.tasks, wall_clock_ms_);
    tasks_->set_start([this](const TaskRecord& task, Json progress_token) {
      return StartTaskWork(task, std::move(progress_token));
    });
    tasks_->set_cancel_work([this](uint64_t generation) { coordinator_.CancelTask(generation); });
    tasks_->set_stamp(&stamp_);
  }
  inbox_ = std::make_shared<CallInbox>(loop_, coordinator_, client_log_, tasks_.get(),
                                       &client_requests_);
  inbox_->set_promote([this](uint64_t generation, Json params) {
    MarkExtensionRequest(params);
    PromoteCall(generation, std::move(params));
  });
  runner_ = std::make_shared<CallRunner>(
      CallRunner::Options{options_.writes_blocked, options_.random, options_.worker_clock},
      CallInbox::Port(loop_, inbox_));
  loop_.AddBeforeWait([this] {
    SubmitHeldCalls();
    ArmDeadlineTimer();
  });
}

void Session::set_router(OutputRouter* router) {
  router_ = router != nullptr ? router : &own_router_;
  coordinator_.set_router(router);
  client_log_.set_router(router);
  client_requests_.set_router(router);
  if (tasks_) tasks_->set_router(router);
}

void Session::SubmitHeldCalls() { pool_.SubmitAll(unsubmitted_); }

void Session::ArmDeadlineTimer() {
  const std::optional<TimePoint> next = coordinator_.NextDeadline();
  if (next == armed_deadline_) return;
  if (deadline_timer_) loop_.CancelTimer(*deadline_timer_);
  deadline_timer_.reset();
  armed_deadline_ = next;
  if (!next) return;
  deadline_timer_ = loop_.AddTimer(*next, [this] {
    deadline_timer_.reset();
    armed_deadline_.reset();
    coordinator_.RunDue();
  });
}

void Session::HandleLine(std::string_view line, ExchangeId exchange, PeerId peer) {
  if (std::optional<Message> message = DecodeInbound(line, Out(exchange))) {
    HandleMessage(*message, exchange, peer);
  }
}

void Session::HandleMessage(Message& message, ExchangeId exchange, PeerId peer, uint64_t client) {
  if (peer == kNoPeer) peer = exchange;  // the exchange is its own peer
  current_client_ = client != 0 ? client : peer;
  struct Reset {
    uint64_t& client;
    ~Reset() { client = 0; }
  } reset{current_client_};
  switch (message.kind) {
    case MessageKind::kRequest:
      if (request_spans_.enabled()) {
        TraceRequest(message, exchange, peer);
      } else {
        HandleRequest(message, exchange, peer);
      }
      break;
    case MessageKind::kNotification:
      HandleNotification(message, peer);
      break;
    case MessageKind::kResponse:
      // The only requests keel sends are its tools' questions to a legacy client; only the
      // peer asked may answer.
      if (client_requests_.OnResponse(message.id, message.result, message.error, peer)) break;
      spdlog::info("dropped a response for unknown request id {} (peer {})", IdKey(message.id),
                   peer);
      break;
  }
}

void Session::TraceRequest(Message& message, ExchangeId exchange, PeerId peer) {
  const bool modern = message.method == "server/discover" || HasModernEnvelope(message.params);
  // Only the traceparent of _meta is kept (the rest may be large).
  Json meta;
  if (message.params.is_object()) {
    const auto given = message.params.find("_meta");
    if (given != message.params.end() && given->is_object() && given->contains("traceparent")) {
      meta = {{"traceparent", (*given)["traceparent"]}};
    }
  }
  const Json id = message.id;
  request_spans_.Begin(message.method, id, meta, exchange >= kFirstNetworkId ? "tcp" : "pipe");
  HandleRequest(message, exchange, peer);
  const bool legacy_session = !modern && PeerInitialized(peer);
  request_spans_.End(std::string(modern ? kModernProtocolVersion : LegacyWireOf(peer).version),
                     legacy_session ? request_spans_.SessionIdOf(peer) : std::string(),
                     !IdInUse(id, peer));
}

void Session::HandleOversizedLine(size_t bytes, ExchangeId exchange) {
  AnswerOversizedLine(Out(exchange), bytes, options_.max_line_bytes);
}

size_t Session::OnExchangeClosed(ExchangeId exchange) {
  DropListeners(exchange, kNoPeer);
  const size_t cancelled =
      coordinator_.CancelExchange(exchange) + (tasks_ ? tasks_->CancelExchange(exchange) : 0);
  if (cancelled > 0) spdlog::info("exchange closed: cancelled {} request(s)", cancelled);
  return cancelled;
}

size_t Session::ForgetPeer(PeerId peer) {
  const size_t cancelled = coordinator_.CancelPeer(peer) + (tasks_ ? tasks_->CancelPeer(peer) : 0);
  DropListeners(kNoExchange, peer);
  peers_.erase(peer);
  request_spans_.ForgetPeer(peer);
  spdlog::debug("peer {} gone: cancelled {} request(s)", peer, cancelled);
  return cancelled;
}

const LegacyPeer* Session::FindPeer(PeerId peer) const {
  const auto it = peers_.find(peer);
  return it == peers_.end() ? nullptr : &it->second;
}

WireForm Session::LegacyWireOf(PeerId peer) const {
  const LegacyPeer* legacy = FindPeer(peer);
  return legacy != nullptr ? legacy->wire : WireForm();
}

void Session::HandleNotification(const Message& message, PeerId peer) {
  const std::optional<McpNotification> notification =
      NotificationOf(LegacyWireOf(peer), message.method);
  if (!notification) return;  // unknown notifications are ignored
  switch (*notification) {
    case McpNotification::kCancelled:
      // Malformed, unknown, finished or initialize ids are ignored, never answered.
      if (const auto cancelled = DecodeCancelledNotification(message.params)) {
        if (EndListener(cancelled->request_id, peer)) return;
        CancelRequest(cancelled->request_id, peer);
      }
      return;
    case McpNotification::kInitialized:
      // Requests are served as soon as the initialize response is out (clients pipeline);
      // notifications keel starts on its own (task status) wait for the client's word.
      // Task status notifications concern no request (they go to kNoExchange): one
      // initialized peer's word is enough.
      if (PeerInitialized(peer) && tasks_) tasks_->set_client_ready();
      return;
  }
}

void Session::CancelRequest(const Json& request_id, PeerId peer) {
  const bool cancelled = coordinator_.Cancel(request_id, peer) ||
                         (tasks_ != nullptr && tasks_->CancelRequest(request_id, peer));
  if (!cancelled) return;
  spdlog::debug("cancelled request {}", IdKey(request_id));
  if (options_.trace == nullptr) return;
  const TraceContext context = NewTraceContext();
  options_.trace->Emit(TraceEvent{"cancel.received", "INFO", context.trace_id, NewSpanId(), "",
                                  Json{{"jsonrpc.request.id", IdKey(request_id)},
                                       {"keel.policy.version", policy_ ? policy_->version : ""}}});
}

bool Session::IdInUse(const Json& id, PeerId peer) const {
  return coordinator_.InFlight(id, peer) || (tasks_ && tasks_->InFlight(id, peer)) ||
         listeners_.count(PeerIdKey(peer, id)) != 0;
}

void Session::BeginShutdown(std::string_view why) {
  if (shutting_down_) return;
  shutting_down_ = true;
  spdlog::info("shutting down ({}); {} call(s) in flight", why, coordinator_.live());
  if (on_stop_reading_) on_stop_reading_();
  EndAllListeners();
  if (coordinator_.live() == 0) return FinishShutdown();
  grace_timer_ = loop_.AddTimer(loop_.clock().Now() + options_.shutdown_grace, [this] {
    grace_timer_.reset();
    ShutdownNow();
  });
}

void Session::ShutdownNow() {
  shutting_down_ = true;
  const size_t ended = coordinator_.ShutDownAll(
      kInternalError, "Server shutting down: the call did not finish within the shutdown grace");
  if (ended > 0) spdlog::warn("shutdown ended {} call(s) still running", ended);
  FinishShutdown();
}

void Session::FinishShutdown() {
  if (finished_) return;
  if (tasks_) {
    if (!tasks_->idle()) {
      // Decided task states are still being written (their waiting tasks/result requests
      // are answered then): finish once they are.
      if (!waiting_for_task_store_) {
        waiting_for_task_store_ = true;
        tasks_->set_on_idle([this] { FinishShutdown(); });
      }
      return;
    }
    tasks_->ShutDown();  // tasks/result requests for work that never ended
  }
  finished_ = true;
  // Calls still held were settled by the shutdown: their jobs find them abandoned and
  // return at once.
  SubmitHeldCalls();
  if (grace_timer_) {
    loop_.CancelTimer(*grace_timer_);
    grace_timer_.reset();
  }
  if (on_finished_) on_finished_();
}

}  // namespace keel
