// The official MCP conformance suite's resources, resource templates and prompts (behind
// --conformance-fixtures; reference/mcp-2026-07-28.md §8.3), written as a catalog and loaded
// by LoadCatalog like any user's, plus the one prompt a catalog cannot express:
//   test://static-text, test://static-binary (a 1x1 PNG), test://watched-resource
//   test://template/{id}/data                 JSON naming the id
//   test_simple_prompt, test_prompt_with_arguments (arg1 completes from a list),
//   test_prompt_with_embedded_resource, test_prompt_with_image
//   test_input_required_result_prompt         asks user_context (elicitation) first (MRTR)
// Nothing else exists: test://nonexistent-resource-for-conformance-testing is not found.
#pragma once

#include "server/catalog/catalog.h"
#include "server/surface/surface.h"

namespace keel {

// The fixtures' catalog sections, appended to `catalog`'s (after its own entries).
void AddConformanceSurfaceEntries(Catalog& catalog);
// The prompts made in code, added to `surface` (after the catalog's).
void AddConformancePrompts(Surface& surface);

}  // namespace keel
