#include "server/app/wrap_setup.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/schema_validator.h"
#include "server/app/exit_codes.h"
#include "server/catalog/catalog_overlay.h"
#include "server/upstream/upstream_tool.h"

extern char** environ;

namespace keel {
namespace {

// The upstream's environment: keel's, or only the allowed names (PATH and HOME always).
std::vector<std::string> UpstreamEnvironment(const std::vector<std::string>& allow) {
  std::vector<std::string> env;
  std::set<std::string> names(allow.begin(), allow.end());
  names.insert("PATH");
  names.insert("HOME");
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string variable = *entry;
    const size_t equals = variable.find('=');
    if (equals == std::string::npos) continue;
    if (!allow.empty() && names.count(variable.substr(0, equals)) == 0) continue;
    env.push_back(variable);
  }
  return env;
}

TaskSupport UpstreamTaskSupport(const Json& tool) {
  // keel runs every upstream call itself, so any tool may become one of keel's durable
  // tasks (2025-11-25 params.task, or the 2026-07-28 extension with --task-after), also one
  // the upstream runs only as a task (keel drives that task: upstream_call.h rule 9); an
  // upstream that forbids tasks keeps that.
  const Json execution = tool.value("execution", Json::object());
  if (execution.is_object() && execution.value("taskSupport", "") == "forbidden") {
    return TaskSupport::kForbidden;
  }
  return TaskSupport::kOptional;
}

// The upstream tool as it lists itself (rule 1 of catalog_overlay.h for the effect).
ToolSpec UpstreamSpec(const Json& tool) {
  ToolSpec spec;
  spec.name = tool.value("name", std::string());
  const Json title = tool.value("title", Json());
  if (title.is_string()) spec.title = title.get<std::string>();
  const Json description = tool.value("description", Json());
  if (description.is_string()) spec.description = description.get<std::string>();
  spec.input_schema = tool.value("inputSchema", Json{{"type", "object"}});
  spec.output_schema = tool.value("outputSchema", Json());
  spec.annotations = tool.value("annotations", Json());
  spec.effect = EffectFromAnnotations(spec.annotations);
  spec.task_support = UpstreamTaskSupport(tool);
  return spec;
}

// Whether keel can validate against the spec's schemas; if not, the upstream validates.
void CheckSchemas(ToolSpec& spec) {
  std::optional<std::string> problem;
  const auto type =
      spec.input_schema.is_object() ? spec.input_schema.find("type") : spec.input_schema.end();
  if (!spec.input_schema.is_object() || type == spec.input_schema.end() || *type != "object") {
    problem = "its inputSchema is not an object schema";
  } else {
    problem = CheckSchemaWellFormed(spec.input_schema);
  }
  if (!problem && !spec.output_schema.is_null()) {
    problem = CheckSchemaWellFormed(spec.output_schema);
  }
  if (!problem) return;
  spdlog::warn(
      "upstream tool '{}': keel cannot validate against its schemas ({}); the upstream "
      "validates its arguments",
      spec.name, *problem);
  spec.validate_arguments = false;
}

bool DeclaresProperty(const Json& schema, const char* name) {
  return schema.is_object() && schema.value("properties", Json()).is_object() &&
         schema["properties"].contains(name);
}

}  // namespace

WrapParts StartWrap(const CliOptions& flags, std::ostream& err) {
  WrapParts parts;
  UpstreamOptions options;
  options.command.argv = flags.upstream_command;
  options.command.env = UpstreamEnvironment(flags.upstream_env_allow);
  options.command.max_line_bytes = flags.max_line_bytes;
  options.url = flags.upstream_url;
  options.headers = flags.upstream_headers;
  options.protocol = flags.upstream_protocol;
  options.start_timeout = Millis(flags.upstream_start_timeout_ms);
  options.max_restarts = flags.upstream_restarts;
  options.restart_window = Millis(flags.upstream_restart_window_ms);
  // Hosts kill keel about 2 s after closing its stdin: the upstream's stop fits in that.
  options.shutdown_grace = Millis(std::min<long long>(flags.shutdown_grace_ms, 1000));
  parts.link = std::make_shared<UpstreamLink>(std::move(options));
  std::string error;
  if (!parts.link->Start(&error)) {
    err << "keel wrap: the upstream server cannot start: " << error << "\n";
    parts.link.reset();
    parts.exit_code = kExitUnavailable;
  }
  return parts;
}

