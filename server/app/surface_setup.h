// SurfaceSetup: the resources, prompts and completions a serving keel offers (server/surface/)
// from its catalog — plus, with --conformance-fixtures, the official conformance suite's —
// and the same again when SIGHUP reloads the catalog file.
//
// Thread: the main thread at start-up; ReloadSurface on the loop thread (it reads one file).
#pragma once

#include <memory>
#include <string>

#include "server/app/cli_options.h"
#include "server/catalog/catalog.h"
#include "server/durable/ledger_service.h"
#include "server/surface/surface.h"

namespace keel {

// Null when nothing would be served (no resources, templates or prompts).
std::shared_ptr<Surface> BuildSurface(const CliOptions& flags, Catalog catalog,
                                      std::shared_ptr<LedgerService> ledger);

// After SIGHUP: the surface of the --catalog file as it is now, or null to keep the one in
// force (no --catalog, or a file that does not load: every problem is logged). The tools
// stay those of start-up (a tool is bound to its implementation once).
std::shared_ptr<Surface> ReloadSurface(const CliOptions& flags,
                                       std::shared_ptr<LedgerService> ledger);

}  // namespace keel
