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

}  // namespace keel
