// The MCP 2026-07-28 request headers (protocol/http_headers.h): the Base64 sentinel and the
// value rules (rule 4), and CheckRequestHeaders (rules 1-3) with its -32020 error naming the
// header. Examples from reference/mcp-2026-07-28.md §3.3 and the conformance probes it cites.
#include "protocol/http_headers.h"

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "protocol/error_codes.h"

namespace keel::http_headers_test {
namespace {

using Json = nlohmann::json;

// Headers by lower-case name, as the transport looks them up.
struct HttpHeaderTable {
  std::map<std::string, std::string> values;
  HeaderLookup Lookup() const {
    return [this](std::string_view name) -> std::optional<std::string_view> {
      const auto it = values.find(std::string(name));
      if (it == values.end()) return std::nullopt;
      return std::string_view(it->second);
    };
  }
};

Json HttpMetaParams(Json params = Json::object()) {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  return params;
}

HttpHeaderTable HttpBaseHeaders(const std::string& method) {
  HttpHeaderTable table;
  table.values["mcp-protocol-version"] = "2026-07-28";
  table.values["mcp-method"] = method;
  return table;
}

// A tools/call schema with one annotated property of each kind headers can carry.
Json HttpParamSchema() {
  return Json::parse(R"({
    "type": "object",
    "properties": {
      "region": {"type": "string", "x-mcp-header": "Region"},
      "count": {"type": "integer", "x-mcp-header": "Count"},
      "dry": {"type": "boolean", "x-mcp-header": "Dry"},
      "note": {"type": "string"}
    }
  })");
}

Json HttpCallParams(Json arguments) {
  return HttpMetaParams(Json{{"name", "deploy"}, {"arguments", std::move(arguments)}});
}

HttpHeaderTable HttpCallHeaders() {
  HttpHeaderTable table = HttpBaseHeaders("tools/call");
  table.values["mcp-name"] = "deploy";
  return table;
}

void HttpRequireMismatch(const std::optional<RpcError>& error, const std::string& header) {
  REQUIRE(error.has_value());
  CHECK(error->code == kHeaderMismatch);
  CHECK(error->code == -32020);
  REQUIRE(error->data.is_object());
  CHECK(error->data.value("header", "") == header);
}

}  // namespace

TEST_CASE("A Base64 sentinel header value decodes to its UTF-8 text", "[http][headers]") {
  CHECK(DecodeHeaderValue("=?base64?SGVsbG8=?=") == std::optional<std::string>("Hello"));
  CHECK(DecodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?=") ==
        std::optional<std::string>("Hello, \xE4\xB8\x96\xE7\x95\x8C"));
  CHECK(DecodeHeaderValue("=?base64?IHBhZGRlZCA=?=") == std::optional<std::string>(" padded "));
}

TEST_CASE("A Base64 sentinel without its padding or with foreign characters is invalid",
          "[http][headers]") {
  CHECK_FALSE(DecodeHeaderValue("=?base64?SGVsbG8?=").has_value());
  CHECK_FALSE(DecodeHeaderValue("=?base64?SGVs!!!bG8=?=").has_value());
  CHECK_FALSE(DecodeBase64("SGVsbG8").has_value());
  CHECK_FALSE(DecodeBase64("SG=sbG8=").has_value());
  CHECK_FALSE(DecodeBase64("S===").has_value());
  CHECK(DecodeBase64("") == std::optional<std::string>(""));
  CHECK(DecodeBase64("SGk=") == std::optional<std::string>("Hi"));
  CHECK(DecodeBase64("SA==") == std::optional<std::string>("H"));
}

TEST_CASE("A header value without the full sentinel is a literal", "[http][headers]") {
  CHECK(DecodeHeaderValue("SGVsbG8=") == std::optional<std::string>("SGVsbG8="));
  CHECK(DecodeHeaderValue("=?base64?SGVsbG8=") == std::optional<std::string>("=?base64?SGVsbG8="));
  CHECK(DecodeHeaderValue("SGVsbG8=?=") == std::optional<std::string>("SGVsbG8=?="));
  // The markers are lower-case and exact.
  CHECK(DecodeHeaderValue("=?BASE64?SGVsbG8=?=") ==
        std::optional<std::string>("=?BASE64?SGVsbG8=?="));
}

TEST_CASE("Header values are trimmed of spaces and tabs at both ends", "[http][headers]") {
  CHECK(DecodeHeaderValue("  name  ") == std::optional<std::string>("name"));
  CHECK(DecodeHeaderValue("\tname \t") == std::optional<std::string>("name"));
  CHECK(DecodeHeaderValue("  =?base64?SGVsbG8=?=  ") == std::optional<std::string>("Hello"));
  CHECK(DecodeHeaderValue("a b") == std::optional<std::string>("a b"));
}

