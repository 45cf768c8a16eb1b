#include "server/app/catalog_check.h"

#include <stdlib.h>

#include <sstream>
#include <string>

#include "server/app/exit_codes.h"
#include "server/app/serve_config.h"
#include "server/app/tool_set.h"

namespace keel {

CommandOutcome RunCatalogCheck(const CliOptions& flags, std::ostream& err) {
  if (flags.catalog_check_path && setenv("PATH", flags.catalog_check_path->c_str(), 1) != 0) {
    err << "keel: catalog: cannot set PATH for the check\n";
    return {kExitSoftware, ""};
  }
  CliOptions check = flags;
  check.catalog_file = flags.catalog_check_file;
  check.wrap = false;
  const ServeConfig config = LoadServeConfig(check, err);
  if (config.exit_code) return {*config.exit_code, ""};
  // Binding needs no database: the tools are built, never called.
  ToolSet tools = BuildToolSet(check, *config.catalog, nullptr, err);
  if (tools.exit_code) return {*tools.exit_code, ""};
  std::ostringstream out;
  const auto& served = tools.registry.tools();
  out << "catalog " << flags.catalog_check_file << " is valid: " << served.size()
      << (served.size() == 1 ? " tool" : " tools");
  const char* separator = ": ";
  for (const auto& tool : served) {
    out << separator << tool->spec().name;
    separator = ", ";
  }
  out << "\n";
  return {0, out.str()};
}

}  // namespace keel
