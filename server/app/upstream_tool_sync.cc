#include "server/app/upstream_tool_sync.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "server/app/wrap_setup.h"

namespace keel {

namespace {

// What a client sees of a tool, and what keel does with it.
bool SameTool(const Tool& listed, const Tool& fresh) {
  const ToolSpec& a = listed.spec();
  const ToolSpec& b = fresh.spec();
  return ToolRegistry::Describe(a) == ToolRegistry::Describe(b) && a.effect == b.effect &&
         a.validate_arguments == b.validate_arguments;
}

std::vector<std::string> Names(const ToolRegistry& registry) {
  std::vector<std::string> names;
  for (const auto& tool : registry.tools()) names.push_back(tool->spec().name);
  return names;
}

}  // namespace

UpstreamToolSync::UpstreamToolSync(ToolRegistry& registry, std::shared_ptr<UpstreamLink> link,
                                   const Catalog* overlay, std::shared_ptr<LedgerService> ledger)
    : registry_(registry),
      link_(std::move(link)),
      overlay_(overlay),
      ledger_(std::move(ledger)),
      served_(link_->lists().tools) {}

bool UpstreamToolSync::Refresh() {
  std::vector<Json> listed = link_->lists().tools;
  if (listed == served_) return false;
  UpstreamToolBuild built = BuildUpstreamTools(listed, link_, overlay_, ledger_);
  for (const std::string& problem : built.problems) {
    spdlog::warn("keel wrap: catalog: {} (after the upstream's tools changed)", problem);
  }
  for (const std::string& name : built.unmatched) {
    spdlog::warn("keel wrap: catalog: tool '{}' is no longer a tool of the upstream server", name);
  }
  const std::vector<std::string> before = Names(registry_);
  std::vector<const Tool*> kept;
  for (const auto& tool : registry_.tools()) kept.push_back(tool.get());
  for (const std::string& refused : registry_.ReplaceAll(std::move(built.tools), SameTool)) {
    spdlog::warn("upstream tool not served: {}", refused);
  }
  served_ = std::move(listed);
  bool changed = Names(registry_) != before;
  for (size_t i = 0; !changed && i < kept.size(); ++i) {
    changed = registry_.tools()[i].get() != kept[i];  // same names, a tool replaced
  }
  spdlog::info("the upstream server's tools changed: keel serves {} tool(s){}",
               registry_.tools().size(), changed ? "" : " (tools/list unchanged)");
  return changed;
}

}  // namespace keel
