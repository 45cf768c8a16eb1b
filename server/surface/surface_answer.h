// SurfaceAnswer: how the answer of a resources/read, prompts/get or completion/complete is
// made from the result of the internal call that computed it. keel serves those three
// methods as calls of internal tools (the readers of resource_readers.h, the prompts of
// prompt_set.h, completion commands): they run through the call pipeline like any tools/call
// (admission, worker pool, timeouts, cancellation, the breaker, the trace), and their
// CallToolResult becomes the method's result here. Pure functions.
//
// A reader answers one of:
//  1. structuredContent {contents: [...]}, {messages: [...]} or, for a completion,
//     {completion: {...}}: the method's result as it is (the other members of
//     structuredContent come along) — how keel wrap forwards an upstream's answer;
//  2. a plain result (a command's output): its text blocks, joined, become one content
//     item of the read URI and MIME type, or the completion's values, one per non-empty
//     line, at most 100 (completion.h);
//  3. isError: structuredContent.error.type "resource_not_found" is the era's not-found
//     error (-32602 with data.uri in 2026-07-28, -32002 before), "invalid_params" is
//     -32602 with the result's text, anything else (a command that failed, a timeout, a
//     file changed while read) is -32603 with the result's text.
//  4. A 2026-07-28 read carries the caching hints ttlMs 0 and cacheScope "public": a file or
//     a command's output may change at any time, and keel serves everyone the same.
#pragma once

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "protocol/mcp_era.h"
#include "protocol/mcp_error.h"
#include "server/call/call_identity.h"

namespace keel {

using Json = nlohmann::json;

// The method's result, or the error that answers it. `uri` and `mime_type`: what was read
// (rule 2; kResource only).
std::variant<Json, RpcError> SurfaceAnswer(const WireForm& wire, AnswerAs as, const Json& result,
                                           const std::string& uri, const std::string& mime_type);

// The error type a reader gives when its URI names nothing (rule 3).
inline constexpr const char* kResourceNotFoundType = "resource_not_found";
Json ResourceNotFoundResult(const std::string& uri);

}  // namespace keel
