#include "server/session/client_log.h"

#include <algorithm>
#include <string>

#include "protocol/json_rpc.h"

namespace keel {

void ClientLog::Log(const std::optional<LoggingLevel>& threshold, LoggingLevel level,
                    std::string_view logger, nlohmann::json data, ExchangeId exchange) {
  if (!threshold || level < *threshold) return;
  OutputSink* sink = router_->Find(exchange);
  if (sink == nullptr) {  // its exchange is gone: it spends no budget
    ++unroutable_;
    return;
  }
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
  nlohmann::json params = {{"level", std::string(LoggingLevelName(level))},
                           {"logger", std::string(logger)},
                           {"data", std::move(data)}};
  sink->SendLog(EncodeNotification("notifications/message", params));
}

}  // namespace keel
