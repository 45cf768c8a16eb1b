// Protocol versions keel speaks, newest first. Pure data.
// A client asking for any other version gets kLatestProtocolVersion as a success
// (MCP lifecycle: "respond with another protocol version it supports ... the latest").
#pragma once

#include <array>
#include <string_view>

namespace keel {

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";
inline constexpr std::array<std::string_view, 2> kSupportedProtocolVersions = {"2025-11-25",
                                                                               "2025-06-18"};

// The version to answer `initialize` with, given what the client requested.
std::string_view NegotiateProtocolVersion(std::string_view requested);

}  // namespace keel
