// Conformance fixtures the official suite's 2025-11-25 scenarios call to see keel ask the
// client mid-call (behind --conformance-fixtures; reference/mcp-2026-07-28.md §8.3): on a
// legacy session keel sends each question as a server-to-client request on the call's stream
// and runs the tool again with the answer (server/input/client_requests.h); on a 2026-07-28
// request the same question goes out as an InputRequiredResult (MRTR), so every fixture
// answers either era.
//   test_sampling {prompt}               sampling/createMessage {messages: [the prompt as one
//                                        user text message], maxTokens: 100};
//                                        "LLM response: <the sampled text>"
//   test_elicitation {message}           elicitation/create, the form {username ("User's
//                                        response"), email ("User's email address")}, both
//                                        required; "User response: action=..., content=..."
//   test_elicitation_sep1034_defaults    a form whose every primitive has a default (SEP-1034):
//                                        name "John Doe", age 30, score 95.5, status
//                                        active|inactive|pending ("active"), verified true
//   test_elicitation_sep1330_enums       a form with the five enum shapes of SEP-1330:
//                                        untitledSingle, titledSingle (oneOf const/title),
//                                        legacyEnum (enumNames), untitledMulti (items enum),
//                                        titledMulti (items anyOf const/title)
// The last two answer "Elicitation completed: action=..., content=...". The forms are schemas
// keel sends, never validates. A client lacking the capability gets what keel answers for
// any question it cannot take (legacy: isError input_unavailable; modern: -32021).
// Stateless: safe to call concurrently.
#pragma once

#include <memory>
#include <vector>

#include "server/catalog/tool.h"

namespace keel {

std::vector<std::unique_ptr<Tool>> MakeConformanceLegacyTools();

}  // namespace keel
