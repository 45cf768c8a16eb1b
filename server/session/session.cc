#include "server/session/session.h"

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "server/catalog/effective_policy.h"
#include "server/durable/state_keys.h"
#include "server/transport/inbound.h"

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
      stamp_(Implementation{"keel", "keel reliable MCP server", options_.server_version}),
      wall_clock_ms_(wall_clock_ms ? std::move(wall_clock_ms) : WallClockMs) {
  if (options_.state_keys.current.empty()) options_.state_keys = EphemeralStateKeys();
  if (options_.client_log_level) client_log_.SetLevel(*options_.client_log_level);
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
  if (options_.trace != nullptr) {
    coordinator_.set_on_settled(
        [this](uint64_t generation, CallState state, const std::string& reason) {
          TraceCallEnd(generation, state, reason);
        });
  }
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
  runner_ = std::make_shared<CallRunner>(
      CallRunner::Options{options_.writes_blocked, options_.random, options_.worker_clock},
      CallInbox::Port(loop_, inbox_));
  loop_.AddBeforeWait([this] {
    SubmitHeldCalls();
    ArmDeadlineTimer();
  });
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

void Session::HandleLine(std::string_view line, ExchangeId exchange) {
  if (std::optional<Message> message = DecodeInbound(line, sink_)) {
    HandleMessage(*message, exchange);
  }
}

void Session::HandleMessage(Message& message, ExchangeId exchange) {
  switch (message.kind) {
    case MessageKind::kRequest:
      HandleRequest(message, exchange);
      break;
    case MessageKind::kNotification:
      HandleNotification(message);
      break;
    case MessageKind::kResponse:
      // The only requests keel sends are its tools' questions to a legacy client.
      if (client_requests_.OnResponse(message.id, message.result, message.error)) break;
      spdlog::info("dropped a response for unknown request id {}", IdKey(message.id));
      break;
  }
}

void Session::HandleOversizedLine(size_t bytes) {
  AnswerOversizedLine(sink_, bytes, options_.max_line_bytes);
}

size_t Session::OnExchangeClosed(ExchangeId exchange) {
  const size_t cancelled =
      coordinator_.CancelExchange(exchange) + (tasks_ ? tasks_->CancelExchange(exchange) : 0);
  if (cancelled > 0) spdlog::info("exchange closed: cancelled {} request(s)", cancelled);
  return cancelled;
}

void Session::HandleNotification(const Message& message) {
  const std::optional<McpNotification> notification = NotificationOf(wire_, message.method);
  if (!notification) return;  // unknown notifications are ignored
  switch (*notification) {
    case McpNotification::kCancelled:
      // Malformed, unknown, finished or initialize ids are ignored, never answered.
      if (const auto cancelled = DecodeCancelledNotification(message.params)) {
        CancelRequest(cancelled->request_id);
      }
      return;
    case McpNotification::kInitialized:
      // Requests are served as soon as the initialize response is out (clients pipeline);
      // notifications keel starts on its own (task status) wait for the client's word.
      if (initialized_ && tasks_) tasks_->set_client_ready();
      return;
  }
}

void Session::CancelRequest(const Json& request_id) {
  if (!coordinator_.Cancel(request_id) && !(tasks_ && tasks_->CancelRequest(request_id))) return;
  spdlog::debug("cancelled request {}", IdKey(request_id));
  if (options_.trace == nullptr) return;
  const TraceContext context = NewTraceContext();
  options_.trace->Emit(TraceEvent{"cancel.received", "INFO", context.trace_id, NewSpanId(), "",
                                  Json{{"jsonrpc.request.id", IdKey(request_id)},
                                       {"keel.policy.version", policy_ ? policy_->version : ""}}});
}

bool Session::IdInUse(const Json& id) const {
  return coordinator_.InFlight(id) || (tasks_ && tasks_->InFlight(id));
}

void Session::BeginShutdown(std::string_view why) {
  if (shutting_down_) return;
  shutting_down_ = true;
  spdlog::info("shutting down ({}); {} call(s) in flight", why, coordinator_.live());
  if (on_stop_reading_) on_stop_reading_();
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
