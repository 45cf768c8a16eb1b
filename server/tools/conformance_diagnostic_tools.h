// Conformance fixtures the official suite's server-stateless and HTTP header scenarios call
// (behind --conformance-fixtures; reference/mcp-2026-07-28.md §8.3, §8.4):
//   test_missing_capability     needs the client's sampling: asks sampling/createMessage
//                               "Say hello" (maxTokens 20); a request whose clientCapabilities
//                               lack sampling gets -32021 with data.requiredCapabilities
//                               {"sampling": {}} (HTTP 400), nothing run; answered, the text
//   test_streaming_elicitation  asks user_name (elicitation, {name}) as an InputRequiredResult,
//                               never as a request on the response stream; "Hello, <name>!"
//   test_logging_tool           sends one info log message and answers; the message goes out
//                               only when the request carries io.modelcontextprotocol/logLevel
//                               (or a legacy session's level lets it through)
//   test_trigger_tool_change    fires `tools_changed` (list_changed_hook.h): every open
//                               subscriptions/listen stream that asked for toolsListChanged
//                               hears notifications/tools/list_changed; the tool list itself
//                               does not change
//   test_trigger_prompt_change  the same with `prompts_changed`: notifications/prompts/
//                               list_changed to streams that asked for promptsListChanged
//   test_custom_header {region} a string argument annotated "x-mcp-header": "Region": over
//                               HTTP the request must carry Mcp-Param-Region equal to it
//                               (protocol/http_headers.h); answers "Region: <region>"
// The first two ask for input (ToolSpec::asks_for_input). Stateless apart from the hook:
// safe to call concurrently.
#pragma once

#include <memory>
#include <vector>

#include "server/catalog/tool.h"
#include "server/tools/list_changed_hook.h"

namespace keel {

std::vector<std::unique_ptr<Tool>> MakeConformanceDiagnosticTools(
    std::shared_ptr<ListChangedHook> tools_changed,
    std::shared_ptr<ListChangedHook> prompts_changed = nullptr);

}  // namespace keel