TEST_CASE("Control characters in a header value are refused", "[http][headers]") {
  CHECK_FALSE(DecodeHeaderValue(std::string("a\x01"
                                            "b"))
                  .has_value());
  CHECK_FALSE(DecodeHeaderValue("a\nb").has_value());
  CHECK_FALSE(DecodeHeaderValue("a\rb").has_value());
  CHECK_FALSE(DecodeHeaderValue(std::string("a\x7F"
                                            "b"))
                  .has_value());
  CHECK_FALSE(DecodeHeaderValue(std::string_view("a\0b", 3)).has_value());
}

TEST_CASE("Headers that agree with the body pass the check", "[http][headers]") {
  const HttpHeaderTable headers = HttpBaseHeaders("tools/list");
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/list", HttpMetaParams(), nullptr));
}

TEST_CASE("A missing or different MCP-Protocol-Version is a header mismatch", "[http][headers]") {
  HttpHeaderTable headers = HttpBaseHeaders("tools/list");
  headers.values.erase("mcp-protocol-version");
  HttpRequireMismatch(
      CheckRequestHeaders(headers.Lookup(), "tools/list", HttpMetaParams(), nullptr),
      "MCP-Protocol-Version");
  headers.values["mcp-protocol-version"] = "2025-11-25";
  HttpRequireMismatch(
      CheckRequestHeaders(headers.Lookup(), "tools/list", HttpMetaParams(), nullptr),
      "MCP-Protocol-Version");
}

TEST_CASE("A missing Mcp-Method or one in another case is a header mismatch", "[http][headers]") {
  HttpHeaderTable headers = HttpBaseHeaders("TOOLS/LIST");
  HttpRequireMismatch(
      CheckRequestHeaders(headers.Lookup(), "tools/list", HttpMetaParams(), nullptr), "Mcp-Method");
  headers.values.erase("mcp-method");
  HttpRequireMismatch(
      CheckRequestHeaders(headers.Lookup(), "tools/list", HttpMetaParams(), nullptr), "Mcp-Method");
  headers.values["mcp-method"] = "tools/call";
  HttpRequireMismatch(
      CheckRequestHeaders(headers.Lookup(), "tools/list", HttpMetaParams(), nullptr), "Mcp-Method");
}

TEST_CASE("The mismatch error is -32020 with a message and data.header", "[http][headers]") {
  HttpHeaderTable headers = HttpBaseHeaders("tools/list");
  headers.values["mcp-method"] = "tools/call";
  const auto error = CheckRequestHeaders(headers.Lookup(), "tools/list", HttpMetaParams(), nullptr);
  REQUIRE(error.has_value());
  CHECK(error->code == -32020);
  CHECK(error->message.rfind("Header mismatch", 0) == 0);
  CHECK(error->data == Json{{"header", "Mcp-Method"}});
}

TEST_CASE("Mcp-Name must equal the name of tools/call and prompts/get", "[http][headers]") {
  for (const std::string method : {"tools/call", "prompts/get"}) {
    const Json params = HttpMetaParams(Json{{"name", "deploy"}});
    HttpHeaderTable headers = HttpBaseHeaders(method);
    HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), method, params, nullptr), "Mcp-Name");
    headers.values["mcp-name"] = "Deploy";
    HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), method, params, nullptr), "Mcp-Name");
    headers.values["mcp-name"] = "deploy";
    CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), method, params, nullptr));
    headers.values["mcp-name"] = "  deploy  ";
    CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), method, params, nullptr));
    headers.values["mcp-name"] = "=?base64?ZGVwbG95?=";
    CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), method, params, nullptr));
    headers.values["mcp-name"] = "=?base64?ZGVwbG95?=x";
    HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), method, params, nullptr), "Mcp-Name");
  }
}

TEST_CASE("Mcp-Name must equal the uri of resources/read", "[http][headers]") {
  const Json params = HttpMetaParams(Json{{"uri", "file:///tmp/a.txt"}});
  HttpHeaderTable headers = HttpBaseHeaders("resources/read");
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "resources/read", params, nullptr),
                      "Mcp-Name");
  headers.values["mcp-name"] = "file:///tmp/b.txt";
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "resources/read", params, nullptr),
                      "Mcp-Name");
  headers.values["mcp-name"] = "file:///tmp/a.txt";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "resources/read", params, nullptr));
}

