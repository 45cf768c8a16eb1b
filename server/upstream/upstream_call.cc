#include "server/upstream/upstream_call.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <variant>

#include <spdlog/spdlog.h>

#include "protocol/bounded_json.h"
#include "protocol/error_codes.h"
#include "protocol/tool_result.h"
#include "server/surface/surface_answer.h"

namespace keel {
namespace {

constexpr std::string_view kParkedPrefix = "p:";
constexpr std::string_view kStatePrefix = "s:";
// How long an attempt whose deadline passed waits for the coordinator's own settlement.
constexpr Duration kSettleMargin = Millis(250);

Json Unavailable(const std::string& why) {
  return ErrorResult("The upstream server could not take the call: " + why + ". Nothing was sent.",
                     Json{{"type", "upstream_unavailable"},
                          {"failure_class", "not_sent"},
                          {"effect", "none"},
                          {"message", why}});
}

Json Lost(const ForwardSpec& spec, const std::string& why) {
  if (spec.write) {
    return ErrorResult("The upstream server " + why + " while it ran '" + spec.label +
                           "': the call may have taken effect.",
                       Json{{"type", "upstream_lost"},
                            {"failure_class", "ambiguous"},
                            {"effect", "unknown"},
                            {"message", why}});
  }
  return ErrorResult("The upstream server " + why + " while it ran '" + spec.label + "'.",
                     Json{{"type", "upstream_lost"},
                          {"failure_class", "rejected_transient"},
                          {"effect", "none"},
                          {"message", why}});
}

Json Stopped(const ForwardSpec& spec, const char* type, const std::string& text) {
  return ErrorResult(text + (spec.write ? "; it may have taken effect." : "."),
                     Json{{"type", type}, {"failure_class", "ambiguous"}, {"layer", "attempt"}});
}

// Rule 5's transport failures: whether the request can have run decides the class.
std::optional<Json> TransportFailure(const ForwardSpec& spec, int code, const std::string& message,
                                     const Json& data) {
  if (code != kUpstreamHttpFailure || !data.is_object() ||
      message.rfind(kUpstreamHttpFailurePrefix, 0) != 0) {
    return std::nullopt;
  }
  const Json sent = data.value("sent", Json());
  if (!sent.is_boolean()) return std::nullopt;
  const std::string what = message.substr(kUpstreamHttpFailurePrefix.size());
  if (!sent.get<bool>()) return Unavailable(what);
  const Json status = data.value("http_status", Json());
  if (status.is_number_integer()) {
    const int http_status = status.get<int>();
    if ((http_status >= 400 && http_status < 500 && http_status != 408) || http_status == 503) {
      return ErrorResult("The upstream server refused '" + spec.label + "' over HTTP: " + what +
                             ". It did not run.",
                         Json{{"type", "backend_" + std::to_string(http_status)},
                              {"effect", "none"},
                              {"http_status", http_status},
                              {"message", what}});
    }
  }
  return Lost(spec, "failed over HTTP (" + what + ")");
}

Json UpstreamError(const ForwardSpec& spec, const Json& error) {
  const int code = error.is_object() && error.value("code", Json()).is_number_integer()
                       ? error["code"].get<int>()
                       : kInternalError;
  const Json message_value = error.is_object() ? error.value("message", Json()) : Json();
  const std::string message = message_value.is_string() ? message_value.get<std::string>() : "";
  const Json data = error.is_object() ? error.value("data", Json()) : Json();
  if (std::optional<Json> failed = TransportFailure(spec, code, message, data)) return *failed;
  if (spec.surface) {
    const Json uri = spec.params.value("uri", Json());
    if (spec.method == "resources/read" && uri.is_string() &&
        (code == -32002 || code == kInvalidParams)) {
      // resources/read has one parameter: a -32602 is about the URI, whatever its data says.
      return ResourceNotFoundResult(uri.get<std::string>());
    }
    if (code == kInvalidParams) {
      return ErrorResult(message, Json{{"type", "invalid_params"}, {"code", code}});
    }
  }
  Json structured = {{"type", "upstream_error"},
                     {"failure_class", "rejected_permanent"},
                     {"code", code},
                     {"message", message}};
  if (!data.is_null()) structured["data"] = data;
  const bool not_run = code == kInvalidRequest || code == kMethodNotFound || code == kInvalidParams;
  if (not_run) structured["effect"] = "none";
  return ErrorResult("The upstream server answered " + spec.method + " ('" + spec.label +
                         "') with error " + std::to_string(code) + ": " + message,
                     structured);
}

// Rule 8.
Json Passed(const ForwardSpec& spec, Json result) {
  result.erase("resultType");
  if (auto meta = result.find("_meta"); meta != result.end() && meta->is_object()) {
    for (auto it = meta->begin(); it != meta->end();) {
      if (it.key().rfind("io.modelcontextprotocol/", 0) == 0) {
        it = meta->erase(it);
      } else {
        ++it;
      }
    }
    if (meta->empty()) result.erase("_meta");
  }
  if (!spec.surface) return result;
  return Json{{"content", Json::array()}, {"structuredContent", std::move(result)}};
}

// The request a call waits on.
struct InFlight {
  std::shared_ptr<UpstreamClient> client;
  std::shared_ptr<UpstreamRequest> request;
};
using Begun = std::variant<InFlight, Json>;  // or the attempt's answer already

// Rule 6: the client's answer to a parked question goes to the upstream.
Begun Resume(UpstreamLink& link, ToolContext& ctx, const ForwardSpec& spec) {
  const std::string name = ctx.tool_state().substr(kParkedPrefix.size());
  std::optional<ParkedAsk> parked = link.Take(name);
  if (!parked) {
    return ErrorResult(
        "The upstream server's question this answer is for is no longer waiting (it expired, "
        "or the upstream or keel restarted). Call '" +
            spec.label + "' again.",
        Json{{"type", "upstream_question_gone"},
             {"failure_class", "rejected_permanent"},
             {"effect", spec.write ? "unknown" : "none"}});
  }
  if (const Json* answer = ctx.InputResponse(name)) {
    parked->client->Answer(parked->ask_id, *answer);
  } else {
    parked->client->AnswerError(parked->ask_id, kInternalError, "the client gave no answer");
  }
  return InFlight{parked->client, parked->request};
}

// Rule 7: the next round of a 2026-07-28 upstream's questions.
void AddInputResponses(const ToolContext& ctx, Json& params) {
  const std::string& state = ctx.tool_state();
  if (state.rfind(kStatePrefix, 0) != 0) return;
  BoundedJson carried = ParseBoundedJson(std::string_view(state).substr(kStatePrefix.size()));
  if (!carried.ok() || !carried.value.is_object()) return;
  Json responses = Json::object();
  for (const Json& key : carried.value.value("keys", Json::array())) {
    if (!key.is_string()) continue;
    if (const Json* answer = ctx.InputResponse(key.get<std::string>())) {
      responses[key.get<std::string>()] = *answer;
    }
  }
  params["inputResponses"] = std::move(responses);
  const Json upstream_state = carried.value.value("state", Json());
  if (upstream_state.is_string()) params["requestState"] = upstream_state;
}

// Rule 2: the upstream's progress, log messages and questions for a request are the call's.
UpstreamClient::StartOptions CallOptions(ToolContext& ctx) {
  UpstreamClient::StartOptions options;
  options.accepts_asks = true;
  options.progress = [&ctx](double progress, std::optional<double> total, std::string text) {
    ctx.ReportProgress(progress, total, std::move(text));
  };
  options.log = [&ctx](LoggingLevel level, std::string text) { ctx.Log(level, std::move(text)); };
  return options;
}

// Rules 1 and 2 (and 9's params.task).
Begun Send(UpstreamLink& link, ToolContext& ctx, ForwardSpec& spec) {
  Json params = spec.params;  // a copy: UpstreamError reads the uri back
  AddInputResponses(ctx, params);
  if (spec.meta.is_object() && !spec.meta.empty()) params["_meta"] = spec.meta;
  if (spec.upstream_task) {
    params["task"] = Json{{"ttl", std::max<int64_t>(1, ctx.remaining().count())}};
  }
  std::string why;
  std::shared_ptr<UpstreamClient> client = link.Acquire(ctx.deadline(), ctx.token(), &why);
  if (!client) {
    if (ctx.cancelled()) return Stopped(spec, "cancelled", "The call was cancelled");
    return Unavailable(why);
  }
  std::shared_ptr<UpstreamRequest> request =
      client->Start(spec.method, std::move(params), CallOptions(ctx));
  if (!request->sent()) return Unavailable(request->lost_reason());
  return InFlight{std::move(client), std::move(request)};
}

// Rule 9: the task a CreateTaskResult names; nullopt for any other answer.
std::optional<std::string> CreatedTask(const UpstreamRequest& request) {
  if (request.is_error() || !request.answer().is_object()) return std::nullopt;
  const Json& answer = request.answer();
  const auto task = answer.find("task");
  if (task == answer.end() || !task->is_object() || answer.contains("content")) {
    return std::nullopt;
  }
  const Json id = task->value("taskId", Json());
  if (!id.is_string()) return std::nullopt;
  return id.get<std::string>();
}

// Rule 9: tasks/result for the task, on the instance that made it, under its progress token.
InFlight AwaitTask(ToolContext& ctx, const InFlight& created, const std::string& task_id) {
  UpstreamClient::StartOptions options = CallOptions(ctx);
  options.progress_token = created.request->progress_token();
  std::shared_ptr<UpstreamRequest> request =
      created.client->Start("tasks/result", Json{{"taskId", task_id}}, std::move(options));
  return InFlight{created.client, std::move(request)};
}

// Rule 9: the task is cancelled too (its answer, whatever it is, is not waited for).
void CancelTask(const InFlight& call, const std::string& task_id) {
  if (task_id.empty()) return;
  call.client->Start("tasks/cancel", Json{{"taskId", task_id}}, UpstreamClient::StartOptions{});
}

// Rules 5, 7 and 8: the upstream's answer.
Json Answered(const ForwardSpec& spec, const UpstreamRequest& request) {
  if (request.is_error()) return UpstreamError(spec, request.answer());
  const Json& answer = request.answer();
  if (!answer.is_object()) {
    return UpstreamError(spec, Json{{"code", kInternalError},
                                    {"message", "the upstream's result is not an object"}});
  }
  if (answer.value("resultType", "") != "input_required") return Passed(spec, answer);
  if (!spec.may_ask) {
    return UpstreamError(spec, Json{{"code", kInternalError},
                                    {"message",
                                     "the upstream asks for input during a keyed write, which "
                                     "keel does not carry"}});
  }
  const Json questions = answer.value("inputRequests", Json::object());
  Json keys = Json::array();
  if (questions.is_object()) {
    for (const auto& [key, value] : questions.items()) keys.push_back(key);
  }
  const Json carried = {{"keys", std::move(keys)}, {"state", answer.value("requestState", Json())}};
  return AskForInput(questions, std::string(kStatePrefix) + carried.dump());
}

// Rule 6: a question from the upstream; nullopt when it was refused and the call goes on.
std::optional<Json> Asked(UpstreamLink& link, const ToolContext& ctx, const ForwardSpec& spec,
                          const InFlight& call) {
  std::optional<Json> ask = call.request->TakeAsk();
  if (!ask) return std::nullopt;
  const std::string method = (*ask)["method"].get<std::string>();
  const Json question = {{"method", method}, {"params", (*ask)["params"]}};
  if (!spec.may_ask || !ctx.CanAsk(question)) {
    spdlog::info("{}: the upstream asked {}, which this call's client cannot answer: refused",
                 spec.label, method);
    call.client->AnswerError((*ask)["id"], kInternalError,
                             "the client of this call cannot answer " + method);
    return std::nullopt;
  }
  ParkedAsk parked;
  parked.client = call.client;
  parked.request = call.request;
  parked.ask_id = (*ask)["id"];
  const std::string name = link.Park(std::move(parked));
  return AskForInput(Json{{name, question}}, std::string(kParkedPrefix) + name);
}

}  // namespace

Json ForwardToUpstream(UpstreamLink& link, ToolContext& ctx, ForwardSpec spec) {
  Begun begun = ctx.tool_state().rfind(kParkedPrefix, 0) == 0 ? Resume(link, ctx, spec)
                                                              : Send(link, ctx, spec);
  if (Json* answer = std::get_if<Json>(&begun)) return std::move(*answer);
  InFlight call = std::get<InFlight>(std::move(begun));
  std::string task_id;  // rule 9: the upstream's task, once created
  while (true) {
    switch (call.request->Wait(ctx.token(), ctx.deadline())) {
      case UpstreamRequest::Event::kAnswered:
        if (spec.upstream_task && task_id.empty()) {
          if (std::optional<std::string> created = CreatedTask(*call.request)) {
            task_id = *created;
            call = AwaitTask(ctx, call, task_id);
            continue;
          }
        }
        return Answered(spec, *call.request);
      case UpstreamRequest::Event::kAsked:
        if (std::optional<Json> question = Asked(link, ctx, spec, call)) return *question;
        continue;
      case UpstreamRequest::Event::kLost:
        // Once its task exists, the call has reached the upstream, whatever became of the
        // tasks/result request.
        if (!call.request->sent() && task_id.empty()) {
          return Unavailable(call.request->lost_reason());
        }
        return Lost(spec, call.request->lost_reason());
      case UpstreamRequest::Event::kCancelled:
        call.client->Cancel(call.request, "cancelled");
        CancelTask(call, task_id);
        return Stopped(spec, "cancelled", "The call was cancelled");
      case UpstreamRequest::Event::kDeadline:
        // The deadline is often the call's own maximum, whose timer settles the call at the
        // same instant: give the coordinator a moment, so the client hears keel's clock
        // (timeout, layer max) rather than this attempt's.
        if (ctx.token().WaitUntil(std::chrono::steady_clock::now() + kSettleMargin)) {
          call.client->Cancel(call.request, "keel's timeout");
          CancelTask(call, task_id);
          return Stopped(spec, "cancelled", "The call was cancelled");
        }
        call.client->Cancel(call.request, "keel's attempt timeout");
        CancelTask(call, task_id);
        return Stopped(
            spec, "attempt_timeout",
            "The upstream server did not answer '" + spec.label + "' within the attempt's time");
    }
  }
}

}  // namespace keel
