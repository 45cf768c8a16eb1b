// Unit tests for protocol/mcp_version.h: protocol version negotiation for initialize.
#include "protocol/mcp_version.h"

#include <string>

#include <catch2/catch.hpp>

using keel::NegotiateProtocolVersion;

namespace mcp_version_test {

TEST_CASE("a supported requested version is echoed back") {
  CHECK(NegotiateProtocolVersion("2025-11-25") == "2025-11-25");
  CHECK(NegotiateProtocolVersion("2025-06-18") == "2025-06-18");
}

TEST_CASE("any other requested version is answered with the latest, 2025-11-25") {
  CHECK(keel::kLatestProtocolVersion == "2025-11-25");
  for (const char* requested : {"2024-11-05", "2025-03-26", "2099-01-01", "", "latest",
                                "2025-11-25 ", "2025-06-18\n", "2025-6-18"}) {
    INFO("requested: '" << requested << "'");
    CHECK(NegotiateProtocolVersion(requested) == "2025-11-25");
  }
}

TEST_CASE("the supported versions are listed newest first") {
  REQUIRE(keel::kSupportedProtocolVersions.size() == 2);
  CHECK(keel::kSupportedProtocolVersions[0] == keel::kLatestProtocolVersion);
  CHECK(keel::kSupportedProtocolVersions[1] == "2025-06-18");
}

}  // namespace mcp_version_test
