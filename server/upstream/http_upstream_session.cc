#include "server/upstream/http_upstream_session.h"

#include <utility>

#include "protocol/http_headers.h"

namespace keel {
namespace {

std::string HeaderLine(const std::string& name, const std::string& value) {
  // libcurl drops "Name:" with nothing after it; "Name;" sends it empty.
  if (value.empty()) return name + ";";
  return name + ": " + value;
}

// The params._meta protocol version of a modern message; empty for any other.
std::string ModernVersion(const Json& message) {
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return "";
  const auto meta = params->find("_meta");
  if (meta == params->end() || !meta->is_object()) return "";
  const auto version = meta->find("io.modelcontextprotocol/protocolVersion");
  return version != meta->end() && version->is_string() ? version->get<std::string>() : "";
}

// Rule 2: MCP session ids are visible ASCII (0x21-0x7E); anything else (a CR or LF would
// split the header) is not kept.
bool VisibleAscii(std::string_view text) {
  for (char c : text) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return !text.empty();
}

bool HasHeaderProperty(const Json& schema) {
  const auto props = schema.is_object() ? schema.find("properties") : schema.end();
  if (!schema.is_object() || props == schema.end() || !props->is_object()) return false;
  for (const auto& [name, spec] : props->items()) {
    if (spec.is_object() && spec.contains("x-mcp-header")) return true;
  }
  return false;
}

}  // namespace

HttpUpstreamSession::HttpUpstreamSession(std::vector<std::string> extra_headers)
    : extra_headers_(std::move(extra_headers)) {}

std::vector<std::string> HttpUpstreamSession::Common() const {
  std::vector<std::string> headers = extra_headers_;
  if (!session_id_.empty()) headers.push_back(HeaderLine("Mcp-Session-Id", session_id_));
  return headers;
}

std::vector<std::string> HttpUpstreamSession::PostHeaders(const Json& message) {
  const std::string method = message.value("method", Json()).is_string()
                                 ? message["method"].get<std::string>()
                                 : std::string();
  static const Json kNoParams;
  const auto found = message.find("params");
  const Json& params = found != message.end() ? *found : kNoParams;
  std::vector<std::string> headers = Common();
  headers.emplace_back("Content-Type: application/json");
  headers.emplace_back("Accept: application/json, text/event-stream");
  // A body over 1 KiB would make libcurl wait for "100 Continue" first: not needed here.
  headers.emplace_back("Expect;");
  if (std::string modern = ModernVersion(message); !modern.empty() && !method.empty()) {
    version_ = modern;
    modern_ = true;
    const Json* schema = nullptr;
    if (method == "tools/call" && params.is_object() && params.value("name", Json()).is_string()) {
      const auto it = header_tools_.find(params["name"].get<std::string>());
      if (it != header_tools_.end()) schema = &it->second;
    }
    for (const auto& [name, value] : ModernRequestHeaders(method, params, schema)) {
      headers.push_back(HeaderLine(name, value));
    }
    return headers;
  }
  if (method == "initialize" && params.is_object() &&
      params.value("protocolVersion", Json()).is_string()) {
    version_ = params["protocolVersion"].get<std::string>();
    modern_ = false;
  }
  if (!version_.empty()) headers.push_back(HeaderLine("MCP-Protocol-Version", version_));
  return headers;
}

std::vector<std::string> HttpUpstreamSession::StreamHeaders() const {
  std::vector<std::string> headers = Common();
  headers.emplace_back("Accept: text/event-stream");
  if (!version_.empty()) headers.push_back(HeaderLine("MCP-Protocol-Version", version_));
  return headers;
}

std::vector<std::string> HttpUpstreamSession::DeleteHeaders() const {
  std::vector<std::string> headers = Common();
  if (!version_.empty()) headers.push_back(HeaderLine("MCP-Protocol-Version", version_));
  return headers;
}

void HttpUpstreamSession::OnAnswer(const std::string& method, const Json& response,
                                   std::string_view session_id) {
  const Json result = response.value("result", Json());
  if (!result.is_object()) return;
  if (method == "initialize") {
    if (result.value("protocolVersion", Json()).is_string()) {
      version_ = result["protocolVersion"].get<std::string>();
    }
    if (VisibleAscii(session_id)) session_id_ = std::string(session_id);
    return;
  }
  if (method != "tools/list") return;
  const Json tools = result.value("tools", Json());
  if (!tools.is_array()) return;
  for (const Json& tool : tools) {
    if (!tool.is_object() || !tool.value("name", Json()).is_string()) continue;
    const std::string name = tool["name"].get<std::string>();
    const Json schema = tool.value("inputSchema", Json());
    if (!HasHeaderProperty(schema)) {
      header_tools_.erase(name);
    } else if (header_tools_.size() < kMaxHeaderTools || header_tools_.count(name) != 0) {
      header_tools_[name] = schema;
    }
  }
}

}  // namespace keel
