// ToolSet: the tools a serving keel offers, built once at start-up. keel's implementations
// (echo, the ledger tools, the simulated deployment backend with its --fault plan, and with
// --test-tools / --conformance-fixtures the test tools and conformance fixtures: the core
// ones, then those for MRTR, the server-stateless diagnostics, the legacy questions and the
// tasks extension, test_simple_text first of all) are bound to
// the catalog's entries (catalog_binding.h), entries with `run` become command-backed tools,
// and the test tools and fixtures the catalog does not describe are served after its own.
//
// Thread: built on the main thread; the registry is then the loop thread's (read-only).
// Invariant: without exit_code, every tool is registered, in tools/list order. With it
// (78 a bad --fault or catalog binding, 70 a tool the registry refuses), the reason has been
// written (every binding problem as a "keel: catalog: ..." line).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "server/app/cli_options.h"
#include "server/catalog/catalog.h"
#include "server/catalog/tool_registry.h"
#include "server/durable/ledger_service.h"
#include "server/tools/command_tool.h"
#include "server/tools/list_changed_hook.h"

namespace keel {

struct ToolSet {
  ToolRegistry registry;
  // The command-backed tools in the registry, for the start-up reconciliation of keyed
  // writes a dead keel left without an outcome (CommandTool::ReconcileAtStartup).
  std::vector<CommandTool*> command_tools;
  // Fired by tools that change what keel lists (the fixture test_trigger_tool_change); the
  // server connects it to its Session before serving.
  std::shared_ptr<ListChangedHook> tools_changed = std::make_shared<ListChangedHook>();
  // The same for the prompt list (the fixture test_trigger_prompt_change).
  std::shared_ptr<ListChangedHook> prompts_changed = std::make_shared<ListChangedHook>();
  std::optional<int> exit_code;  // set when keel must exit now; the reason is written
};

// `ledger` is the serving database (the ledger and deployment tools keep their state in it).
ToolSet BuildToolSet(const CliOptions& flags, const Catalog& catalog,
                     const std::shared_ptr<LedgerService>& ledger, std::ostream& err);

}  // namespace keel
