// The MCP 2026-07-28 request headers over Streamable HTTP (reference/mcp-2026-07-28.md §3.3):
// what a modern POST must say in its headers about its own body, and the check that it
// does, and (the client side, for `keel wrap --upstream-url`) the headers a modern POST
// sends. Pure functions; reentrant; never throw.
//
// Rules (each failure is -32020 "Header mismatch", HTTP 400, with data.header naming it):
//  1. MCP-Protocol-Version equals the body's _meta protocolVersion; Mcp-Method equals the
//     body's method (values are case-sensitive, names are not: the caller looks them up
//     lower-cased).
//  2. Mcp-Name equals params.name (tools/call, prompts/get), params.uri (resources/read) or
//     params.taskId (tasks/get, tasks/update, tasks/cancel); other methods need none.
//  3. Mcp-Param-{Name} for each argument of a tools/call whose input-schema property carries
//     "x-mcp-header": "{Name}" and whose value is present and not null: the header must be
//     there and equal the value (strings as they are, integers numerically, booleans as
//     true/false). A null or absent argument needs no header.
//  4. Values are trimmed of spaces and tabs at both ends; a value of the exact form
//     `=?base64?{data}?=` is the Base64 of the UTF-8 value (padding required, standard
//     alphabet); invalid Base64 there is a mismatch. Anything else (no full sentinel) is a
//     literal. Control characters in a value are a mismatch.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/mcp_error.h"

namespace keel {

using Json = nlohmann::json;

// A header by lower-case name; nullopt when absent.
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view)>;

// Rule 4: the value a header carries, or nullopt when its encoding is invalid.
std::optional<std::string> DecodeHeaderValue(std::string_view raw);

// Standard Base64 with padding; nullopt when `text` is not exactly that.
std::optional<std::string> DecodeBase64(std::string_view text);

// Rules 1-3 for a modern request (`method`, `params`). `input_schema` is the called tool's
// (tools/call only; null when unknown or for other methods). nullopt when every header
// agrees.
std::optional<RpcError> CheckRequestHeaders(const HeaderLookup& header, std::string_view method,
                                            const Json& params, const Json* input_schema);

// Rule 4 backwards: `value` as it travels in a header, in the Base64 sentinel when it has
// to (a byte outside printable ASCII, a space or tab at either end, or a value that reads
// as a sentinel itself), else as it is.
std::string EncodeHeaderValue(std::string_view value);

// The headers (name, value) a client sends with the modern request `method`, `params`, so
// that CheckRequestHeaders passes: MCP-Protocol-Version (from params._meta; none when
// absent), Mcp-Method, Mcp-Name (rule 2) and, for tools/call with the tool's
// `input_schema` (null: unknown), Mcp-Param-{Name} (rule 3). Values encoded by
// EncodeHeaderValue.
std::vector<std::pair<std::string, std::string>> ModernRequestHeaders(std::string_view method,
                                                                      const Json& params,
                                                                      const Json* input_schema);

}  // namespace keel
