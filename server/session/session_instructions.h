// The instructions initialize and server/discover give the model: what it needs to use what
// this keel serves, and nothing about what it does not serve.
//  - keel wrap: the wrapped server's own instructions first (its tools are what the model
//    uses), then keel's;
//  - the catalog's server.instructions, when set, are keel's part as written;
//  - otherwise keel's part is generated from the tools served: how failures, timeouts and
//    cancellation come back (always); idempotency keys only when a write tool is served, and
//    ledger_lookup only when it is; tasks only when a tool may run as one and the era (a
//    legacy one, or a modern one that declared the tasks extension) has them.
// Pure: reads the registry (loop thread).
#pragma once

#include <optional>
#include <string>

#include "protocol/mcp_era.h"
#include "server/catalog/tool_registry.h"

namespace keel {

std::string InstructionsFor(const WireForm& wire, const std::string& upstream,
                            const std::optional<std::string>& configured,
                            const ToolRegistry& tools);

}  // namespace keel
