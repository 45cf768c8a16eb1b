// Conformance fixtures (behind --conformance-fixtures): the tools the official MCP conformance
// suite (@modelcontextprotocol/conformance, its `server` scenarios) calls, each answering what
// its scenario describes (scripts/conformance_suite runs the suite against keel):
//   test_simple_text             one text block
//   test_image_content           an image block: a 1x1 red PNG, image/png
//   test_audio_content           an audio block: 8 samples of 8 kHz silence, audio/wav
//   test_embedded_resource       an embedded text resource, test://embedded-resource
//   test_multiple_content_types  a text block, the image, an embedded JSON resource
//   test_tool_with_logging       logs "Tool execution started", "Tool processing data",
//                                "Tool execution completed" at info, step_delay apart
//   test_error_handling          isError: true with one text block
//   test_tool_with_progress      progress 0, 50 and 100 of 100, step_delay apart
//   json_schema_2020_12_tool     says which arguments it got; its inputSchema (the suite's,
//                                verbatim) uses $schema, $defs, $anchor, $ref, allOf, anyOf
//                                and if/then/else (SEP-1613), which tools/list must keep
// All are reads; only the last takes arguments. A cancel ends a wait at once and stops the
// tool at its checkpoint. Stateless: safe to call concurrently.
#pragma once

#include <memory>
#include <vector>

#include "server/catalog/tool.h"
#include "server/runtime/clock.h"

namespace keel {

// `step_delay`: the suite's "~50 ms" between log messages and progress steps (tests pass 0).
std::vector<std::unique_ptr<Tool>> MakeConformanceTools(Millis step_delay = Millis(50));

}  // namespace keel
