// Catalog overlay (`keel wrap --catalog FILE`; docs/catalog.md, "Overlay for keel wrap"): how
// a tool of the wrapped upstream server, as its tools/list describes it, becomes the tool keel
// serves, and what the overlay entry of the same name (LoadCatalog, CatalogMode::kOverlay)
// changes. Pure functions; no I/O, no shared state.
//
// The upstream's annotations are hints; the overlay is the operator's word and wins:
//  1. a tool's effect class is its overlay entry's `effect` when the entry gives one, else
//     EffectFromAnnotations of what the upstream lists;
//  2. every other field the entry gives replaces the upstream's; what it omits stays the
//     upstream's (OverlaySpec);
//  3. what LoadCatalog could not check of an entry without inputSchema or effect (catalog.h
//     invariants 3 and 4) is checked against the upstream tool (CheckOverlayAgainstUpstream);
//     a tool with such problems must not be served under that entry.
#pragma once

#include <string>
#include <vector>

#include "server/catalog/catalog.h"
#include "server/catalog/tool.h"

namespace keel {

// MCP ToolAnnotations to an effect class: readOnlyHint true -> read; else idempotentHint
// true -> idempotent_write; else (absent, null, not booleans) unsafe_write, MCP's defaults
// for a tool that says nothing. destructiveHint does not change the class: a write that
// only adds still must not run twice.
EffectClass EffectFromAnnotations(const Json& annotations);

// The problems of overlay `entry` against the upstream tool it names (its inputSchema and
// its effect class as the caller derived it), each naming the tool and the entry's field:
//   tools (create_entities).idempotency.keyComponents[0]: "id" is not a property of ...
// Checked against the entry's own inputSchema and effect when it gives them, else the
// upstream's: key components name input properties; key components only on writes; an
// idempotent_write the entry declares has key components or an idempotencyKey property.
// (An idempotent_write that only the annotations claim is not held to the last rule: all its
// arguments then make its intent.) Empty: the entry may be applied.
std::vector<std::string> CheckOverlayAgainstUpstream(const CatalogEntry& entry,
                                                     const Json& upstream_input_schema,
                                                     EffectClass upstream_effect);

// The spec keel serves for an upstream tool: `upstream` (its name, title, description,
// schemas, annotations, task support and effect as the caller built them from tools/list)
// with every field `overlay` gives replacing the upstream's: title, description,
// inputSchema, outputSchema, effect (and then the effect hints of the annotations, as
// Annotations(effect) states them; other annotations stay), backend, timeouts, retry, key
// components, approval (adding approval_id to the input schema, as SpecFor does), task
// support, result TTL, upstream_takes_key. A null `overlay` (no entry of that name)
// returns `upstream` unchanged. The input schema is what clients see and calls are checked
// against; which arguments go upstream is the forwarder's business, by the upstream's own
// schema (approval_id and keel's idempotencyKey stay keel's unless it declares them).
ToolSpec OverlaySpec(const CatalogEntry* overlay, ToolSpec upstream);

struct OverlaidTools {
  std::vector<ToolSpec> specs;         // the upstream's tools in its order, each overlaid
  std::vector<std::string> problems;   // CheckOverlayAgainstUpstream's; those tools are left out
  std::vector<std::string> unmatched;  // names of overlay entries no upstream tool has
};

// OverlaySpec for each upstream tool, with the entry of its name in `overlay`, if any.
// An entry that names no upstream tool is reported in `unmatched` (a typo, or a tool the
// upstream has not listed yet: the caller decides whether that stops it).
OverlaidTools OverlayTools(const Catalog& overlay, std::vector<ToolSpec> upstream);

}  // namespace keel
