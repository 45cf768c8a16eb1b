#include "protocol/iso_time.h"

#include <cstdio>
#include <ctime>

namespace keel {

std::string IsoTime(int64_t epoch_ms) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof(text) - n, ".%03dZ", static_cast<int>(epoch_ms % 1000));
  return text;
}

}  // namespace keel
