// Catalog: the tools keel serves and the policy each one runs under (`--catalog FILE`;
// RET-1, RET-3), and the resources, resource templates and prompts it serves besides
// (surface_entries.h), as loaded from JSON. docs/catalog.md is the reference for the file; this
// header is the reference for the loaded value.
//
// LoadCatalog is a pure function (no I/O, no shared state; reentrant). It never throws: a
// bad file yields every problem found, each naming the tool and the field's JSON path, e.g.
//   tools[2] (charge_account).effect: "write" is not one of read, expensive_read, ...
// A tool whose name is missing or bad is named by index only ("tools[2].name: ...").
//
// Invariants of a loaded Catalog (LoadCatalog returns one only if all hold):
//  0. at least one of tools, resources, resource_templates and prompts is non-empty (a file
//     may serve prompts and resources only); the surface entries hold surface_entries.h's
//     invariants;
//  1. names are unique and match ^[a-zA-Z0-9_-]{1,64}$; backends match the same pattern;
//  2. input_schema (and output_schema unless null) is an object with "type": "object" that
//     passes CheckSchemaWellFormed, so ToolRegistry::Register accepts SpecFor(entry);
//  3. every key component names a property of input_schema; key components only on writes;
//  4. an idempotent_write has key components or an "idempotencyKey" input property;
//  5. timeouts: 0 <= idle_ms <= max_ms, 0 < attempt_ms <= max_ms;
//     retry: 1 <= max_attempts <= 10, 0 < base_ms <= cap_ms; every duration <= kMaxCatalogMs;
//  6. result_ttl_ms, when set, is positive;
//  7. run, when set, holds command_spec.h's invariants.
// Unknown fields are errors at every level except inside inputSchema and outputSchema.
//
// An overlay (CatalogMode::kOverlay: `keel wrap --catalog FILE`, catalog_overlay.h) names
// the upstream server's tools and replaces only what it gives, so there:
//  - description, inputSchema and effect may be absent (then description is empty,
//    input_schema null, has_effect false); an absent backend stays empty;
//  - invariant 2 holds for the schemas given; invariants 3 and 4 are checked as far as the
//    entry can tell: key components against inputSchema only when it is given, "only on
//    writes" only when effect is given, 4 only when both are. The rest is checked against
//    the upstream tool by CheckOverlayAgainstUpstream;
//  - run is refused (it is for keel's own command tools); upstreamTakesKey is accepted (and
//    only there: a serve catalog refuses it as an unknown field).
// Resources, resource templates and prompts read the same in both modes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/catalog/command_spec.h"
#include "server/catalog/server_identity.h"
#include "server/catalog/surface_entries.h"
#include "server/catalog/tool.h"
#include "server/policy/policy_types.h"

namespace keel {

// One year: no sensible timeout or TTL is longer, and the pipeline can add and double such
// values without overflowing int64.
constexpr int64_t kMaxCatalogMs = 365LL * 24 * 3600 * 1000;
// A retry storm is a bigger risk than a give-up; more attempts than this is a typo.
constexpr int kMaxRetryAttempts = 10;

// Which catalog a file is: the tools keel serves itself, or an overlay on a wrapped
// upstream server's tools.
enum class CatalogMode { kServe, kOverlay };

struct CatalogEntry {
  std::string name;
  std::string title;                        // empty: none (hosts show the name)
  std::string description;                  // empty: none given (overlay only)
  Json input_schema;                        // null: none given (overlay only)
  Json output_schema;                       // null: none
  EffectClass effect = EffectClass::kRead;  // meaningful only when has_effect
  // Always true in a serve catalog; in an overlay, whether the entry gives an effect (else
  // the upstream's annotations decide it).
  bool has_effect = true;
  // The breaker's and retry budget's scope; defaults to the tool's name (in an overlay:
  // empty, the upstream spec's backend is kept).
  std::string backend;
  std::optional<TimeoutSettings> timeouts;  // nullopt: the server's flags decide
  std::optional<RetrySettings> retry;       // nullopt: the server's default for the effect
  // Argument names whose values make the idempotency key's intent (e.g. account, cents);
  // empty: all arguments.
  std::vector<std::string> key_components;
  bool approval_required = false;
  TaskSupport task_support = TaskSupport::kForbidden;
  bool has_task_support = false;         // whether the file gives taskSupport (else the default)
  std::optional<int64_t> result_ttl_ms;  // nullopt: the server's default
  // Overlay only (ToolSpec::upstream_takes_key): keel passes the call's idempotency key on
  // to the upstream tool instead of keeping it to itself.
  bool upstream_takes_key = false;
  // A command-backed tool (docs/catalog.md): keel runs this command for each call instead
  // of one of its own implementations.
  std::optional<CommandSpec> run;
};

struct Catalog {
  ServerIdentity server;                                  // the `server` section
  std::vector<CatalogEntry> tools;                        // in file order (the tools/list order)
  std::vector<ResourceEntry> resources;                   // the resources/list order
  std::vector<ResourceTemplateEntry> resource_templates;  // resources/templates/list order
  std::vector<PromptEntry> prompts;                       // the prompts/list order
};

// Exactly one of the two is set: a catalog, or at least one problem.
struct CatalogLoad {
  std::optional<Catalog> catalog;
  std::vector<std::string> problems;
  // Worth telling the operator, not worth refusing the file (LoadCatalogFile: a directory
  // mount whose root does not exist yet). Printed with the problems, either way.
  std::vector<std::string> warnings;
  // The file itself could not be read (missing, a directory, no permission): keel exits 66
  // (EX_NOINPUT) for that, 78 for a file it read and refused.
  bool unreadable = false;
  bool ok() const { return catalog.has_value(); }
};

// LoadCatalog(text) is LoadCatalog(text, CatalogMode::kServe).
CatalogLoad LoadCatalog(std::string_view json_text);
CatalogLoad LoadCatalog(std::string_view json_text, CatalogMode mode);

// Whether `schema` (an object schema) declares `name` among its "properties": what key
// components and the idempotencyKey argument are checked against.
bool HasInputProperty(const Json& schema, const std::string& name);

}  // namespace keel
