#include "server/app/tool_set.h"

#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "server/app/exit_codes.h"
#include "server/catalog/catalog_binding.h"
#include "server/tools/conformance_diagnostic_tools.h"
#include "server/tools/conformance_legacy_tools.h"
#include "server/tools/conformance_mrtr_tools.h"
#include "server/tools/conformance_task_tools.h"
#include "server/tools/conformance_tools.h"
#include "server/tools/deployment_tools.h"
#include "server/tools/echo_tool.h"
#include "server/tools/fault_plan.h"
#include "server/tools/ledger_tools.h"
#include "server/tools/test_tools.h"

namespace keel {
namespace {

using Tools = std::vector<std::unique_ptr<Tool>>;

void Append(Tools* to, Tools from, std::set<std::string>* names = nullptr) {
  for (auto& tool : from) {
    if (names != nullptr) names->insert(tool->spec().name);
    to->push_back(std::move(tool));
  }
}

// keel's own implementations the catalog may name. Test tools and fixtures are also named in
// *test_tool_names. False after writing why (a bad --fault).
bool MakeImplementations(const CliOptions& flags, const std::shared_ptr<LedgerService>& ledger,
                         std::ostream& err, const ToolSet& set, Tools* implementations,
                         std::set<std::string>* test_tool_names) {
  implementations->push_back(MakeEchoTool());
  // Test-only: KEEL_TEST_CRASH_AT makes a mutation kill keel at one step (crash tests).
  const char* crash_at = flags.test_tools ? std::getenv("KEEL_TEST_CRASH_AT") : nullptr;
  Append(implementations, MakeLedgerTools(ledger, crash_at ? crash_at : ""));
  std::string fault_error;
  const auto fault_specs = ParseFaults(flags.faults, DeploymentToolNames(), &fault_error);
  if (!fault_specs) {
    err << "keel: " << fault_error << "\n";
    return false;
  }
  auto faults = std::make_shared<FaultPlan>(*fault_specs);
  if (!faults->empty()) spdlog::warn("fault injection on: {}", faults->Describe());
  Append(implementations, MakeDeploymentTools(ledger, faults));
  if (flags.test_tools) Append(implementations, MakeTestTools(), test_tool_names);
  if (flags.conformance_fixtures) {
    // The core fixtures first: the suite calls the first tool listed with no arguments.
    Append(implementations, MakeConformanceTools(), test_tool_names);
    Append(implementations, MakeConformanceMrtrTools(), test_tool_names);
    Append(implementations, MakeConformanceDiagnosticTools(set.tools_changed, set.prompts_changed),
           test_tool_names);
    Append(implementations, MakeConformanceLegacyTools(), test_tool_names);
    Append(implementations, MakeConformanceTaskTools(), test_tool_names);
  }
  return true;
}

// The catalog's tools, then the test tools and fixtures it does not describe, registered.
void RegisterTools(BoundCatalog bound, const std::set<std::string>& test_tool_names, ToolSet* set) {
  Tools tools = std::move(bound.tools);
  for (auto& tool : bound.unbound) {
    if (test_tool_names.count(tool->spec().name) != 0) tools.push_back(std::move(tool));
  }
  for (auto& tool : tools) {
    if (const std::string error = set->registry.Register(std::move(tool)); !error.empty()) {
      spdlog::critical("invalid tool catalog: {}", error);
      set->exit_code = kExitSoftware;
      set->command_tools.clear();  // some of them are gone with `tools`
      return;
    }
  }
}

}  // namespace

ToolSet BuildToolSet(const CliOptions& flags, const Catalog& catalog,
                     const std::shared_ptr<LedgerService>& ledger, std::ostream& err) {
  ToolSet set;
  Tools implementations;
  std::set<std::string> test_tool_names;
  if (!MakeImplementations(flags, ledger, err, set, &implementations, &test_tool_names)) {
    set.exit_code = kExitConfig;
    return set;
  }
  // Command-backed tools: catalog entries with `run`.
  auto make_command = [&](ToolSpec spec, const CommandSpec& command) {
    auto tool = std::make_unique<CommandTool>(std::move(spec), command, ledger);
    set.command_tools.push_back(tool.get());
    return std::unique_ptr<Tool>(std::move(tool));
  };
  BoundCatalog bound = BindCatalog(catalog, std::move(implementations), make_command);
  for (const std::string& problem : bound.problems) err << "keel: catalog: " << problem << "\n";
  if (!bound.problems.empty()) {
    set.exit_code = kExitConfig;
    set.command_tools.clear();  // they are gone with `bound`
    return set;
  }
  RegisterTools(std::move(bound), test_tool_names, &set);
  return set;
}

}  // namespace keel
