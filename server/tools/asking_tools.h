// Test tools that ask the client for input (behind --test-tools; ToolSpec::asks_for_input,
// server/input/input_round.h). Each asks before it does anything, and reads its answers with
// ToolContext::InputResponse; the era of the request decides how the question travels.
//   ask_name {}         asks user_name (elicitation/create, form: {name}); accepted, answers
//                       "Hello, <name>!"; declined or cancelled, isError input_declined
//   ask_two_rounds {}   asks step1 ({name}), then step2 ({color}), each round with its own
//                       tool state; answers "<name> likes <color> (<the last tool state>)"
//   ask_everything {}   asks user_name (elicitation), capital (sampling/createMessage) and
//                       client_roots (roots/list) at once, only those the client can
//                       answer (all three when it can answer none: -32021); answers what
//                       each said, "(not asked)" for the others
// Stateless between calls (the answers come with each call): safe to call concurrently.
#pragma once

#include <memory>
#include <vector>

#include "server/catalog/tool.h"

namespace keel {

void AddAskingTools(std::vector<std::unique_ptr<Tool>>& tools);

}  // namespace keel
