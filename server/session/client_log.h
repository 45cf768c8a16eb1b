// ClientLog: MCP's logging capability — notifications/message to the client at or above
// the level set by logging/setLevel. Loop thread only.
//
// Invariants:
//  1. Nothing is sent before the client calls logging/setLevel (the spec lets the server
//     choose; hosts that never ask get a quiet stream), unless keel was started with a
//     level for them (--client-log-level: for clients whose setLevel never reaches keel,
//     such as mcp-proxy, which answers it itself).
//  2. At most kBurst messages at once and kPerSecond on average (token bucket on the
//     injected clock); the rest are dropped and counted.
//  3. keel's own messages carry no secrets, arguments or results: only what keel itself
//     observed. A tool's messages (ToolContext::Log) are what the tool chose to tell.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "protocol/logging_level.h"
#include "server/runtime/clock.h"
#include "server/transport/output_sink.h"

namespace keel {

class ClientLog {
 public:
  static constexpr double kPerSecond = 10;
  static constexpr double kBurst = 20;

  ClientLog(OutputSink& sink, const Clock& clock) : sink_(sink), clock_(clock) {}

  void SetLevel(LoggingLevel level) { threshold_ = level; }
  // The session's level (logging/setLevel); nullopt until one is set.
  const std::optional<LoggingLevel>& level() const { return threshold_; }
  // A message at `level`, sent when the session's level lets it through (invariant 1).
  void Log(LoggingLevel level, std::string_view logger, nlohmann::json data) {
    Log(threshold_, level, logger, std::move(data));
  }
  // The same with another threshold: a modern request's own logLevel (MCP 2026-07-28),
  // nullopt meaning nothing is sent. The rate limit (invariant 2) is shared.
  void Log(const std::optional<LoggingLevel>& threshold, LoggingLevel level,
           std::string_view logger, nlohmann::json data);

  uint64_t dropped() const { return dropped_; }

 private:
  OutputSink& sink_;
  const Clock& clock_;
  std::optional<LoggingLevel> threshold_;
  double tokens_ = kBurst;
  TimePoint last_refill_{};
  uint64_t dropped_ = 0;
};

}  // namespace keel
