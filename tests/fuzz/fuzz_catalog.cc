// fuzz_catalog: a --catalog file's text through LoadCatalog (pure, no I/O), and a loaded
// catalog through what start-up and tools/list do with it: SpecFor, ToolRegistry::Register,
// ToolRegistry::Describe and the compact dump that goes on the wire.
//
// Input: the catalog's text (docs/catalog.md).
// Checked, besides "no crash, leak, UB, stack overflow or hang":
//  1. exactly one of a catalog and a non-empty list of problems (catalog.h);
//  2. a loaded catalog holds catalog.h's invariants 1, 2 and 5: unique valid names, object
//     input schemas that pass CheckSchemaWellFormed, and ordered timeouts;
//  3. the registry accepts every entry's SpecFor, and its tools/list entry dumps as UTF-8;
//  4. the catalog serves something, and its resources, templates and prompts hold
//     surface_entries.h's invariants 1 and 2: one source each, unique prompt names;
//  5. the same text as a `keel wrap` overlay: exactly one of a catalog and problems; no
//     entry has `run`; over an upstream tool of its name, an entry that
//     CheckOverlayAgainstUpstream accepts gives an OverlaySpec the registry accepts, whose
//     effect hints agree with its effect class when the entry gives one.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "fuzz_support.h"
#include "protocol/json_rpc.h"
#include "protocol/schema_validator.h"
#include "protocol/utf8.h"
#include "server/catalog/catalog.h"
#include "server/catalog/catalog_overlay.h"
#include "server/catalog/catalog_spec.h"
#include "server/catalog/tool_registry.h"
#include "server/tools/fn_tool.h"

namespace keel {
namespace {

void CheckEntry(const CatalogEntry& entry, std::set<std::string>& names) {
  FUZZ_CHECK(IsValidToolName(entry.name) && IsValidToolName(entry.backend));
  FUZZ_CHECK(names.insert(entry.name).second);
  FUZZ_CHECK(entry.input_schema.is_object() && entry.input_schema.at("type") == "object");
  FUZZ_CHECK(!CheckSchemaWellFormed(entry.input_schema));
  FUZZ_CHECK(entry.output_schema.is_null() || !CheckSchemaWellFormed(entry.output_schema));
  if (entry.timeouts) {
    const TimeoutSettings& t = *entry.timeouts;
    FUZZ_CHECK(0 <= t.idle_ms && t.idle_ms <= t.max_ms && t.max_ms <= kMaxCatalogMs);
    FUZZ_CHECK(0 < t.attempt_ms && t.attempt_ms <= t.max_ms);
  }
  if (entry.retry) {
    const RetrySettings& r = *entry.retry;
    FUZZ_CHECK(1 <= r.max_attempts && r.max_attempts <= kMaxRetryAttempts);
    FUZZ_CHECK(0 < r.base_ms && r.base_ms <= r.cap_ms && r.cap_ms <= kMaxCatalogMs);
  }
  FUZZ_CHECK(!entry.result_ttl_ms || *entry.result_ttl_ms > 0);
}

void CheckSurface(const Catalog& catalog) {
  FUZZ_CHECK(!catalog.tools.empty() || !catalog.resources.empty() ||
             !catalog.resource_templates.empty() || !catalog.prompts.empty());
  for (const ResourceEntry& r : catalog.resources) {
    const int sources = int{!r.file.empty()} + int{r.text.has_value()} + int{r.blob.has_value()} +
                        int{r.is_mount()};
    FUZZ_CHECK(sources == 1 && !r.name.empty());
    FUZZ_CHECK(r.is_mount() ? r.uri_prefix.back() == '/' : !r.uri.empty());
    FUZZ_CHECK(1 <= r.max_bytes && r.max_bytes <= kMaxResourceBytes);
  }
  for (const ResourceTemplateEntry& t : catalog.resource_templates) {
    FUZZ_CHECK(t.run.has_value() != t.text.has_value() && !t.uri_template.empty());
  }
  std::set<std::string> prompt_names;
  for (const PromptEntry& p : catalog.prompts) {
    FUZZ_CHECK(prompt_names.insert(p.name).second && !p.messages.empty());
  }
}

// An upstream tool of `name`, as a wrapped server might list it.
ToolSpec UpstreamTool(const std::string& name) {
  ToolSpec spec;
  spec.name = name;
  spec.description = "an upstream tool";
  spec.input_schema = Json::parse(
      R"({"type":"object","properties":{"id":{"type":"string"},"idempotencyKey":{"type":"string"}}})");
  spec.annotations = Json{{"idempotentHint", true}, {"openWorldHint", false}};
  spec.effect = EffectFromAnnotations(spec.annotations);
  return spec;
}

void CheckOverlay(std::string_view text) {
  const CatalogLoad load = LoadCatalog(text, CatalogMode::kOverlay);
  FUZZ_CHECK(load.ok() == load.problems.empty());
  if (!load.ok()) return;
  CheckSurface(*load.catalog);
  ToolRegistry registry;
  for (const CatalogEntry& entry : load.catalog->tools) {
    FUZZ_CHECK(!entry.run.has_value() && IsValidToolName(entry.name));
    ToolSpec upstream = UpstreamTool(entry.name);
    if (!CheckOverlayAgainstUpstream(entry, upstream.input_schema, upstream.effect).empty()) {
      continue;
    }
    ToolSpec spec = OverlaySpec(&entry, std::move(upstream));
    if (entry.has_effect) FUZZ_CHECK(spec.annotations.at("readOnlyHint") == !IsWrite(spec.effect));
    FUZZ_CHECK(IsValidUtf8(DumpCompact(Json(ToolRegistry::Describe(spec)))));
    auto tool = std::make_unique<FnTool>(std::move(spec), [](ToolContext&) { return Json(); });
    FUZZ_CHECK(registry.Register(std::move(tool)).empty());
  }
}

}  // namespace
}  // namespace keel

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckOverlay(text);
  const CatalogLoad load = LoadCatalog(text);
  FUZZ_CHECK(load.ok() == load.problems.empty());
  if (!load.ok()) return 0;
  CheckSurface(*load.catalog);

  std::set<std::string> names;
  ToolRegistry registry;
  for (const CatalogEntry& entry : load.catalog->tools) {
    CheckEntry(entry, names);
    ToolSpec spec = SpecFor(entry);
    const std::string listed = DumpCompact(Json(ToolRegistry::Describe(spec)));
    FUZZ_CHECK(IsValidUtf8(listed));
    auto tool = std::make_unique<FnTool>(std::move(spec), [](ToolContext&) { return Json(); });
    FUZZ_CHECK(registry.Register(std::move(tool)).empty());
  }
  return 0;
}
