// Input questions: the input requests ({method, params}) a tool that asks for input hands to
// AskForInput (protocol/tool_result.h), and readers of the client's answers (an ElicitResult,
// CreateMessageResult or ListRootsResult) as ToolContext::InputResponse returns them. Shared
// by the asking test tools and the conformance fixtures, so every tool asks and reads alike.
// Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// elicitation/create in form mode: `message` and the form's `requested_schema`.
Json ElicitForm(std::string_view message, Json requested_schema);
// elicitation/create with a form of one required string property.
Json ElicitString(std::string_view message, const std::string& property);
// sampling/createMessage with one user text message.
Json SamplingQuestion(std::string_view text, int max_tokens);
// roots/list.
Json RootsQuestion();

// The accepted answer's string `property`, or nullopt with `refused` saying why: the user did
// not accept (the action, or "no action"), or accepted without a string `property` (then
// `refused` begins with "accepted").
std::optional<std::string> AcceptedString(const Json& answer, const std::string& property,
                                          std::string* refused);
// The text of a CreateMessageResult's content (a text block, or the first text block of an
// array); empty when it has none.
std::string SampledText(const Json& answer);
// A ListRootsResult's roots as "uri (name), uri" in order; "no roots" when it lists none.
std::string RootsText(const Json& answer);
// An ElicitResult as "action=<action>, content=<compact JSON>" (content {} when absent).
std::string ElicitationText(const Json& answer);

}  // namespace keel
