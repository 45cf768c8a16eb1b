// The MCP 2026-07-28 request envelope (ERA-1, ERA-3, ERA-5): which requests are modern, and the
// checks on their _meta in the order the spec's conformance suite expects, each with its code.
#include "protocol/mcp_envelope.h"

#include <catch2/catch.hpp>

#include "protocol/mcp_version.h"

namespace keel::mcp_envelope_test {
namespace {

Json Params(Json meta) { return Json{{"_meta", std::move(meta)}}; }

Json Envelope(const char* version = "2026-07-28") {
  return Json{{std::string(kMetaProtocolVersion), version},
              {std::string(kMetaClientCapabilities), Json::object()}};
}

RpcError ErrorOf(const Json& params) {
  const Decoded<ModernEnvelope> decoded = DecodeModernEnvelope(params);
  REQUIRE_FALSE(decoded.ok());
  return decoded.error();
}

}  // namespace

TEST_CASE("a request is modern when its _meta has either required key", "[ERA-1]") {
  CHECK(HasModernEnvelope(Params(Envelope())));
  CHECK(HasModernEnvelope(Params({{std::string(kMetaProtocolVersion), 7}})));
  CHECK(HasModernEnvelope(Params({{std::string(kMetaClientCapabilities), Json::object()}})));
  CHECK_FALSE(HasModernEnvelope(Params({{"progressToken", 1}})));
  CHECK_FALSE(HasModernEnvelope(Json::object()));
  CHECK_FALSE(HasModernEnvelope(Json()));
  CHECK_FALSE(HasModernEnvelope(Json{{"_meta", "x"}}));
}

TEST_CASE("a complete envelope decodes with its client facts, unknown keys ignored", "[ERA-1]") {
  Json meta = Envelope();
  meta[std::string(kMetaClientCapabilities)] = {{"elicitation", Json::object()}};
  meta[std::string(kMetaClientInfo)] = {{"name", "c"}, {"version", "1"}};
  meta[std::string(kMetaLogLevel)] = "warning";
  meta["io.modelcontextprotocol/somethingNew"] = true;
  const Decoded<ModernEnvelope> decoded = DecodeModernEnvelope(Params(meta));
  REQUIRE(decoded.ok());
  CHECK(decoded.value().protocol_version == "2026-07-28");
  CHECK(decoded.value().client_capabilities == Json{{"elicitation", Json::object()}});
  CHECK(decoded.value().log_level == LoggingLevel::kWarning);
}

TEST_CASE("without logLevel a modern request asks for no log messages", "[ERA-5]") {
  const Decoded<ModernEnvelope> decoded = DecodeModernEnvelope(Params(Envelope()));
  REQUIRE(decoded.ok());
  CHECK_FALSE(decoded.value().log_level);
  CHECK(decoded.value().client_capabilities.is_null());  // {}: nothing declared
}

TEST_CASE("a missing or mistyped required key is -32602 naming the key", "[ERA-3]") {
  for (const Json& params : {Json::object(), Json(), Params(Json::object()),
                             Params({{std::string(kMetaClientCapabilities), Json::object()}}),
                             Params({{std::string(kMetaProtocolVersion), ""},
                                     {std::string(kMetaClientCapabilities), Json::object()}})}) {
    const RpcError error = ErrorOf(params);
    CHECK(error.code == kInvalidParams);
    CHECK(error.message.find("io.modelcontextprotocol/protocolVersion") != std::string::npos);
  }
  Json meta = Envelope();
  meta[std::string(kMetaClientCapabilities)] = Json::array();
  const RpcError error = ErrorOf(Params(meta));
  CHECK(error.code == kInvalidParams);
  CHECK(error.message.find("io.modelcontextprotocol/clientCapabilities") != std::string::npos);
}

TEST_CASE("a missing key is reported before an unsupported version", "[ERA-3]") {
  const RpcError error = ErrorOf(Params({{std::string(kMetaProtocolVersion), "v999.0.0"}}));
  CHECK(error.code == kInvalidParams);
}

TEST_CASE("any version but 2026-07-28 is -32022 with every supported version and the request's",
          "[ERA-3]") {
  for (const char* version : {"v999.0.0", "2025-11-25", "2025-06-18", "2027-01-01"}) {
    const RpcError error = ErrorOf(Params(Envelope(version)));
    CHECK(error.code == kUnsupportedProtocolVersion);
    CHECK(error.message == "Unsupported protocol version");
    CHECK(error.data["requested"] == version);
    CHECK(error.data["supported"] == Json{"2026-07-28", "2025-11-25", "2025-06-18"});
  }
}

TEST_CASE("a logLevel that is not a LoggingLevel name is -32602", "[ERA-3]") {
  for (const Json& level : {Json("verbose"), Json("INFO"), Json(3), Json()}) {
    Json meta = Envelope();
    meta[std::string(kMetaLogLevel)] = level;
    CHECK(ErrorOf(Params(meta)).code == kInvalidParams);
  }
}

TEST_CASE("a clientInfo of any shape is neither read nor refused", "[ERA-1]") {
  for (const Json& info : {Json("me"), Json(7), Json::object()}) {
    Json meta = Envelope();
    meta[std::string(kMetaClientInfo)] = info;
    CHECK(DecodeModernEnvelope(Params(meta)).ok());
  }
}

TEST_CASE(
    "only extensions[io.modelcontextprotocol/tasks] as an object declares the tasks "
    "extension",
    "[TASKX-1]") {
  CHECK(DeclaresTasksExtension(
      Json::parse(R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})")));
  CHECK(DeclaresTasksExtension(
      Json::parse(R"({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{"x":1}}})")));
  CHECK_FALSE(DeclaresTasksExtension(Json()));
  CHECK_FALSE(DeclaresTasksExtension(Json::object()));
  CHECK_FALSE(
      DeclaresTasksExtension(Json::parse(R"({"tasks":{"requests":{"tools":{"call":{}}}}})")));
  CHECK_FALSE(DeclaresTasksExtension(
      Json::parse(R"({"extensions":{"io.modelcontextprotocol/tasks":true}})")));
  CHECK_FALSE(
      DeclaresTasksExtension(Json::parse(R"({"extensions":["io.modelcontextprotocol/tasks"]})")));
  CHECK_FALSE(DeclaresTasksExtension(Json::parse(R"({"extensions":{"other":{}}})")));
}

}  // namespace keel::mcp_envelope_test