UpstreamToolBuild BuildUpstreamTools(const std::vector<Json>& listed,
                                     const std::shared_ptr<UpstreamLink>& link,
                                     const Catalog* overlay,
                                     const std::shared_ptr<LedgerService>& ledger) {
  std::vector<ToolSpec> upstream;
  std::map<std::string, Json> schemas;  // the upstream's own input schemas, by name
  std::set<std::string> tasked;         // the tools it runs only as tasks
  for (const Json& tool : listed) {
    if (!tool.value("name", Json()).is_string()) {
      spdlog::warn("upstream listed a tool without a name: not served");
      continue;
    }
    upstream.push_back(UpstreamSpec(tool));
    schemas[upstream.back().name] = upstream.back().input_schema;
    const Json execution = tool.value("execution", Json::object());
    if (execution.is_object() && execution.value("taskSupport", Json()) == "required") {
      tasked.insert(upstream.back().name);
    }
  }
  const Catalog none;
  OverlaidTools overlaid = OverlayTools(overlay != nullptr ? *overlay : none, std::move(upstream));
  UpstreamToolBuild built;
  built.problems = std::move(overlaid.problems);
  built.unmatched = std::move(overlaid.unmatched);
  for (ToolSpec& spec : overlaid.specs) {
    CheckSchemas(spec);
    const Json& own = schemas[spec.name];
    UpstreamToolOptions options;
    options.upstream_takes_key = spec.upstream_takes_key;
    options.upstream_has_approval_id = DeclaresProperty(own, "approval_id");
    options.upstream_has_key = DeclaresProperty(own, "idempotencyKey");
    options.upstream_requires_task = tasked.count(spec.name) != 0;
    built.tools.push_back(std::make_unique<UpstreamTool>(std::move(spec), link, ledger, options));
  }
  return built;
}

bool AddUpstreamTools(const std::shared_ptr<UpstreamLink>& link, const Catalog* overlay,
                      const std::shared_ptr<LedgerService>& ledger, ToolSet* set,
                      std::ostream& err) {
  UpstreamToolBuild built = BuildUpstreamTools(link->lists().tools, link, overlay, ledger);
  for (const std::string& problem : built.problems) {
    err << "keel wrap: catalog: " << problem << "\n";
  }
  for (const std::string& name : built.unmatched) {
    err << "keel wrap: catalog: tool '" << name << "' is not a tool of the upstream server\n";
  }
  if (!built.problems.empty() || !built.unmatched.empty()) return false;
  for (std::unique_ptr<Tool>& tool : built.tools) {
    if (std::string refused = set->registry.Register(std::move(tool)); !refused.empty()) {
      spdlog::warn("upstream tool not served: {}", refused);
    }
  }
  return true;
}

std::shared_ptr<Surface> MakeForwardedSurface(const std::shared_ptr<UpstreamLink>& link) {
  const UpstreamLists lists = link->lists();
  const Json& caps = link->info().capabilities;
  ForwardedSurface forwarded;
  forwarded.resources = lists.resources;
  forwarded.templates = lists.templates;
  forwarded.prompts = lists.prompts;
  forwarded.serves_resources = caps.contains("resources");
  forwarded.serves_prompts = caps.contains("prompts");
  forwarded.completes = caps.contains("completions");
  forwarded.tool = std::make_shared<UpstreamSurfaceTool>(link);
  const Json resources = caps.value("resources", Json());
  if (resources.is_object() && resources.value("subscribe", false) == true) {
    std::weak_ptr<UpstreamLink> weak = link;
    forwarded.subscribe = [weak](const std::string& uri) {
      if (std::shared_ptr<UpstreamLink> held = weak.lock()) held->Subscribe(uri);
    };
  }
  return std::make_shared<Surface>(std::move(forwarded));
}

}  // namespace keel
