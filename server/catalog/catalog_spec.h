// From a catalog entry to what MCP clients see: the ToolSpec keel registers and the tool's
// annotations. Pure functions; no I/O, no shared state.
//
// Annotations are derived from the effect class, never written by hand, so they cannot
// contradict it. MCP 2025-11-25 (ToolAnnotations): readOnlyHint defaults to false,
// destructiveHint to true and idempotentHint to false, and the last two only mean something
// when readOnlyHint is false. keel states all three explicitly, consistent for reads too, so
// a client that ignores that rule (or the defaults) still reads the truth:
//
//   effect            readOnlyHint  destructiveHint  idempotentHint
//   read              true          false            true
//   expensive_read    true          false            true
//   idempotent_write  false         true             true
//   unsafe_write      false         true             false
//
// destructiveHint is true for both writes: the effect class says whether a repeat redoes the
// effect, not whether the update is only additive, and false would be a promise the catalog
// cannot back. openWorldHint is not derived from the effect and is left out (MCP default:
// true); title is the tool's own `title`.
#pragma once

#include "server/catalog/catalog.h"
#include "server/catalog/tool.h"

namespace keel {

Json Annotations(EffectClass effect);

// Everything the catalog says about the tool, annotations derived from the effect. A tool
// with approval: required gets an optional `approval_id` string property in its input schema
// (unless it declares one): its absence is answered with approval_required, not with a schema
// error, so the client learns what to ask for.
ToolSpec SpecFor(const CatalogEntry& entry);

// `input_schema` (an object schema) with the optional `approval_id` string property that a
// tool with approval: required is called with, unless it declares one already.
Json WithApprovalId(Json input_schema);

}  // namespace keel
