// The MCP CallToolResult shapes keel builds and reads: a text result, a structured one, an
// error result with structuredContent.error, and reading that error back. Pure functions.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// A CallToolResult with one text block.
Json TextResult(std::string_view text);
// A CallToolResult with one text block and `structured` as its structuredContent.
Json StructuredResult(std::string_view text, Json structured);
// A result's structuredContent.error when it is an object (the convention of ErrorResult and
// failure_classify.h), else null.
const Json* StructuredErrorOf(const Json& result);
// A CallToolResult with isError: true, one text block and, when given,
// structuredContent {"error": error}.
Json ErrorResult(std::string_view text, const Json& error = Json());

// A tool's question for the client (MCP 2026-07-28 multi round-trip requests): the answer a
// tool of ToolSpec::asks_for_input gives when it needs input to go on. `input_requests` maps
// keys the tool chooses to {method, params} (elicitation/create, sampling/createMessage,
// roots/list); `tool_state`, when not empty, comes back to the tool with the answers
// (ToolContext::tool_state). keel, not the tool, writes it on the wire
// (server/input/input_round.h).
Json AskForInput(Json input_requests, std::string_view tool_state = std::string_view());
// `result` is such a question: resultType "input_required".
bool IsInputRequired(const Json& result);

}  // namespace keel
