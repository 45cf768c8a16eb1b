// The MCP 2026-07-28 request envelope: what a modern request says about itself in
// params._meta, since there is no handshake (reference/mcp-2026-07-28.md §1.1, §2.1). Pure
// functions; reentrant; never throw.
//
// Rules:
//  1. A request is modern when its params._meta has either required key
//     (io.modelcontextprotocol/protocolVersion or .../clientCapabilities), whatever the
//     connection negotiated before (HasModernEnvelope). server/discover is modern always.
//  2. Decoding checks, in this order, and the first failing check answers:
//       a. protocolVersion is a non-empty string and clientCapabilities an object: else
//          -32602, naming the key;
//       b. protocolVersion is kModernProtocolVersion: else -32022 "Unsupported protocol
//          version" with data {supported: kAllProtocolVersions, requested: as sent};
//       c. logLevel, when present, is a LoggingLevel name: else -32602.
//     Method lookup (-32601) and required client capabilities (-32021) come after, in the
//     dispatcher; HTTP's header checks (-32020) between a and b, in the transport.
//  3. clientInfo is optional and not read (keel has no use for it yet; a request's trace
//     names the client by its traceparent). Other _meta keys are neither required nor
//     refused (the spec reserves them; keel reads what it knows).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "protocol/error_codes.h"
#include "protocol/logging_level.h"
#include "protocol/mcp_error.h"

namespace keel {

using Json = nlohmann::json;

inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaClientCapabilities =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kMetaLogLevel = "io.modelcontextprotocol/logLevel";
// Where a modern result names its server (in the result's _meta).
inline constexpr std::string_view kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

struct ModernEnvelope {
  std::string protocol_version;
  Json client_capabilities;               // as sent when not empty; null for {}
  std::optional<LoggingLevel> log_level;  // nullopt: no log messages for this request
  bool operator==(const ModernEnvelope&) const = default;
};

// Rule 1 (the method aside).
bool HasModernEnvelope(const Json& params);
// Rule 2.
Decoded<ModernEnvelope> DecodeModernEnvelope(const Json& params);

// The clientCapabilities of a modern request (ModernEnvelope::client_capabilities) declare
// the tasks extension: extensions["io.modelcontextprotocol/tasks"] is an object. A legacy
// `tasks` capability does not count.
bool DeclaresTasksExtension(const Json& client_capabilities);

// -32022 for `requested` (rule 2b).
RpcError UnsupportedProtocolVersion(std::string_view requested);

}  // namespace keel
