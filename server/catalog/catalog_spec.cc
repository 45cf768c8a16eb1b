#include "server/catalog/catalog_spec.h"

namespace keel {

Json Annotations(EffectClass effect) {
  const bool read_only = !IsWrite(effect);
  return Json{{"readOnlyHint", read_only},
              {"destructiveHint", !read_only},
              {"idempotentHint", effect != EffectClass::kUnsafeWrite}};
}

Json ApprovalIdSchema() {
  return Json{{"type", "string"},
              {"minLength", 1},
              {"maxLength", 128},
              {"description",
               "Required: the id of the approval that authorises this call. One approval "
               "authorises one intent: it becomes part of the idempotency key."}};
}

ToolSpec SpecFor(const CatalogEntry& entry) {
  ToolSpec spec;
  spec.name = entry.name;
  spec.title = entry.title;
  spec.description = entry.description;
  spec.input_schema = entry.input_schema;
  spec.annotations = Annotations(entry.effect);
  spec.task_support = entry.task_support;
  spec.effect = entry.effect;
  spec.output_schema = entry.output_schema;
  spec.backend = entry.backend;
  spec.approval_required = entry.approval_required;
  spec.key_components = entry.key_components;
  spec.timeouts = entry.timeouts;
  spec.retry = entry.retry;
  spec.result_ttl_ms = entry.result_ttl_ms;
  if (entry.approval_required) spec.input_schema = WithApprovalId(std::move(spec.input_schema));
  return spec;
}

Json WithApprovalId(Json input_schema) {
  if (!input_schema.is_object()) return input_schema;  // not a tool's schema: nothing to add to
  Json& properties = input_schema["properties"];
  if (!properties.is_object()) properties = Json::object();
  if (!properties.contains("approval_id")) properties["approval_id"] = ApprovalIdSchema();
  return input_schema;
}

}  // namespace keel
