// The Session's request dispatch: which era a request speaks (its peer's legacy one, or its
// own modern envelope), the method looked up in that era, the params decoded once
// into a typed request, and the handlers of the methods answered on the loop. Every answer
// goes out as the request's era writes it (EncodeResultAs, protocol/mcp_era.h).
#include <algorithm>
#include <string>
#include <variant>

#include "protocol/mcp_envelope.h"
#include "server/session/session.h"
#include "server/session/session_instructions.h"
#include "server/tasks/task_wire.h"

namespace keel {
namespace {

// std::visit over a set of lambdas.
template <typename... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

bool IsTaskMethod(McpMethod method) {
  return method == McpMethod::kGetTask || method == McpMethod::kCancelTask ||
         method == McpMethod::kUpdateTask;
}

TaskDialect DialectOf(const WireForm& wire) {
  return IsModern(wire) ? TaskDialect::kExtension : TaskDialect::kLegacy;
}

}  // namespace

void Session::HandleRequest(Message& message, ExchangeId exchange, PeerId peer) {
  const Json& id = message.id;
  // First, whatever the method or era (ping, methods answered at once, unknown ones
  // included): a second answer for an id the client still waits on would be taken for the
  // first one's.
  if (IdInUse(id, peer)) return ReplyError(exchange, id, IdInFlight(id));
  // A modern request is served by its own envelope, whatever its peer negotiated;
  // server/discover is always modern (its probe must not meet the legacy lifecycle).
  if (message.method == "server/discover" || HasModernEnvelope(message.params)) {
    return HandleModernRequest(message, exchange, peer);
  }
  const RequestContext request{id, exchange, peer, LegacyWireOf(peer)};
  const std::optional<McpMethod> method = MethodOf(request.wire, message.method);
  if (!method || !Serves(*method)) return ReplyError(request, MethodNotFound(message.method));
  if (*method == McpMethod::kPing) return Reply(request, Json::object());
  if (*method == McpMethod::kInitialize) {
    if (PeerInitialized(peer)) return ReplyError(request, AlreadyInitialized());
  } else if (!PeerInitialized(peer)) {
    return ReplyError(request, NotInitialized());
  }
  DecodeAndServe(request, *method, std::move(message.params));
}

void Session::HandleModernRequest(Message& message, ExchangeId exchange, PeerId peer) {
  const Json& id = message.id;
  const Decoded<ModernEnvelope> envelope = DecodeModernEnvelope(message.params);
  if (!envelope.ok()) return ReplyError(exchange, id, envelope.error());
  const WireForm wire = ModernWireForm(tasks_ != nullptr);
  const std::optional<McpMethod> method = MethodOf(wire, message.method);
  if (!method || !Serves(*method)) return ReplyError(exchange, id, MethodNotFound(message.method));
  // -32021 (a missing client capability) comes before the params are read. keel's one
  // question, an approval, falls back to approval_required without elicitation, so only
  // the tasks extension is ever required.
  const Json& capabilities = envelope.value().client_capabilities;
  if (IsTaskMethod(*method) && !DeclaresTasksExtension(capabilities)) {
    return ReplyError(exchange, id, TasksExtensionRequired(message.method));
  }
  DecodeAndServe(
      RequestContext{id, exchange, peer, wire, envelope.value().log_level, &capabilities}, *method,
      std::move(message.params));
}

void Session::DecodeAndServe(const RequestContext& request, McpMethod method, Json params) {
  Tool* tool = nullptr;
  Decoded<McpRequest> decoded =
      DecodeRequest(request.wire, method, std::move(params), [&](const std::string& name) {
        tool = tools_.Find(name);
        return tool != nullptr;
      });
  if (!decoded.ok()) return ReplyError(request, decoded.error());
  Serve(request, decoded.value(), tool);
}

void Session::Serve(const RequestContext& request, McpRequest& decoded, Tool* tool) {
  const TaskManager::ReplyTo to{request.id, request.exchange, request.peer};
  std::visit(
      Overloaded{
          [&](InitializeRequest& initialize) { Initialize(request, initialize); },
          [&](PingRequest&) { Reply(request, Json::object()); },
          [&](DiscoverRequest&) { Discover(request); },
          [&](ListToolsRequest& list) { ListTools(request, list); },
          [&](CallToolRequest& call) { CallTool(request, *tool, std::move(call)); },
          [&](SetLevelRequest& set_level) {
            // A legacy method: its peer has initialized (HandleRequest).
            peers_.at(request.peer).log_level = set_level.level;
            Reply(request, Json::object());
          },
          // tasks/* exist only in an era with tasks, so only with a task store.
          [&](GetTaskRequest& get) { tasks_->Get(to, get, DialectOf(request.wire)); },
          [&](TaskResultRequest& result) { tasks_->Result(to, result); },
          [&](ListTasksRequest& list) { tasks_->List(to, list, request.wire); },
          [&](CancelTaskRequest& cancel) { tasks_->Cancel(to, cancel, DialectOf(request.wire)); },
          [&](UpdateTaskRequest& update) { tasks_->Update(to, update); },
          [&](ListenRequest& listen) { Listen(request, listen); },
          [&](ListResourcesRequest& list) { ListResources(request, list); },
          [&](ListResourceTemplatesRequest& list) { ListResourceTemplates(request, list); },
          [&](ReadResourceRequest& read) { ReadResource(request, read); },
          [&](SubscribeRequest& subscribe) { Subscribe(request, subscribe); },
          [&](ListPromptsRequest& list) { ListPrompts(request, list); },
          [&](GetPromptRequest& get) { GetPrompt(request, std::move(get)); },
          [&](CompleteRequest& complete) { Complete(request, complete); },
      },
      decoded);
}

void Session::Initialize(const RequestContext& request, const InitializeRequest& initialize) {
  // The peer's state begins here (LegacyPeer invariant 1).
  LegacyPeer& peer = peers_[request.peer];
  peer.wire = NegotiateWireForm(initialize.protocol_version, tasks_ != nullptr);
  peer.client_capabilities = initialize.capabilities;
  peer.log_level = options_.client_log_level;
  const WireForm& wire = peer.wire;
  InitializeResult result =
      InitializeResultFor(wire, stamp_.server_info(),
                          InstructionsFor(wire, options_.upstream_instructions,
                                          options_.identity.instructions, tools_));
  DeclareSurface(result.capabilities);
  Reply(RequestContext{request.id, request.exchange, request.peer, wire}, ToWire(wire, result));
}

void Session::Discover(const RequestContext& request) {
  DiscoverResult result =
      DiscoverResultFor(request.wire,
                        InstructionsFor(request.wire, options_.upstream_instructions,
                                        options_.identity.instructions, tools_),
                        options_.cache);
  DeclareSurface(result.capabilities);
  Reply(request, ToWire(request.wire, result));
}

void Session::ListTools(const RequestContext& request, const ListToolsRequest& list) {
  const auto& all = tools_.tools();
  if (list.offset > all.size()) return ReplyError(request, InvalidToolsCursor());
  const size_t end = std::min(all.size(), list.offset + options_.page_size);
  ListToolsResult result;
  result.tools.reserve(end - list.offset);
  for (size_t i = list.offset; i < end; ++i) {
    result.tools.push_back(ToolRegistry::Describe(all[i]->spec()));
  }
  if (end < all.size()) result.next_offset = end;
  result.cache = options_.cache;
  Reply(request, ToWire(request.wire, std::move(result)));
}

void Session::CallTool(const RequestContext& request, Tool& tool, CallToolRequest call) {
  if (!ApproveByElicitation(request, tool.spec(), call)) return;
  if (IsModern(request.wire)) return CallToolModern(request, tool, std::move(call));
  // MCP 2025-11-25 tasks: execution.taskSupport decides (-32601 when it forbids). Without
  // tasks in the era, call.task is always empty and no tool requires one.
  const TaskSupport support = tool.spec().task_support;
  if (call.task) {
    if (support == TaskSupport::kForbidden) {
      return ReplyError(request, TaskForbidden(tool.spec().name));
    }
    return CreateTask(request, tool, std::move(call));
  }
  if (request.wire.tasks && support == TaskSupport::kRequired) {
    return ReplyError(request, TaskRequired(tool.spec().name));
  }
  // A tool that asks for input: keel sends its questions to the client as requests.
  std::shared_ptr<InputRound> input;
  if (tool.spec().asks_for_input) {
    input = std::make_shared<InputRound>();
    input->client_capabilities = peers_.at(request.peer).client_capabilities;
    input->answers = Json::object();
    input->server_asks = true;
  }
  AdmitCall(request, tool, std::move(call.arguments), std::move(call.meta),
            std::move(call.progress_token), false, std::move(input));
}

void Session::CallToolModern(const RequestContext& request, Tool& tool, CallToolRequest call) {
  // Invariant 9. Without a task store the extension is not offered: every call runs as one.
  const TaskSupport support = tool.spec().task_support;
  const bool declared = tasks_ != nullptr && request.client_capabilities != nullptr &&
                        DeclaresTasksExtension(*request.client_capabilities);
  if (tasks_ != nullptr && support == TaskSupport::kRequired) {
    if (!declared) {
      return ReplyError(request, TasksExtensionRequired("tool '" + tool.spec().name +
                                                        "' (its taskSupport is 'required')"));
    }
    // One that asks for input asks as a call first, and becomes a task on its BecomeTask.
    if (!tool.spec().asks_for_input) return CreateTask(request, tool, std::move(call));
  }
  bool refused = false;
  std::shared_ptr<const InputRound> input = BeginInput(request, tool.spec(), call, &refused);
  if (refused) return;
  const bool may_become_task = declared && support != TaskSupport::kForbidden;
  AdmitCall(request, tool, std::move(call.arguments), std::move(call.meta),
            std::move(call.progress_token), may_become_task, std::move(input));
}

void Session::Reply(const RequestContext& request, const Json& result) {
  request_spans_.NoteResult(request.id, result);
  Out(request.exchange).SendResponse(EncodeResultAs(request.wire, request.id, result, stamp_));
}

void Session::ReplyError(ExchangeId exchange, const Json& id, const RpcError& error) {
  request_spans_.NoteError(id, error.code, error.message);
  Out(exchange).SendResponse(EncodeRpcError(id, error));
}

}  // namespace keel
