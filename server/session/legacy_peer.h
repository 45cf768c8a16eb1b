// LegacyPeer: what the Session keeps of one legacy (2025-11-25 / 2025-06-18) peer between its
// requests — the lifecycle state its initialize set up. A peer (server/transport/exchange.h)
// is the stdio connection, or one legacy Streamable HTTP session (Mcp-Session-Id); modern
// (2026-07-28) requests are stateless and have none.
//
// A value type, kept by the Session (loop thread) in a map by PeerId.
// Invariants:
//  1. A peer has a LegacyPeer exactly from its initialize (which creates it) until the
//     Session forgets it (Session::ForgetPeer); a legacy request from a peer without one,
//     other than initialize and ping, is refused as before initialize (-32600).
//  2. Nothing here is shared between peers: one peer's era, capabilities and log level
//     never change how another's requests are served.
#pragma once

#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/logging_level.h"
#include "protocol/mcp_era.h"

namespace keel {

struct LegacyPeer {
  WireForm wire;                          // the era its initialize negotiated
  nlohmann::json client_capabilities;     // what it declared it can answer (MRTR-1)
  std::optional<LoggingLevel> log_level;  // logging/setLevel (or --client-log-level)
  std::set<std::string> subscriptions;    // resources/subscribe URIs
};

}  // namespace keel
