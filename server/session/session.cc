#include "server/session/session.h"

#include <spdlog/spdlog.h>

#include "protocol/cursor.h"
#include "protocol/error_codes.h"
#include "protocol/mcp_version.h"
#include "protocol/request_meta.h"
#include "server/catalog/effective_policy.h"
#include "server/transport/inbound.h"

namespace keel {
namespace {

// Methods keel serves once initialized. Anything else is -32601 at any time.
bool IsKnownMethod(std::string_view method) {
  return method == "initialize" || method == "ping" || method == "tools/list" ||
         method == "tools/call" || method == "logging/setLevel";
}

bool IsTaskMethod(std::string_view method) {
  return method == "tasks/get" || method == "tasks/result" || method == "tasks/list" ||
         method == "tasks/cancel";
}

// Client-chosen text quoted back in an error message, kept short.
std::string Quote(std::string_view text) {
  constexpr size_t kMaxQuoted = 80;
  if (text.size() <= kMaxQuoted) return std::string(text);
  return std::string(text.substr(0, kMaxQuoted)) + "...";
}

}  // namespace

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
          ToMillis(options_.call_limits.idle), ToMillis(options_.call_limits.max)))) {
  if (options_.client_log_level) client_log_.SetLevel(*options_.client_log_level);
  coordinator_.set_on_idle([this] {
    if (shutting_down_) FinishShutdown();
  });
  // A tool that ignores cancellation keeps its thread: the pool starts a replacement, so
  // the calls admitted next (up to --max-inflight, which still counts the held slot) run.
  coordinator_.set_on_held([this] { pool_.Hold(); });
  coordinator_.set_result_filter([](const CallIdentity& call, Json result) {
    return call.tool == nullptr ? result : ForOutputSchema(call.tool->spec(), std::move(result));
  });
  coordinator_.set_on_released([this] { pool_.Release(); });
  if (options_.trace != nullptr) {
    coordinator_.set_on_settled(
        [this](uint64_t generation, CallState state, const std::string& reason) {
          TraceCallEnd(generation, state, reason);
        });
  }
  if (task_store != nullptr) {
    if (!wall_clock_ms) wall_clock_ms = WallClockMs;
    tasks_ = std::make_unique<TaskManager>(loop_, sink_, *task_store, options_.tasks,
                                           std::move(wall_clock_ms));
    tasks_->set_start([this](const TaskRecord& task, Json progress_token) {
      return StartTaskWork(task, std::move(progress_token));
    });
    tasks_->set_cancel_work([this](uint64_t generation) { coordinator_.CancelTask(generation); });
  }
  inbox_ = std::make_shared<CallInbox>(loop_, coordinator_, client_log_, tasks_.get());
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

void Session::HandleLine(std::string_view line) {
  if (std::optional<Message> message = DecodeInbound(line, sink_)) HandleMessage(*message);
}

void Session::HandleMessage(Message& message) {
  switch (message.kind) {
    case MessageKind::kRequest:
      HandleRequest(message);
      break;
    case MessageKind::kNotification:
      HandleNotification(message);
      break;
    case MessageKind::kResponse:
      // keel sends no requests, so every response is for an id it never used.
      spdlog::info("dropped a response for unknown request id {}", IdKey(message.id));
      break;
  }
}

void Session::HandleOversizedLine(size_t bytes) {
  AnswerOversizedLine(sink_, bytes, options_.max_line_bytes);
}

void Session::HandleRequest(Message& message) {
  // First, whatever the method (ping, methods answered at once, unknown ones included): a
  // second answer for an id the client still waits on would be taken for the first one's.
  if (IdInFlight(message.id)) return RejectDuplicateId(message.id);
  const std::string& method = message.method;
  if (method == "ping") return Reply(message.id, Json::object());
  if (IsTaskMethod(method) && tasks_negotiated_) return HandleTaskMethod(message);
  if (!IsKnownMethod(method)) {
    return ReplyError(message.id, kMethodNotFound, "Method not found: " + Quote(method));
  }
  if (method == "initialize") return Initialize(message);
  if (!initialized_) {
    return ReplyError(message.id, kInvalidRequest, "Server not initialized: send initialize first");
  }
  if (method == "tools/list") return ListTools(message);
  if (method == "tools/call") return CallTool(message);
  if (method == "logging/setLevel") return SetLogLevel(message);
}

void Session::HandleNotification(const Message& message) {
  if (message.method == "notifications/cancelled") {
    // Malformed, unknown, finished or initialize ids are ignored, never answered.
    if (message.params.is_object()) {
      const auto id = message.params.find("requestId");
      if (id != message.params.end() &&
          (coordinator_.Cancel(*id) || (tasks_ && tasks_->CancelRequest(*id)))) {
        spdlog::debug("cancelled request {}", IdKey(*id));
        if (options_.trace != nullptr) {
          const TraceContext context = NewTraceContext();
          options_.trace->Emit(
              TraceEvent{"cancel.received", "INFO", context.trace_id, NewSpanId(), "",
                         Json{{"jsonrpc.request.id", IdKey(*id)},
                              {"keel.policy.version", policy_ ? policy_->version : ""}}});
        }
      }
    }
    return;
  }
  // Requests are served as soon as the initialize response is out (clients pipeline);
  // notifications keel starts on its own (task status) wait for the client's word.
  if (message.method == "notifications/initialized" && initialized_ && tasks_) {
    tasks_->set_client_ready();
  }
  // Unknown notifications are ignored.
}

void Session::Initialize(const Message& message) {
  if (initialized_) {
    return ReplyError(message.id, kInvalidRequest, "Invalid Request: already initialized");
  }
  std::string requested;
  if (message.params.is_object()) {
    const auto version = message.params.find("protocolVersion");
    if (version != message.params.end() && version->is_string())
      requested = version->get<std::string>();
  }
  if (requested.empty()) {
    return ReplyError(message.id, kInvalidParams,
                      "Invalid params: initialize needs params.protocolVersion (a string)");
  }
  initialized_ = true;
  const std::string_view version = NegotiateProtocolVersion(requested);
  protocol_version_ = std::string(version);
  Json capabilities = {{"tools", {{"listChanged", false}}}, {"logging", Json::object()}};
  tasks_negotiated_ = tasks_ != nullptr && version == "2025-11-25";
  if (tasks_negotiated_) {
    capabilities["tasks"] = {{"list", Json::object()},
                             {"cancel", Json::object()},
                             {"requests", {{"tools", {{"call", Json::object()}}}}}};
  }
  Json result = {
      {"protocolVersion", std::string(version)},
      {"capabilities", std::move(capabilities)},
      {"serverInfo",
       {{"name", "keel"},
        {"title", "keel reliable MCP server"},
        {"version", options_.server_version}}},
      {"instructions",
       "Tool failures come back as results with isError and, where keel knows more, "
       "structuredContent.error.type (invalid_arguments, server_busy, timeout) to act on. "
       "A call that reports no progress for the idle timeout, or runs past the maximum "
       "timeout, ends with a timeout result. A call cancelled with notifications/cancelled "
       "is never answered. Mutating tools take an idempotency key (an idempotencyKey "
       "argument or _meta[\"dev.keel/idempotency-key\"]): retry with the same key and "
       "arguments and the mutation runs once; ledger_lookup tells what happened to a key. "
       "Tools marked execution.taskSupport optional or required can run as durable tasks "
       "(params.task): poll tasks/get, fetch tasks/result, stop them with tasks/cancel; a "
       "task outlives the connection and a restart of keel."}};
  Reply(message.id, result);
}

void Session::ListTools(const Message& message) {
  size_t offset = 0;
  if (message.params.is_object()) {
    const auto cursor = message.params.find("cursor");
    if (cursor != message.params.end() && !cursor->is_null()) {
      std::optional<size_t> decoded;
      if (cursor->is_string()) decoded = DecodeCursor("tools", cursor->get<std::string>());
      if (!decoded || *decoded > tools_.tools().size()) {
        return ReplyError(message.id, kInvalidParams, "Invalid params: invalid cursor");
      }
      offset = *decoded;
    }
  }
  const auto& all = tools_.tools();
  const size_t end = std::min(all.size(), offset + options_.page_size);
  Json list = Json::array();
  for (size_t i = offset; i < end; ++i) {
    list.push_back(ToolRegistry::Describe(all[i]->spec(), tasks_negotiated_));
  }
  Json result = {{"tools", std::move(list)}};
  if (end < all.size()) result["nextCursor"] = EncodeCursor("tools", end);
  Reply(message.id, result);
}

void Session::SetLogLevel(const Message& message) {
  std::optional<LogLevel> level;
  if (message.params.is_object()) {
    const auto name = message.params.find("level");
    if (name != message.params.end() && name->is_string()) {
      level = ParseLogLevel(name->get<std::string>());
    }
  }
  if (!level) {
    return ReplyError(message.id, kInvalidParams,
                      "Invalid params: level must be one of debug, info, notice, warning, "
                      "error, critical, alert, emergency");
  }
  client_log_.SetLevel(*level);
  Reply(message.id, Json::object());
}

void Session::CallTool(Message& message) {
  Json& params = message.params;
  const auto name = params.is_object() ? params.find("name") : params.end();
  if (!params.is_object() || name == params.end() || !name->is_string()) {
    return ReplyError(message.id, kInvalidParams, "Invalid params: tools/call needs a string name");
  }
  const std::string& tool_name = name->get_ref<const std::string&>();
  Tool* tool = tools_.Find(tool_name);
  if (tool == nullptr) {
    return ReplyError(message.id, kInvalidParams, "Unknown tool: " + Quote(tool_name));
  }
  Json arguments = Json::object();
  if (const auto args = params.find("arguments"); args != params.end() && !args->is_null()) {
    if (!args->is_object()) {
      return ReplyError(message.id, kInvalidParams, "Invalid params: arguments must be an object");
    }
    arguments = std::move(*args);  // the message is ours; the tool gets the parsed value itself
  }
  // Only the _meta keys keel reads are kept (the tool sees them: idempotency keys travel
  // there); the rest is freed here, before the call is queued, stored as a task, or run.
  Json progress_token;
  Json meta;
  if (const auto found = params.find("_meta"); found != params.end()) {
    meta = std::move(*found);
    if (auto problem = KeepUsedMeta(meta)) {
      return ReplyError(message.id, kInvalidParams, "Invalid params: " + *problem);
    }
    if (meta.is_object()) {
      const auto token = meta.find("progressToken");  // a string, a number, or null
      if (token != meta.end()) progress_token = *token;
    }
  }
  const ToolSpec& spec = tool->spec();
  if (tasks_negotiated_) {
    // MCP 2025-11-25 tasks: execution.taskSupport decides (-32601 when it forbids).
    const auto task = params.find("task");
    if (task != params.end() && !task->is_null()) {
      if (spec.task_support == TaskSupport::kForbidden) {
        return ReplyError(message.id, kMethodNotFound,
                          "Tool '" + spec.name +
                              "' cannot run as a task (its "
                              "execution.taskSupport is 'forbidden'): call it without params.task");
      }
      return CreateTask(message.id, *tool, std::move(arguments), std::move(meta),
                        std::move(progress_token), *task);
    }
    if (spec.task_support == TaskSupport::kRequired) {
      return ReplyError(message.id, kMethodNotFound,
                        "Tool '" + spec.name +
                            "' runs only as a task (its "
                            "execution.taskSupport is 'required'): add params.task");
    }
  }
  AdmitCall(message.id, *tool, std::move(arguments), std::move(meta), std::move(progress_token));
}

bool Session::IdInFlight(const Json& id) const {
  return coordinator_.InFlight(id) || (tasks_ && tasks_->InFlight(id));
}

void Session::RejectDuplicateId(const Json& id) {
  ReplyError(id, kInvalidRequest,
             "Invalid Request: request id " + Quote(IdKey(id)) + " is already in flight");
}

void Session::Reply(const Json& id, const Json& result) {
  sink_.SendResponse(EncodeResult(id, result));
}

void Session::ReplyError(const Json& id, int code, std::string_view message) {
  sink_.SendResponse(EncodeError(id, code, message));
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
