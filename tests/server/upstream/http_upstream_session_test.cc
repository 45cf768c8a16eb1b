// HttpUpstreamSession (server/upstream/http_upstream_session.h): the protocol version and
// legacy session keel's HTTP upstream connection learns, and the headers it sends.
#include "server/upstream/http_upstream_session.h"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace keel::http_upstream_session_test {
namespace {

using Json = nlohmann::json;

bool SessionHas(const std::vector<std::string>& headers, const std::string& line) {
  return std::find(headers.begin(), headers.end(), line) != headers.end();
}

bool SessionNamed(const std::vector<std::string>& headers, const std::string& prefix) {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const std::string& h) { return h.rfind(prefix, 0) == 0; });
}

Json SessionInitialize() {
  return Json{{"jsonrpc", "2.0"},
              {"id", 1},
              {"method", "initialize"},
              {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", Json::object()}}}};
}

Json SessionModern(const std::string& method, Json params) {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
  return Json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", method}, {"params", params}};
}

}  // namespace

TEST_CASE("a legacy connection sends the negotiated version and the session it was given",
          "[upstream][http]") {
  HttpUpstreamSession session({"Authorization: Bearer t"});
  const auto first = session.PostHeaders(SessionInitialize());
  CHECK(SessionHas(first, "Authorization: Bearer t"));
  CHECK(SessionHas(first, "Content-Type: application/json"));
  CHECK(SessionHas(first, "Accept: application/json, text/event-stream"));
  CHECK(SessionHas(first, "MCP-Protocol-Version: 2025-11-25"));
  CHECK_FALSE(SessionNamed(first, "Mcp-Session-Id"));
  session.OnAnswer("initialize", Json{{"result", {{"protocolVersion", "2025-06-18"}}}}, "abc-1");
  CHECK(session.session_id() == "abc-1");
  CHECK_FALSE(session.modern());
  const Json list = {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}};
  const auto later = session.PostHeaders(list);
  CHECK(SessionHas(later, "MCP-Protocol-Version: 2025-06-18"));
  CHECK(SessionHas(later, "Mcp-Session-Id: abc-1"));
  CHECK(SessionHas(session.StreamHeaders(), "Mcp-Session-Id: abc-1"));
  CHECK(SessionHas(session.StreamHeaders(), "Accept: text/event-stream"));
  CHECK(SessionHas(session.DeleteHeaders(), "Mcp-Session-Id: abc-1"));
}

TEST_CASE("a session id that is not visible ASCII is not kept", "[upstream][http]") {
  HttpUpstreamSession session({});
  session.PostHeaders(SessionInitialize());
  session.OnAnswer("initialize", Json{{"result", {{"protocolVersion", "2025-11-25"}}}},
                   "x\r\nInjected: 1");
  CHECK(session.session_id().empty());
  session.OnAnswer("initialize", Json{{"error", {{"code", -32600}}}}, "refused");
  CHECK(session.session_id().empty());
}

TEST_CASE("a modern message names its method and its target in headers", "[upstream][http]") {
  HttpUpstreamSession session({});
  const auto headers =
      session.PostHeaders(SessionModern("resources/read", Json{{"uri", "file:///r"}}));
  CHECK(session.modern());
  CHECK(session.version() == "2026-07-28");
  CHECK(SessionHas(headers, "MCP-Protocol-Version: 2026-07-28"));
  CHECK(SessionHas(headers, "Mcp-Method: resources/read"));
  CHECK(SessionHas(headers, "Mcp-Name: file:///r"));
  CHECK_FALSE(SessionNamed(headers, "Mcp-Session-Id"));
}

TEST_CASE("a tools/call carries Mcp-Param headers the upstream's tools/list declared",
          "[upstream][http]") {
  HttpUpstreamSession session({});
  const Json schema = Json::parse(R"({"type": "object", "properties": {
      "region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer"}}})");
  session.OnAnswer("tools/list",
                   Json{{"result", {{"tools", {{{"name", "deploy"}, {"inputSchema", schema}}}}}}},
                   "");
  const Json call = SessionModern(
      "tools/call", Json{{"name", "deploy"}, {"arguments", {{"region", "eu"}, {"n", 1}}}});
  const auto headers = session.PostHeaders(call);
  CHECK(SessionHas(headers, "Mcp-Name: deploy"));
  CHECK(SessionHas(headers, "Mcp-Param-Region: eu"));
  CHECK_FALSE(SessionNamed(headers, "Mcp-Param-N"));
  const Json other =
      SessionModern("tools/call", Json{{"name", "other"}, {"arguments", {{"region", "eu"}}}});
  CHECK_FALSE(SessionNamed(session.PostHeaders(other), "Mcp-Param-"));
}

TEST_CASE("an empty header value is sent empty, not dropped", "[upstream][http]") {
  HttpUpstreamSession session({});
  const auto headers = session.PostHeaders(SessionModern("prompts/get", Json{{"name", ""}}));
  CHECK(SessionHas(headers, "Mcp-Name;"));
}

}  // namespace keel::http_upstream_session_test
