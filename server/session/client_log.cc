#include "server/session/client_log.h"

#include <algorithm>
#include <array>
#include <string>

#include "protocol/json_rpc.h"

namespace keel {
namespace {

constexpr std::array<std::string_view, 8> kLevelNames = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

}  // namespace

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  for (size_t i = 0; i < kLevelNames.size(); ++i) {
    if (kLevelNames[i] == name) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

std::string_view LogLevelName(LogLevel level) { return kLevelNames[static_cast<size_t>(level)]; }

void ClientLog::Log(LogLevel level, std::string_view logger, nlohmann::json data) {
  if (!threshold_ || level < *threshold_) return;
  const TimePoint now = clock_.Now();
  if (last_refill_ != TimePoint{}) {
    const double seconds = std::chrono::duration<double>(now - last_refill_).count();
    tokens_ = std::min(kBurst, tokens_ + seconds * kPerSecond);
  }
  last_refill_ = now;
  if (tokens_ < 1) {
    ++dropped_;
    return;
  }
  tokens_ -= 1;
  nlohmann::json params = {{"level", std::string(LogLevelName(level))},
                           {"logger", std::string(logger)},
                           {"data", std::move(data)}};
  sink_.SendLog(EncodeNotification("notifications/message", params));
}

}  // namespace keel
