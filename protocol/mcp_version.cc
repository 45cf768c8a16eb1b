#include "protocol/mcp_version.h"

namespace keel {

std::string_view NegotiateProtocolVersion(std::string_view requested) {
  for (std::string_view v : kSupportedProtocolVersions) {
    if (v == requested) return v;
  }
  return kLatestProtocolVersion;
}

}  // namespace keel
