// JSON-RPC 2.0 and MCP error codes keel puts on the wire. One table, so every layer
// names the same code the same way; docs/errors.md says when each is sent.
//
// keel defines no code of its own: -32000..-32019 stay unused (MCP 2026-07-28: new
// implementations SHOULD NOT use them; the official TypeScript SDK uses -32000/-32001
// client-side), and -32020..-32099 are the spec's, of which keel sends only those below.
// What keel knows beyond a code travels in `data`.
#pragma once

namespace keel {

constexpr int kParseError = -32700;      // unparsable JSON or invalid UTF-8
constexpr int kInvalidRequest = -32600;  // malformed envelope, batch, duplicate id, not initialized
constexpr int kMethodNotFound = -32601;  // unknown method, or one the request's era lacks
constexpr int kInvalidParams = -32602;   // bad params shape, unknown tool, bad cursor, bad level
constexpr int kInternalError = -32603;   // server faults, calls ended by shutdown

// MCP 2026-07-28 (reference/mcp-2026-07-28.md §1.5).
constexpr int kHeaderMismatch = -32020;                   // HTTP headers disagree with the body
constexpr int kMissingRequiredClientCapability = -32021;  // data.requiredCapabilities
constexpr int kUnsupportedProtocolVersion = -32022;       // data.supported, data.requested

}  // namespace keel