TEST_CASE("Mcp-Name must equal the taskId of tasks/get and tasks/update and tasks/cancel",
          "[http][headers]") {
  for (const std::string method : {"tasks/get", "tasks/update", "tasks/cancel"}) {
    const Json params = HttpMetaParams(Json{{"taskId", "t-123"}});
    HttpHeaderTable headers = HttpBaseHeaders(method);
    HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), method, params, nullptr), "Mcp-Name");
    headers.values["mcp-name"] = "t-124";
    HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), method, params, nullptr), "Mcp-Name");
    headers.values["mcp-name"] = "t-123";
    CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), method, params, nullptr));
  }
}

TEST_CASE("Methods without a name need no Mcp-Name", "[http][headers]") {
  const HttpHeaderTable headers = HttpBaseHeaders("tools/list");
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/list",
                                  HttpMetaParams(Json{{"name", "ignored"}}), nullptr));
}

TEST_CASE("A string Mcp-Param header must equal its annotated argument", "[http][headers]") {
  const Json schema = HttpParamSchema();
  const Json params = HttpCallParams(Json{{"region", "Hello"}});
  HttpHeaderTable headers = HttpCallHeaders();
  headers.values["mcp-param-region"] = "Hello";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema));
  headers.values["mcp-param-region"] = "=?base64?SGVsbG8=?=";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema));
  headers.values["mcp-param-region"] = "hello";
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema),
                      "Mcp-Param-Region");
  headers.values["mcp-param-region"] = "=?base64?SGVsbG8?=";
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema),
                      "Mcp-Param-Region");
  headers.values["mcp-param-region"] = "=?base64?SGVs!!!bG8=?=";
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema),
                      "Mcp-Param-Region");
  // No full sentinel: a literal, which must equal the body.
  headers.values["mcp-param-region"] = "SGVsbG8=";
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema),
                      "Mcp-Param-Region");
  headers.values["mcp-param-region"] = "=?base64?SGVsbG8=";
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema),
                      "Mcp-Param-Region");
}

TEST_CASE("A literal that looks like Base64 is accepted when the body says the same",
          "[http][headers]") {
  const Json schema = HttpParamSchema();
  HttpHeaderTable headers = HttpCallHeaders();
  headers.values["mcp-param-region"] = "SGVsbG8=";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"region", "SGVsbG8="}}), &schema));
  headers.values["mcp-param-region"] = "=?base64?SGVsbG8=";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"region", "=?base64?SGVsbG8="}}), &schema));
}

TEST_CASE("A non-ASCII argument travels in the Base64 sentinel", "[http][headers]") {
  const Json schema = HttpParamSchema();
  HttpHeaderTable headers = HttpCallHeaders();
  headers.values["mcp-param-region"] = "=?base64?SGVsbG8sIOS4lueVjA==?=";
  CHECK_FALSE(CheckRequestHeaders(
      headers.Lookup(), "tools/call",
      HttpCallParams(Json{{"region", "Hello, \xE4\xB8\x96\xE7\x95\x8C"}}), &schema));
}

TEST_CASE("An integer Mcp-Param header is compared numerically", "[http][headers]") {
  const Json schema = HttpParamSchema();
  const Json params = HttpCallParams(Json{{"count", 42}});
  HttpHeaderTable headers = HttpCallHeaders();
  for (const std::string same : {"42", "42.0", " 42 "}) {
    headers.values["mcp-param-count"] = same;
    CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema));
  }
  for (const std::string other : {"43", "42.5", "42abc", "", "forty-two"}) {
    headers.values["mcp-param-count"] = other;
    HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call", params, &schema),
                        "Mcp-Param-Count");
  }
  headers.values["mcp-param-count"] = "42";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"count", 42.0}}), &schema));
  headers.values["mcp-param-count"] = "-7";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"count", -7}}), &schema));
}

TEST_CASE("A boolean Mcp-Param header reads true or false", "[http][headers]") {
  const Json schema = HttpParamSchema();
  HttpHeaderTable headers = HttpCallHeaders();
  headers.values["mcp-param-dry"] = "true";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"dry", true}}), &schema));
  headers.values["mcp-param-dry"] = "false";
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"dry", false}}), &schema));
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                          HttpCallParams(Json{{"dry", true}}), &schema),
                      "Mcp-Param-Dry");
  headers.values["mcp-param-dry"] = "1";
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                          HttpCallParams(Json{{"dry", true}}), &schema),
                      "Mcp-Param-Dry");
}

TEST_CASE("An annotated argument in the body without its header is refused", "[http][headers]") {
  const Json schema = HttpParamSchema();
  const HttpHeaderTable headers = HttpCallHeaders();
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                          HttpCallParams(Json{{"region", "eu"}}), &schema),
                      "Mcp-Param-Region");
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                          HttpCallParams(Json{{"count", 0}}), &schema),
                      "Mcp-Param-Count");
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                          HttpCallParams(Json{{"dry", false}}), &schema),
                      "Mcp-Param-Dry");
}

