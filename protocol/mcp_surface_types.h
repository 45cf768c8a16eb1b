// Typed requests and results of MCP's server surface besides tools: resources
// (resources/list, resources/templates/list, resources/read, and on legacy sessions
// resources/subscribe and resources/unsubscribe), prompts (prompts/list, prompts/get) and
// completion (completion/complete). The shapes 2025-11-25 and 2026-07-28 share; what differs
// by era is mcp_era.h's (resultType, caching hints, the not-found code). Pure functions;
// reentrant; never throw.
//
// Decoding follows mcp_types.h's rules: each Decode* returns the typed request or the
// JSON-RPC error that answers it (-32602, naming the field). Cursors are opaque
// (cursor.h); an empty cursor is the first page (MCP pagination: any string is a cursor the
// server minted or an error, and "" is the client's "from the start").
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/mcp_error.h"
#include "protocol/mcp_results.h"

namespace keel {

using Json = nlohmann::json;

// resources/list, resources/templates/list and prompts/list: a page.
struct ListPageRequest {
  size_t offset = 0;  // the decoded cursor
  bool operator==(const ListPageRequest&) const = default;
};
struct ListResourcesRequest : ListPageRequest {};
struct ListResourceTemplatesRequest : ListPageRequest {};
struct ListPromptsRequest : ListPageRequest {};

// MCP 2026-07-28 multi round-trip members any request may carry (mcp_types.h's
// CallToolRequest has the same two): empty in a legacy era.
struct InputRetry {
  Json input_responses;  // an object, or null when absent
  std::optional<std::string> request_state;
  bool operator==(const InputRetry&) const = default;
};

struct ReadResourceRequest {
  std::string uri;  // non-empty
  InputRetry retry;
  bool operator==(const ReadResourceRequest&) const = default;
};

// resources/subscribe and resources/unsubscribe (legacy sessions only).
struct SubscribeRequest {
  std::string uri;
  bool subscribe = true;  // false: unsubscribe
  bool operator==(const SubscribeRequest&) const = default;
};

struct GetPromptRequest {
  std::string name;                              // non-empty
  std::map<std::string, std::string> arguments;  // MCP: string values only
  InputRetry retry;
  bool operator==(const GetPromptRequest&) const = default;
};

struct CompleteRequest {
  enum class Ref { kPrompt, kResource } ref = Ref::kPrompt;
  std::string ref_name;  // the prompt's name, or the resource template's uriTemplate/URI
  std::string argument;  // argument.name
  std::string value;     // argument.value (what the user typed so far)
  // context.arguments: the values already chosen for the other arguments.
  std::map<std::string, std::string> context;
  bool operator==(const CompleteRequest&) const = default;
};

// Results: the items are built by the server's resource and prompt sets as MCP objects.
struct ListItemsResult {
  std::vector<Json> items;
  std::optional<size_t> next_offset;  // more follow: becomes nextCursor
  std::optional<CacheHints> cache;    // set in an era with caching hints (mcp_era.h)
};

struct CompleteResult {
  std::vector<std::string> values;  // at most 100
  std::optional<size_t> total;
  bool has_more = false;
};

Decoded<ListResourcesRequest> DecodeListResourcesRequest(const Json& params);
Decoded<ListResourceTemplatesRequest> DecodeListResourceTemplatesRequest(const Json& params);
Decoded<ListPromptsRequest> DecodeListPromptsRequest(const Json& params);
Decoded<ReadResourceRequest> DecodeReadResourceRequest(const Json& params);
Decoded<SubscribeRequest> DecodeSubscribeRequest(const Json& params, bool subscribe);
Decoded<GetPromptRequest> DecodeGetPromptRequest(const Json& params);
Decoded<CompleteRequest> DecodeCompleteRequest(const Json& params);

// The wire form of a list page: {<member>: items, nextCursor?, ttlMs?, cacheScope?}.
// `list` names the cursor's list ("resources", "resource-templates", "prompts").
Json ListPageToWire(const ListItemsResult& result, const char* member, const char* list);
Json ToWire(const CompleteResult& result);

// The cursor lists the decoders above accept.
inline constexpr const char* kResourcesCursor = "resources";
inline constexpr const char* kTemplatesCursor = "resource-templates";
inline constexpr const char* kPromptsCursor = "prompts";

}  // namespace keel
