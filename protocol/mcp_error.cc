#include "protocol/mcp_error.h"

#include "protocol/error_codes.h"
#include "protocol/json_rpc.h"
#include "protocol/mcp_version.h"

namespace keel {

std::string EncodeRpcError(const std::optional<Json>& id, const RpcError& error) {
  return EncodeError(id, error.code, error.message, error.data);
}

std::string QuoteForError(std::string_view text) {
  if (text.size() <= kMaxQuotedBytes) return std::string(text);
  return std::string(text.substr(0, kMaxQuotedBytes)) + "...";
}

RpcError InvalidParams(std::string_view what) {
  return RpcError{kInvalidParams, "Invalid params: " + std::string(what), Json()};
}

RpcError MethodNotFound(std::string_view method) {
  return RpcError{kMethodNotFound, "Method not found: " + QuoteForError(method), Json()};
}

RpcError NotInitialized() {
  return RpcError{kInvalidRequest, "Server not initialized: send initialize first", Json()};
}

RpcError AlreadyInitialized() {
  return RpcError{kInvalidRequest, "Invalid Request: already initialized", Json()};
}

RpcError IdInFlight(const Json& id) {
  return RpcError{
      kInvalidRequest,
      "Invalid Request: request id " + QuoteForError(IdKey(id)) + " is already in flight", Json()};
}

RpcError UnknownTool(std::string_view name) {
  return RpcError{kInvalidParams, "Unknown tool: " + QuoteForError(name), Json()};
}

RpcError InvalidToolsCursor() { return InvalidParams("invalid cursor"); }

RpcError TaskForbidden(std::string_view name) {
  return RpcError{kMethodNotFound,
                  "Tool '" + std::string(name) +
                      "' cannot run as a task (its execution.taskSupport is 'forbidden'): call "
                      "it without params.task",
                  Json()};
}

RpcError TaskRequired(std::string_view name) {
  return RpcError{kMethodNotFound,
                  "Tool '" + std::string(name) +
                      "' runs only as a task (its execution.taskSupport is 'required'): add "
                      "params.task",
                  Json()};
}

RpcError TasksExtensionRequired(std::string_view what) {
  Json required = {{"extensions", {{std::string(kTasksExtension), Json::object()}}}};
  return RpcError{kMissingRequiredClientCapability,
                  "Missing required client capability: " + std::string(what) +
                      " needs the tasks extension: declare "
                      "clientCapabilities.extensions[\"" +
                      std::string(kTasksExtension) + "\"]",
                  Json{{"requiredCapabilities", std::move(required)}}};
}

}  // namespace keel
