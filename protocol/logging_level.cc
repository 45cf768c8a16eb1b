#include "protocol/logging_level.h"

#include <array>
#include <cstddef>

namespace keel {
namespace {

constexpr std::array<std::string_view, 8> kLevelNames = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

}  // namespace

std::optional<LoggingLevel> ParseLoggingLevel(std::string_view name) {
  for (size_t i = 0; i < kLevelNames.size(); ++i) {
    if (kLevelNames[i] == name) return static_cast<LoggingLevel>(i);
  }
  return std::nullopt;
}

std::string_view LoggingLevelName(LoggingLevel level) {
  return kLevelNames[static_cast<size_t>(level)];
}

}  // namespace keel
