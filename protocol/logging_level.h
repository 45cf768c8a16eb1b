// LoggingLevel: MCP's eight log severities (the syslog levels of RFC 5424), the level a
// client sets with logging/setLevel and every notifications/message carries. Pure values
// and functions; reentrant; never throw.
#pragma once

#include <optional>
#include <string_view>

namespace keel {

// Least severe first, so that `a < b` means a is less severe than b.
enum class LoggingLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };

// The level named `name` ("debug" ... "emergency", exactly); nullopt for anything else.
std::optional<LoggingLevel> ParseLoggingLevel(std::string_view name);
// The wire name of `level`.
std::string_view LoggingLevelName(LoggingLevel level);

}  // namespace keel