TEST_CASE("A null or absent annotated argument needs no header", "[http][headers]") {
  const Json schema = HttpParamSchema();
  const HttpHeaderTable headers = HttpCallHeaders();
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"region", nullptr}, {"count", nullptr}}),
                                  &schema));
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"note", "not annotated"}}), &schema));
  CHECK_FALSE(
      CheckRequestHeaders(headers.Lookup(), "tools/call", HttpCallParams(Json::object()), &schema));
}

TEST_CASE("Without a schema no Mcp-Param header is checked", "[http][headers]") {
  const HttpHeaderTable headers = HttpCallHeaders();
  CHECK_FALSE(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                  HttpCallParams(Json{{"region", "eu"}}), nullptr));
}

TEST_CASE("The standard headers are checked before the Mcp-Param ones", "[http][headers]") {
  const Json schema = HttpParamSchema();
  HttpHeaderTable headers = HttpCallHeaders();
  headers.values.erase("mcp-name");
  HttpRequireMismatch(CheckRequestHeaders(headers.Lookup(), "tools/call",
                                          HttpCallParams(Json{{"region", "eu"}}), &schema),
                      "Mcp-Name");
}

// The client side (keel wrap --upstream-url): what ModernRequestHeaders sends passes the check.

namespace {

HttpHeaderTable HttpTableOf(const std::vector<std::pair<std::string, std::string>>& headers) {
  HttpHeaderTable table;
  for (const auto& [name, value] : headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    table.values[lower] = value;
  }
  return table;
}

}  // namespace

TEST_CASE("Plain header values travel as they are and others in the Base64 sentinel",
          "[http][headers]") {
  CHECK(EncodeHeaderValue("tools/call") == "tools/call");
  CHECK(EncodeHeaderValue("SGVsbG8=") == "SGVsbG8=");
  CHECK(EncodeHeaderValue("Hello, \xE4\xB8\x96\xE7\x95\x8C") == "=?base64?SGVsbG8sIOS4lueVjA==?=");
  CHECK(EncodeHeaderValue(" padded ") == "=?base64?IHBhZGRlZCA=?=");
  CHECK(EncodeHeaderValue("a\tb") == "=?base64?YQli?=");
  CHECK(EncodeHeaderValue("=?base64?SGVsbG8=?=") == "=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?=");
  for (const char* value : {"x", " padded ", "Hello, \xE4\xB8\x96\xE7\x95\x8C", "=?base64?e?="}) {
    CHECK(DecodeHeaderValue(EncodeHeaderValue(value)) == std::optional<std::string>(value));
  }
}

TEST_CASE("The headers a modern client sends pass the server's check", "[http][headers]") {
  const Json schema = HttpParamSchema();
  const Json params =
      HttpCallParams(Json{{"region", " eu west "}, {"count", 3}, {"dry", false}, {"note", "n"}});
  const auto headers = ModernRequestHeaders("tools/call", params, &schema);
  const HttpHeaderTable table = HttpTableOf(headers);
  CHECK(table.values.at("mcp-protocol-version") == "2026-07-28");
  CHECK(table.values.at("mcp-method") == "tools/call");
  CHECK(table.values.at("mcp-name") == "deploy");
  CHECK(table.values.at("mcp-param-count") == "3");
  CHECK(table.values.at("mcp-param-dry") == "false");
  CHECK(table.values.count("mcp-param-note") == 0);
  CHECK_FALSE(CheckRequestHeaders(table.Lookup(), "tools/call", params, &schema));
  const Json read = HttpMetaParams(Json{{"uri", "file:///a b"}});
  CHECK_FALSE(CheckRequestHeaders(
      HttpTableOf(ModernRequestHeaders("resources/read", read, nullptr)).Lookup(), "resources/read",
      read, nullptr));
}

TEST_CASE("A null or absent annotated argument sends no Mcp-Param header", "[http][headers]") {
  const Json schema = HttpParamSchema();
  const Json params = HttpCallParams(Json{{"region", nullptr}});
  const HttpHeaderTable table = HttpTableOf(ModernRequestHeaders("tools/call", params, &schema));
  CHECK(table.values.count("mcp-param-region") == 0);
  CHECK(table.values.count("mcp-param-count") == 0);
  CHECK(HttpTableOf(ModernRequestHeaders("tools/list", Json::object(), nullptr))
            .values.count("mcp-protocol-version") == 0);
}

}  // namespace keel::http_headers_test
