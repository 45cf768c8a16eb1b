#include "server/policy/catalog_spec.h"

namespace keel {

Json Annotations(EffectClass effect) {
  const bool read_only = !IsWrite(effect);
  return Json{{"readOnlyHint", read_only},
              {"destructiveHint", !read_only},
              {"idempotentHint", effect != EffectClass::kUnsafeWrite}};
}

ToolSpec SpecFor(const CatalogEntry& entry) {
  ToolSpec spec;
  spec.name = entry.name;
  spec.title = entry.title;
  spec.description = entry.description;
  spec.input_schema = entry.input_schema;
  spec.annotations = Annotations(entry.effect);
  spec.task_support = entry.task_support;
  return spec;
}

}  // namespace keel
