// ClientLog: MCP's logging capability — notifications/message to the client at or above
// the level the client asked for. Loop thread only.
//
// Whose level: a modern request's own (io.modelcontextprotocol/logLevel, carried by its
// call), or a legacy peer's, set by its logging/setLevel. The Session keeps each legacy
// peer's level (LegacyPeer) and tells the log through set_level_of; without it (unit tests)
// the one level of SetLevel stands for every peer.
//
// Invariants:
//  1. Nothing is sent before the client calls logging/setLevel (the spec lets the server
//     choose; hosts that never ask get a quiet stream), unless keel was started with a
//     level for them (--client-log-level: for clients whose setLevel never reaches keel,
//     such as mcp-proxy, which answers it itself).
//  2. At most kBurst messages at once and kPerSecond on average (token bucket on the
//     injected clock, shared by all peers); the rest are dropped and counted.
//  3. keel's own messages carry no secrets, arguments or results: only what keel itself
//     observed. A tool's messages (ToolContext::Log) are what the tool chose to tell.
//  4. A message about a request goes to that request's exchange (through the OutputRouter,
//     output_router.h); one about none to kNoExchange. One for a closed exchange is dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "protocol/logging_level.h"
#include "server/runtime/clock.h"
#include "server/transport/exchange.h"
#include "server/transport/output_router.h"
#include "server/transport/output_sink.h"

namespace keel {

class ClientLog {
 public:
  static constexpr double kPerSecond = 10;
  static constexpr double kBurst = 20;

  // Messages go to `sink` until set_router.
  ClientLog(OutputSink& sink, const Clock& clock) : own_router_(sink), clock_(clock) {}

  // Where messages go from now on (invariant 4); must outlive this. Null: back to the
  // constructor's sink.
  void set_router(OutputRouter* router) { router_ = router != nullptr ? router : &own_router_; }
  // A legacy peer's level (logging/setLevel, or --client-log-level); nullopt: none yet.
  using LevelFn = std::function<std::optional<LoggingLevel>(PeerId peer)>;
  void set_level_of(LevelFn fn) { level_of_ = std::move(fn); }

  // The level of every peer, when no set_level_of says otherwise.
  void SetLevel(LoggingLevel level) { threshold_ = level; }
  const std::optional<LoggingLevel>& level() const { return threshold_; }
  // Legacy `peer`'s level: set_level_of's, or SetLevel's without it.
  std::optional<LoggingLevel> LevelOf(PeerId peer) const {
    return level_of_ ? level_of_(peer) : threshold_;
  }
  // A message at `level`, sent when SetLevel's level lets it through (invariant 1).
  void Log(LoggingLevel level, std::string_view logger, nlohmann::json data) {
    Log(threshold_, level, logger, std::move(data));
  }
  // The same with another threshold (a modern request's own logLevel, a legacy peer's
  // level), nullopt meaning nothing is sent, to `exchange` (invariant 4). The rate limit
  // (invariant 2) is shared.
  void Log(const std::optional<LoggingLevel>& threshold, LoggingLevel level,
           std::string_view logger, nlohmann::json data, ExchangeId exchange = kNoExchange);

  uint64_t dropped() const { return dropped_; }
  // Messages for an exchange that was gone (invariant 4).
  uint64_t unroutable() const { return unroutable_; }

 private:
  SingleSinkRouter own_router_;
  OutputRouter* router_ = &own_router_;
  const Clock& clock_;
  std::optional<LoggingLevel> threshold_;
  LevelFn level_of_;
  double tokens_ = kBurst;
  TimePoint last_refill_{};
  uint64_t dropped_ = 0;
  uint64_t unroutable_ = 0;
};

}  // namespace keel
