// The Session's side of calls: admitting a parsed tools/call (Admit, admission.h), answering a
// refusal, handing admitted work to the CallRunner through the pool, and keeping each live
// call's tracer (OBS-1) from its start to its settle. The worker side is the CallRunner's.
#include "protocol/mcp_version.h"
#include "server/session/session.h"
#include "server/surface/surface_answer.h"
#include "server/tasks/task_wire.h"

namespace keel {

void Session::AdmitCall(const RequestContext& request, Tool& tool, Json arguments, Json meta,
                        Json progress_token, bool may_become_task,
                        std::shared_ptr<const InputRound> input, AnswerTarget answer) {
  const ToolSpec& spec = tool.spec();
  const bool modern = IsModern(request.wire);
  std::variant<Refusal, AdmittedCall> admission =
      Admit(AdmitAs::kCall, tool, arguments, meta, AdmissionNow());
  if (const Refusal* refusal = std::get_if<Refusal>(&admission)) {
    if (refusal->reason == Refusal::Reason::kServerBusy) {
      // A modern request's own level, a legacy one's its peer's; on the request's exchange.
      client_log_.Log(modern ? request.log_level : client_log_.LevelOf(request.peer),
                      LoggingLevel::kWarning, "keel",
                      Json{{"event", "server_busy"}, {"tool", spec.name}}, request.exchange);
    }
    if (answer.as != AnswerAs::kToolResult) return RefuseSurfaceCall(request, answer, *refusal);
    return SendRefusal(request, spec, *refusal);
  }
  AdmittedCall& call = std::get<AdmittedCall>(admission);
  call.identity.request_id = request.id;
  call.identity.exchange = request.exchange;
  call.identity.peer = request.peer;
  call.identity.client = current_client_;
  call.identity.modern = modern;
  call.identity.log_level = request.log_level;
  call.identity.input = std::move(input);
  call.identity.answer = answer.as;
  call.identity.answer_uri = std::move(answer.uri);
  call.identity.answer_mime = std::move(answer.mime_type);
  call.identity.may_become_task = may_become_task;
  if (spec.runs_on_loop) {
    ToolContext ctx(std::move(arguments), CancellationToken(), nullptr);
    ctx.set_meta(std::move(meta));
    ctx.set_identity(std::move(call.identity));
    const Json result = FilterCallResult(ctx.identity(), BoundedResult(tool.Call(ctx), spec.name));
    request_spans_.NoteResult(request.id, result);
    return Out(request.exchange).SendResponse(EncodeCallResult(ctx.identity(), result));
  }
  const CallLimits limits{Millis(call.policy.timeouts.idle_ms), Millis(call.policy.timeouts.max_ms),
                          call.policy.timeouts.source};
  // What a task made of this call after --task-after stores as its request (copied only
  // when that may happen; a BecomeTask on the worker sends its own).
  const bool promote_later = may_become_task && options_.task_after > Duration::zero();
  Json params;
  if (promote_later) {
    params = {{"name", spec.name}, {"arguments", arguments}};
    if (!meta.is_null()) params["_meta"] = meta;
    MarkExtensionRequest(params);
  }
  RequestCoordinator::Admitted admitted =
      coordinator_.Begin(std::move(call.identity), std::move(progress_token), limits);
  const uint64_t generation = admitted.generation;
  HandToPool(std::move(admitted), std::move(call.policy), limits.max, std::move(arguments),
             std::move(meta));
  if (promote_later) {
    loop_.AddTimer(loop_.clock().Now() + options_.task_after,
                   [this, generation, params = std::move(params)]() mutable {
                     PromoteCall(generation, std::move(params));
                   });
  }
}

AdmissionState Session::AdmissionNow() {
  AdmissionState state;
  state.shutting_down = shutting_down_;
  state.max_inflight = options_.max_inflight;
  state.max_tasks = options_.tasks.max_tasks;
  const size_t share = options_.max_inflight_per_client;
  const bool client_full =
      share > 0 && current_client_ != 0 && coordinator_.LiveOf(current_client_) >= share;
  if (client_full) state.max_inflight = share;  // quoted in server_busy
  state.at_capacity = [this, client_full] { return client_full || AtCapacity(); };
  state.tasks_at_limit = [this] { return tasks_->AtLimit(); };
  state.policy = policy_.get();
  state.shadow = options_.shadow;
  return state;
}

bool Session::AtCapacity() {
  if (!coordinator_.AtCapacity()) return false;
  // Calls that already finished may only be waiting in the mailbox: a client that
  // pipelines many quick calls must not be refused for results not yet collected.
  SubmitHeldCalls();
  loop_.RunPosted();
  return coordinator_.AtCapacity();
}

void Session::RefuseSurfaceCall(const RequestContext& request, const AnswerTarget& answer,
                                const Refusal& refusal) {
  // A refusal a tools/call answers with an isError result is the method's error here.
  const Json result = refusal.as_result ? ErrorResult(refusal.text, refusal.error) : Json();
  if (!refusal.as_result) {
    request_spans_.NoteError(request.id, refusal.code, refusal.text);
    return Out(request.exchange)
        .SendResponse(EncodeError(request.id, refusal.code, refusal.text, refusal.error));
  }
  std::variant<Json, RpcError> answered =
      SurfaceAnswer(request.wire, answer.as, result, answer.uri, answer.mime_type);
  if (const RpcError* error = std::get_if<RpcError>(&answered)) return ReplyError(request, *error);
  Reply(request, std::get<Json>(answered));
}

void Session::SendRefusal(const RequestContext& request, const ToolSpec& spec,
                          const Refusal& refusal) {
  if (refusal.as_result) {
    return Reply(request, ForOutputSchema(spec, ErrorResult(refusal.text, refusal.error)));
  }
  request_spans_.NoteError(request.id, refusal.code, refusal.text);
  Out(request.exchange)
      .SendResponse(EncodeError(request.id, refusal.code, refusal.text, refusal.error));
}

void Session::HandToPool(RequestCoordinator::Admitted admitted, ToolPolicy policy, Duration max,
                         Json arguments, Json meta) {
  CallRunner::Work work;
  work.generation = admitted.generation;
  work.tracer = TraceCallStart(admitted, meta, arguments);
  work.budget = policy_->RetryBudgetFor(admitted.identity.tool->spec().backend_or_name());
  work.control = std::move(admitted.control);
  work.identity = std::move(admitted.identity);
  work.policy = std::move(policy);
  work.max = max;
  work.arguments = std::move(arguments);
  work.meta = std::move(meta);
  unsubmitted_.push_back(runner_->Job(std::move(work)));
  if (unsubmitted_.size() >= kMaxHeldCalls) SubmitHeldCalls();
}

std::shared_ptr<const CallTracer> Session::TraceCallStart(
    const RequestCoordinator::Admitted& admitted, const Json& meta, const Json& arguments) {
  if (options_.trace == nullptr) return nullptr;
  CallTracer::StartInfo info;
  info.protocol_version =
      std::string(admitted.identity.modern ? kModernProtocolVersion
                                           : LegacyWireOf(admitted.identity.peer).version);
  if (policy_) info.policy_version = policy_->version;
  info.with_arguments = options_.trace_arguments;
  info.now = loop_.clock().Now();
  if (request_spans_.enabled()) {
    if (!admitted.identity.request_id.is_null()) {
      request_spans_.NoteTraced(admitted.identity.request_id);
    }
    if (!admitted.identity.modern && PeerInitialized(admitted.identity.peer)) {
      info.session_id = request_spans_.SessionIdOf(admitted.identity.peer);
    }
  }
  std::shared_ptr<const CallTracer> tracer =
      CallTracer::Start(*options_.trace, admitted.identity, meta, arguments, info);
  traces_[admitted.generation] = tracer;
  return tracer;
}

void Session::TraceCallEnd(uint64_t generation, CallState state, const std::string& reason) {
  const auto it = traces_.find(generation);
  if (it == traces_.end()) return;
  it->second->End(state, reason, loop_.clock().Now());
  traces_.erase(it);
}

}  // namespace keel
