#include "server/catalog/catalog_overlay.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "server/catalog/catalog_spec.h"
#include "server/catalog/object_reader.h"

namespace keel {
namespace {

bool HintIsTrue(const Json& annotations, const char* hint) {
  const auto it = annotations.find(hint);
  return it != annotations.end() && it->is_boolean() && it->get<bool>();
}

// The names of the schema's properties, for a message: the operator cannot see the
// upstream's schema in the overlay file.
std::string PropertiesOf(const Json& schema) {
  Json names = Json::array();
  if (schema.is_object()) {
    const auto properties = schema.find("properties");
    if (properties != schema.end() && properties->is_object()) {
      for (const auto& item : properties->items()) names.push_back(item.key());
    }
  }
  return names.empty() ? "it has none" : "it has " + Shown(names);
}

}  // namespace

EffectClass EffectFromAnnotations(const Json& annotations) {
  if (!annotations.is_object()) return EffectClass::kUnsafeWrite;
  if (HintIsTrue(annotations, "readOnlyHint")) return EffectClass::kRead;
  if (HintIsTrue(annotations, "idempotentHint")) return EffectClass::kIdempotentWrite;
  return EffectClass::kUnsafeWrite;
}

std::vector<std::string> CheckOverlayAgainstUpstream(const CatalogEntry& entry,
                                                     const Json& upstream_input_schema,
                                                     EffectClass upstream_effect) {
  std::vector<std::string> problems;
  const std::string where = "tools (" + entry.name + ").";
  const bool own_schema = !entry.input_schema.is_null();
  const Json& schema = own_schema ? entry.input_schema : upstream_input_schema;
  const std::string schema_name = own_schema ? "inputSchema" : "the upstream tool's inputSchema";
  const EffectClass effect = entry.has_effect ? entry.effect : upstream_effect;

  if (!entry.key_components.empty() && !IsWrite(effect)) {
    problems.push_back(
        where + "idempotency: applies to writes only; this tool's effect is " +
        std::string(EffectClassName(effect)) +
        (entry.has_effect ? "" : " (from the upstream's annotations: give \"effect\")"));
  }
  for (size_t i = 0; i < entry.key_components.size(); ++i) {
    const std::string& name = entry.key_components[i];
    if (!HasInputProperty(schema, name)) {
      problems.push_back(where + "idempotency.keyComponents[" + std::to_string(i) +
                         "]: " + Shown(Json(name)) + " is not a property of " + schema_name + " (" +
                         PropertiesOf(schema) + ")");
    }
  }
  // A write the operator declares idempotent must be able to recognise a repeat.
  if (entry.has_effect && entry.effect == EffectClass::kIdempotentWrite &&
      entry.key_components.empty() && !HasInputProperty(schema, "idempotencyKey")) {
    problems.push_back(where +
                       "idempotency: an idempotent_write needs idempotency.keyComponents or an "
                       "\"idempotencyKey\" property in " +
                       schema_name + ", else a repeat cannot be recognised");
  }
  return problems;
}

ToolSpec OverlaySpec(const CatalogEntry* overlay, ToolSpec upstream) {
  ToolSpec spec = std::move(upstream);
  if (overlay == nullptr) return spec;
  const CatalogEntry& entry = *overlay;
  if (!entry.title.empty()) spec.title = entry.title;
  if (!entry.description.empty()) spec.description = entry.description;
  if (!entry.input_schema.is_null()) spec.input_schema = entry.input_schema;
  if (!entry.output_schema.is_null()) spec.output_schema = entry.output_schema;
  if (entry.has_effect) {
    spec.effect = entry.effect;
    // The hints must not contradict the class keel applies; the upstream's other
    // annotations (title, openWorldHint) are still its own word.
    if (!spec.annotations.is_object()) spec.annotations = Json::object();
    spec.annotations.update(Annotations(entry.effect));
  }
  if (!entry.backend.empty()) spec.backend = entry.backend;
  if (entry.timeouts) spec.timeouts = entry.timeouts;
  if (entry.retry) spec.retry = entry.retry;
  if (!entry.key_components.empty()) spec.key_components = entry.key_components;
  if (entry.approval_required) {
    spec.approval_required = true;
    spec.input_schema = WithApprovalId(std::move(spec.input_schema));
  }
  if (entry.has_task_support) spec.task_support = entry.task_support;
  if (entry.result_ttl_ms) spec.result_ttl_ms = entry.result_ttl_ms;
  spec.upstream_takes_key = entry.upstream_takes_key;
  return spec;
}

OverlaidTools OverlayTools(const Catalog& overlay, std::vector<ToolSpec> upstream) {
  std::unordered_map<std::string, const CatalogEntry*> by_name;
  for (const CatalogEntry& entry : overlay.tools) by_name.emplace(entry.name, &entry);
  std::unordered_set<std::string> matched;
  OverlaidTools overlaid;
  for (ToolSpec& tool : upstream) {
    const auto it = by_name.find(tool.name);
    if (it == by_name.end()) {
      overlaid.specs.push_back(std::move(tool));
      continue;
    }
    const CatalogEntry* entry = it->second;
    matched.insert(entry->name);
    std::vector<std::string> problems =
        CheckOverlayAgainstUpstream(*entry, tool.input_schema, tool.effect);
    if (problems.empty()) {
      overlaid.specs.push_back(OverlaySpec(entry, std::move(tool)));
    } else {
      for (std::string& problem : problems) overlaid.problems.push_back(std::move(problem));
    }
  }
  for (const CatalogEntry& entry : overlay.tools) {  // in file order
    if (matched.count(entry.name) == 0) overlaid.unmatched.push_back(entry.name);
  }
  return overlaid;
}

}  // namespace keel
