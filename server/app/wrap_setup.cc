#include "server/app/wrap_setup.h"

#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/schema_validator.h"
#include "server/app/exit_codes.h"
#include "server/catalog/catalog_spec.h"
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
  // tasks (2025-11-25 params.task, or the 2026-07-28 extension with --task-after); an
  // upstream that forbids tasks keeps that.
  const Json execution = tool.value("execution", Json::object());
  if (execution.is_object() && execution.value("taskSupport", "") == "forbidden") {
    return TaskSupport::kForbidden;
  }
  return TaskSupport::kOptional;
}

const CatalogEntry* OverlayEntry(const Catalog* overlay, const std::string& name) {
  if (overlay == nullptr) return nullptr;
  for (const CatalogEntry& entry : overlay->tools) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

// The upstream tool's spec, with the overlay entry's policy over it.
ToolSpec UpstreamSpec(const Json& tool, const CatalogEntry* entry) {
  ToolSpec spec;
  spec.name = tool.value("name", std::string());
  const Json title = tool.value("title", Json());
  if (title.is_string()) spec.title = title.get<std::string>();
  const Json description = tool.value("description", Json());
  if (description.is_string()) spec.description = description.get<std::string>();
  spec.input_schema = tool.value("inputSchema", Json{{"type", "object"}});
  spec.output_schema = tool.value("outputSchema", Json());
  spec.annotations = tool.value("annotations", Json());
  spec.effect = EffectOfAnnotations(spec.annotations);
  spec.task_support = UpstreamTaskSupport(tool);
  if (entry == nullptr) return spec;
  ToolSpec from = SpecFor(*entry);
  spec.effect = from.effect;
  spec.backend = from.backend;
  spec.timeouts = from.timeouts;
  spec.retry = from.retry;
  spec.key_components = from.key_components;
  spec.approval_required = from.approval_required;
  spec.task_support = from.task_support;
  spec.result_ttl_ms = from.result_ttl_ms;
  if (!entry->title.empty()) spec.title = entry->title;
  if (!entry->description.empty()) spec.description = entry->description;
  // The effect annotations follow the class keel runs the tool as.
  if (!spec.annotations.is_object()) spec.annotations = Json::object();
  for (const auto& [key, value] : from.annotations.items()) spec.annotations[key] = value;
  if (entry->approval_required)
    spec.input_schema["properties"]["approval_id"] = from.input_schema["properties"]["approval_id"];
  return spec;
}

}  // namespace

WrapParts StartWrap(const CliOptions& flags, std::ostream& err) {
  WrapParts parts;
  UpstreamOptions options;
  options.command.argv = flags.upstream_command;
  options.command.env = UpstreamEnvironment(flags.upstream_env_allow);
  options.command.max_line_bytes = flags.max_line_bytes;
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

bool AddUpstreamTools(const UpstreamLink& link, const std::shared_ptr<UpstreamLink>& shared,
                      const Catalog* overlay, const std::shared_ptr<LedgerService>& ledger,
                      ToolSet* set, std::ostream& err) {
  const UpstreamLists lists = link.lists();
  std::set<std::string> upstream_names;
  bool ok = true;
  for (const Json& tool : lists.tools) {
    const Json name = tool.value("name", Json());
    if (!name.is_string()) {
      spdlog::warn("upstream listed a tool without a name: not served");
      continue;
    }
    upstream_names.insert(name.get<std::string>());
    const CatalogEntry* entry = OverlayEntry(overlay, name.get<std::string>());
    ToolSpec spec = UpstreamSpec(tool, entry);
    std::optional<std::string> problem;
    const auto type =
        spec.input_schema.is_object() ? spec.input_schema.find("type") : spec.input_schema.end();
    if (!spec.input_schema.is_object() || type == spec.input_schema.end() || *type != "object") {
      problem = "its inputSchema is not an object schema";
    } else {
      problem = CheckSchemaWellFormed(spec.input_schema);
    }
    if (!problem && !spec.output_schema.is_null())
      problem = CheckSchemaWellFormed(spec.output_schema);
    if (problem) {
      spdlog::warn(
          "upstream tool '{}': keel cannot validate against its schemas ({}); the "
          "upstream validates its arguments",
          spec.name, *problem);
      spec.validate_arguments = false;
    }
    UpstreamToolOptions options;
    const Json schema = tool.value("inputSchema", Json());
    options.upstream_has_approval_id = schema.is_object() &&
                                       schema.value("properties", Json()).is_object() &&
                                       schema["properties"].contains("approval_id");
    auto upstream_tool = std::make_unique<UpstreamTool>(std::move(spec), shared, ledger, options);
    if (std::string refused = set->registry.Register(std::move(upstream_tool)); !refused.empty()) {
      spdlog::warn("upstream tool not served: {}", refused);
    }
  }
  if (overlay != nullptr) {
    for (const CatalogEntry& entry : overlay->tools) {
      if (upstream_names.count(entry.name) != 0) continue;
      err << "keel wrap: catalog: tool '" << entry.name
          << "' is not a tool of the upstream server (it lists:";
      for (const std::string& name : upstream_names) err << " " << name;
      err << ")\n";
      ok = false;
    }
  }
  return ok;
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
