#include "server/app/surface_setup.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "server/catalog/catalog_binding.h"
#include "server/surface/conformance_surface.h"

namespace keel {

std::shared_ptr<Surface> BuildSurface(const CliOptions& flags, Catalog catalog,
                                      std::shared_ptr<LedgerService> ledger) {
  if (flags.conformance_fixtures) AddConformanceSurfaceEntries(catalog);
  if (catalog.resources.empty() && catalog.resource_templates.empty() && catalog.prompts.empty()) {
    return nullptr;
  }
  auto surface =
      std::make_shared<Surface>(std::move(catalog.resources), std::move(catalog.resource_templates),
                                std::move(catalog.prompts), std::move(ledger));
  if (flags.conformance_fixtures) AddConformancePrompts(*surface);
  return surface;
}

std::shared_ptr<Surface> ReloadSurface(const CliOptions& flags,
                                       std::shared_ptr<LedgerService> ledger) {
  if (flags.catalog_file.empty()) return nullptr;
  CatalogLoad load = LoadCatalogFile(flags.catalog_file);
  if (!load.ok()) {
    for (const std::string& problem : load.problems) {
      spdlog::error("SIGHUP: catalog {}: {}", flags.catalog_file, problem);
    }
    spdlog::error("SIGHUP: the catalog's resources and prompts stay as they were");
    return nullptr;
  }
  std::shared_ptr<Surface> surface =
      BuildSurface(flags, std::move(*load.catalog), std::move(ledger));
  if (surface == nullptr) {
    surface = std::make_shared<Surface>(std::vector<ResourceEntry>(),
                                        std::vector<ResourceTemplateEntry>(),
                                        std::vector<PromptEntry>(), nullptr);
  }
  return surface;
}

}  // namespace keel
