// Protocol versions keel speaks. Pure data.
//
// Two eras (reference/mcp-2026-07-28.md §2):
//  - legacy (2025-11-25, 2025-06-18): chosen once per connection by initialize. A client
//    asking initialize for any other version gets kLatestProtocolVersion as a success
//    (MCP lifecycle: "respond with another protocol version it supports ... the latest").
//  - modern (2026-07-28): named by every request in its _meta; no handshake. A request
//    naming any other version is refused (-32022, mcp_envelope.h).
#pragma once

#include <array>
#include <string_view>

namespace keel {

// The newest legacy version: what initialize answers a version keel does not know.
inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";
// The legacy versions initialize accepts, newest first.
inline constexpr std::array<std::string_view, 2> kSupportedProtocolVersions = {"2025-11-25",
                                                                               "2025-06-18"};
// The one modern version keel serves.
inline constexpr std::string_view kModernProtocolVersion = "2026-07-28";
// Every version keel speaks, newest first: server/discover's supportedVersions and the
// `supported` list of an unsupported-version error (the two are the same list).
inline constexpr std::array<std::string_view, 3> kAllProtocolVersions = {"2026-07-28", "2025-11-25",
                                                                         "2025-06-18"};

// The tasks extension of 2026-07-28 (SEP-2663): its id in capabilities.extensions, the
// server's in server/discover and the client's per request.
inline constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";

// The version to answer `initialize` with, given what the client requested.
std::string_view NegotiateProtocolVersion(std::string_view requested);

}  // namespace keel
