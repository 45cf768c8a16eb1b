// HttpUpstreamSession: what keel's connection to a Streamable HTTP upstream (`keel wrap
// --upstream-url`) learns from the messages it carries, and the headers each of its HTTP
// requests gets. Pure: no I/O; one owner (HttpUpstream's thread).
//
//  1. The protocol version, for MCP-Protocol-Version: an initialize request's
//     params.protocolVersion, then its answer's protocolVersion (the one negotiated, 2025-11-25
//     and older); a modern message's params._meta["io.modelcontextprotocol/protocolVersion"].
//  2. The legacy session: the Mcp-Session-Id header of initialize's successful answer. Every
//     later POST, the GET stream and the closing DELETE carry it (an id that is not visible
//     ASCII, as MCP requires, is not kept: it could split a header). A modern upstream mints
//     none (the 2026-07-28 transport is stateless).
//  3. A message carrying the modern envelope gets ModernRequestHeaders'
//     (protocol/http_headers.h): MCP-Protocol-Version, Mcp-Method, Mcp-Name and, for
//     tools/call, Mcp-Param-{Name} from the called tool's input schema as the upstream's
//     tools/list answers gave it (properties marked x-mcp-header; kept for every tool that
//     has one, at most kMaxHeaderTools).
//  4. Every request: the extra headers keel was given (--upstream-header); every POST:
//     Content-Type: application/json and Accept: application/json, text/event-stream.
// Headers are "Name: value" lines as libcurl takes them ("Name;" for an empty value).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// Rule 3: a bound on the schemas kept; an upstream listing more tools with x-mcp-header
// than this sends their calls without Mcp-Param headers (and the upstream refuses them).
inline constexpr size_t kMaxHeaderTools = 4096;

class HttpUpstreamSession {
 public:
  explicit HttpUpstreamSession(std::vector<std::string> extra_headers);

  // The headers of the POST that carries `message`; learns rule 1 from it.
  std::vector<std::string> PostHeaders(const Json& message);
  std::vector<std::string> StreamHeaders() const;  // the legacy GET stream
  std::vector<std::string> DeleteHeaders() const;  // the legacy session's end
  // An answer to keel's request `method` came, with the response's Mcp-Session-Id header
  // (empty: none): rules 1-3 learn from initialize and tools/list.
  void OnAnswer(const std::string& method, const Json& response, std::string_view session_id);

  const std::string& version() const { return version_; }
  const std::string& session_id() const { return session_id_; }
  // The messages carry the 2026-07-28 envelope (learned from the last one sent).
  bool modern() const { return modern_; }

 private:
  std::vector<std::string> Common() const;

  const std::vector<std::string> extra_headers_;
  std::string version_;
  std::string session_id_;
  bool modern_ = false;
  std::map<std::string, Json> header_tools_;  // rule 3: tool name -> input schema
};

}  // namespace keel
