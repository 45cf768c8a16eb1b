// JSON-RPC 2.0 and MCP error codes keel puts on the wire. One table, so every layer
// names the same code the same way. Codes -32000..-32099 are left alone: the official
// TypeScript SDK uses -32000/-32001 client-side and MCP 2026 reserves -32020..-32099.
#pragma once

namespace keel {

constexpr int kParseError = -32700;      // unparsable JSON or invalid UTF-8
constexpr int kInvalidRequest = -32600;  // malformed envelope, batch, duplicate id, not initialized
constexpr int kMethodNotFound = -32601;  // unknown method (server/discover included)
constexpr int kInvalidParams = -32602;   // bad params shape, unknown tool, bad cursor, bad level
constexpr int kInternalError = -32603;   // server faults, calls ended by shutdown

}  // namespace keel
