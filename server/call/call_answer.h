// CallAnswer: how a settled call is answered — exactly one of: nothing (cancelled: MCP sends
// no response), the CallToolResult the call produced (completed, failed, timed out), or a
// JSON-RPC error (the server shut down before the call finished). The RequestCoordinator
// settles with it and writes it (or hands it to a task's on_settle) as it is, so no error is
// packed into JSON only to be unpacked again.
//
// Pure; a value type.
#pragma once

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace keel {

struct JsonRpcError {
  int code = 0;
  std::string message;
};

using CallAnswer = std::variant<std::monostate, nlohmann::json, JsonRpcError>;

}  // namespace keel
