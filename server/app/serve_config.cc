#include "server/app/serve_config.h"

#include <memory>
#include <string>
#include <utility>

#include "server/app/exit_codes.h"
#include "server/catalog/catalog_binding.h"
#include "server/catalog/effective_policy.h"
#include "server/policy/policy_loader.h"

namespace keel {

ServeConfig LoadServeConfig(const CliOptions& flags, std::ostream& err) {
  ServeConfig config;
  // Without a file: the built-in policy, with --idle-timeout and --max-timeout as defaults.
  config.policy = std::make_shared<const Policy>(
      BuiltinPolicyWithTimeouts(flags.idle_timeout_ms, flags.max_timeout_ms));
  if (!flags.policy_file.empty()) {
    LoadedPolicy loaded = LoadPolicyFile(flags.policy_file);
    for (const std::string& problem : loaded.problems) err << "keel: policy: " << problem << "\n";
    if (!loaded.policy) {
      config.exit_code = loaded.unreadable ? kExitNoInput : kExitConfig;
      return config;
    }
    config.policy = std::move(loaded.policy);
  }
  // keel wrap: the file is an overlay on the upstream's tools (catalog_overlay.h).
  CatalogLoad catalog =
      LoadCatalogFile(flags.catalog_file, flags.wrap ? CatalogMode::kOverlay : CatalogMode::kServe);
  for (const std::string& warning : catalog.warnings) {
    err << "keel: catalog: warning: " << warning << "\n";
  }
  for (const std::string& problem : catalog.problems) err << "keel: catalog: " << problem << "\n";
  if (!catalog.ok()) {
    config.exit_code = catalog.unreadable ? kExitNoInput : kExitConfig;
    return config;
  }
  config.catalog = std::move(catalog.catalog);
  return config;
}

}  // namespace keel
