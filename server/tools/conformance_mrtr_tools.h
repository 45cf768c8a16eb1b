// Conformance fixtures for multi round-trip requests (MCP 2026-07-28 MRTR, behind
// --conformance-fixtures; reference/mcp-2026-07-28.md §5 and §8.3): the tools the official
// suite's input-required-result-* scenarios call. Each asks through AskForInput
// (protocol/tool_result.h), so keel seals every round's requestState (HMAC, input_round.h),
// re-reads the earlier answers from it, refuses a tampered one (-32602), and answers -32021
// for a question the request's clientCapabilities cannot take. An answer that arrives without
// a requestState counts as well (the answer alone suffices).
//   test_input_required_result_elicitation    user_name: elicitation "What is your name?"
//                                             ({name}); "Hello, <name>!"
//   test_input_required_result_sampling       capital_question: sampling "What is the capital
//                                             of France?" (maxTokens 100); the sampled text
//   test_input_required_result_list_roots     client_roots: roots/list; the roots it got
//   test_input_required_result_request_state  confirm: elicitation "Please confirm" ({ok:
//                                             boolean}) with the tool state
//                                             "awaiting-confirmation"; "state-ok" when the
//                                             state came back
//   test_input_required_result_multiple_inputs  user_name (elicitation), greeting (sampling
//                                             "Generate a greeting", maxTokens 50) and
//                                             client_roots at once; complete when all three
//                                             are answered (what is missing is asked again)
//   test_input_required_result_multi_round    step1 ({name}), then step2 ({color}): each
//                                             round its own requestState; "<name> likes
//                                             <color>"
//   test_input_required_result_tampered_state confirm ({ok}); a retry whose requestState is
//                                             not keel's is -32602 before the tool runs
//   test_input_required_result_capabilities   user_name (elicitation), capital_question
//                                             (sampling), client_roots: asks only those the
//                                             request's clientCapabilities declare (all, and
//                                             so -32021, when it declares none)
// An elicitation answer accepted without the asked property (e.g. {"name": 12345}) is asked
// again (a new input_required); a declined or cancelled one ends with isError
// (input_declined). An answer that is not an object is -32602 (input_round.h). Unknown answer
// keys are ignored. Stateless: safe to call concurrently.
#pragma once

#include <memory>
#include <vector>

#include "server/catalog/tool.h"

namespace keel {

std::vector<std::unique_ptr<Tool>> MakeConformanceMrtrTools();

}  // namespace keel
