#include "server/catalog/catalog.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <unordered_map>
#include <utility>

#include "protocol/bounded_json.h"
#include "protocol/duplicate_keys.h"
#include "protocol/json_parser.h"
#include "protocol/schema_validator.h"
#include "server/catalog/object_reader.h"
#include "server/catalog/surface_catalog.h"
#include "server/catalog/tool_registry.h"

namespace keel {
namespace {

// The bound on all JSON keel did not write (bounded_json.h), deeper than any real catalog
// (schemas nest at most 64 schema levels): inputSchema "default" and "examples" values are
// free JSON, and a tools/list line carries them whole.
constexpr int kMaxCatalogDepth = kMaxJsonDepth;
// The server section's strings (serverInfo's name, title and version; the instructions).
constexpr size_t kMaxServerNameBytes = 256;
constexpr size_t kMaxInstructionsBytes = 16384;

// inputSchema / outputSchema: what ToolRegistry::Register and MCP clients demand.
void CheckObjectSchema(ObjectReader& reader, std::string_view field, bool required) {
  const Json* schema = reader.Find(field);
  if (schema == nullptr) {
    if (required) reader.Problem(field, "is required");
    return;
  }
  if (!schema->is_object()) {
    reader.Problem(field, "must be a JSON Schema object, got " + std::string(schema->type_name()));
    return;
  }
  const auto type = schema->find("type");
  if (type == schema->end() || *type != "object") {
    reader.Problem(field, "needs \"type\": \"object\" at its root");
    return;
  }
  if (auto problem = CheckSchemaWellFormed(*schema)) reader.Problem(field, *problem);
}

bool HasProperty(const Json* schema, const std::string& name) {
  return schema != nullptr && HasInputProperty(*schema, name);
}

// "timeouts": {"idleMs", "maxMs", "attemptMs"?}. Both idle and max are required: a default
// for one could silently contradict the other.
std::optional<TimeoutSettings> ReadTimeouts(ObjectReader& entry) {
  const Json* object = entry.Object("timeouts");
  if (object == nullptr) return std::nullopt;
  ObjectReader reader = entry.Nested(*object, "timeouts");
  const size_t before = reader.problem_count();
  reader.OnlyFields({"idleMs", "maxMs", "attemptMs"});
  const auto idle = reader.Integer("idleMs", 0, kMaxCatalogMs, true);
  const auto max = reader.Integer("maxMs", 1, kMaxCatalogMs, true);
  const auto attempt = reader.Integer("attemptMs", 1, kMaxCatalogMs, false);
  if (idle && max && *idle > *max) {
    reader.Problem("idleMs",
                   std::to_string(*idle) + " must not exceed maxMs (" + std::to_string(*max) + ")");
  }
  if (attempt && max && *attempt > *max) {
    reader.Problem("attemptMs", std::to_string(*attempt) + " must not exceed maxMs (" +
                                    std::to_string(*max) + ")");
  }
  if (reader.problem_count() != before) return std::nullopt;
  TimeoutSettings timeouts;
  timeouts.idle_ms = *idle;
  timeouts.max_ms = *max;
  // One attempt may not outlast the call: the default attempt timeout is clamped to it.
  timeouts.attempt_ms = attempt ? *attempt : std::min(timeouts.attempt_ms, *max);
  return timeouts;
}

// "retry": every field optional, defaults from RetrySettings.
std::optional<RetrySettings> ReadRetry(ObjectReader& entry) {
  const Json* object = entry.Object("retry");
  if (object == nullptr) return std::nullopt;
  ObjectReader reader = entry.Nested(*object, "retry");
  const size_t before = reader.problem_count();
  reader.OnlyFields({"maxAttempts", "baseMs", "capMs", "retryAfterCapMs", "minUsefulAttemptMs"});
  RetrySettings retry;
  if (auto v = reader.Integer("maxAttempts", 1, kMaxRetryAttempts, false)) {
    retry.max_attempts = static_cast<int>(*v);
  }
  const auto base = reader.Integer("baseMs", 1, kMaxCatalogMs, false);
  const auto cap = reader.Integer("capMs", 1, kMaxCatalogMs, false);
  if (base) retry.base_ms = *base;
  if (cap) retry.cap_ms = *cap;
  if (auto v = reader.Integer("retryAfterCapMs", 0, kMaxCatalogMs, false)) {
    retry.retry_after_cap_ms = *v;
  }
  if (auto v = reader.Integer("minUsefulAttemptMs", 0, kMaxCatalogMs, false)) {
    retry.min_useful_attempt_ms = *v;
  }
  if (reader.problem_count() != before) return std::nullopt;
  if (retry.cap_ms < retry.base_ms) {
    reader.Problem("capMs", std::to_string(retry.cap_ms) + (cap ? "" : " (the default)") +
                                " must not be less than baseMs (" + std::to_string(retry.base_ms) +
                                ")");
    return std::nullopt;
  }
  return retry;
}

// "idempotency": {"keyComponents": [argument names]}. `effect` nullopt: not known here (bad,
// or absent from an overlay entry); `check_properties` false: an overlay entry without
// inputSchema, whose components are checked against the upstream's (catalog_overlay.h).
std::vector<std::string> ReadKeyComponents(ObjectReader& entry, std::optional<EffectClass> effect,
                                           bool check_properties) {
  const Json* object = entry.Object("idempotency");
  if (object == nullptr) return {};
  if (effect && !IsWrite(*effect)) {
    entry.Problem("idempotency", "applies to writes only; this tool's effect is " +
                                     std::string(EffectClassName(*effect)));
    return {};
  }
  ObjectReader reader = entry.Nested(*object, "idempotency");
  reader.OnlyFields({"keyComponents"});
  const Json* list = reader.Find("keyComponents");
  if (list == nullptr) {
    reader.Problem("keyComponents", "is required");
    return {};
  }
  if (!list->is_array() || list->empty()) {
    reader.Problem("keyComponents",
                   "must be a non-empty array of argument names (omit \"idempotency\" to key on "
                   "all arguments), got " +
                       Shown(*list));
    return {};
  }
  const Json* input_schema = entry.Find("inputSchema");
  std::vector<std::string> components;
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    const std::string field = "keyComponents[" + std::to_string(i) + "]";
    if (!item.is_string()) {
      reader.Problem(field, "must be a string, got " + Shown(item));
      continue;
    }
    std::string name = item.get<std::string>();
    if (check_properties && !HasProperty(input_schema, name)) {
      reader.Problem(field, Shown(item) + " is not a property of inputSchema");
    } else if (std::find(components.begin(), components.end(), name) != components.end()) {
      reader.Problem(field, Shown(item) + " is listed twice");
    } else {
      components.push_back(std::move(name));
    }
  }
  return components;
}

// The fields of a tool entry. An overlay's add upstreamTakesKey; `run` is known to both, so
// that an overlay's is refused with the reason, not as a typo.
void CheckKnownFields(ObjectReader& reader, bool overlay) {
  if (overlay) {
    reader.OnlyFields({"name", "title", "description", "inputSchema", "outputSchema", "effect",
                       "backend", "timeouts", "retry", "idempotency", "approval", "taskSupport",
                       "resultTtlMs", "upstreamTakesKey", "run"});
  } else {
    reader.OnlyFields({"name", "title", "description", "inputSchema", "outputSchema", "effect",
                       "backend", "timeouts", "retry", "idempotency", "approval", "taskSupport",
                       "resultTtlMs", "run"});
  }
}

// What one mode only has: `run`, for keel's own command tools; "upstreamTakesKey": true |
// false, for an overlay's upstream tools.
void ReadModeFields(ObjectReader& reader, bool overlay, std::optional<EffectClass> effect,
                    CatalogEntry& entry) {
  if (!overlay) {
    entry.run = ReadRunSpec(reader, reader.Find("inputSchema"), effect);
    return;
  }
  if (reader.Find("run") != nullptr) {
    reader.Problem("run",
                   "an overlay entry describes an upstream tool; `run` is for keel's own command "
                   "tools");
  }
  if (const Json* takes = reader.Find("upstreamTakesKey")) {
    if (takes->is_boolean()) {
      entry.upstream_takes_key = takes->get<bool>();
    } else {
      reader.Problem("upstreamTakesKey", "must be true or false, got " + Shown(*takes));
    }
  }
}

std::optional<CatalogEntry> ReadEntry(const Json& item, const std::string& label, CatalogMode mode,
                                      std::vector<std::string>* problems) {
  ObjectReader reader(item, label, problems);
  const size_t before = reader.problem_count();
  // An overlay entry describes a tool of the upstream server, which lists its own
  // description and schemas: it gives only what it changes.
  const bool overlay = mode == CatalogMode::kOverlay;
  CheckKnownFields(reader, overlay);
  CatalogEntry entry;
  if (auto name = reader.String("name", true)) {
    if (!IsValidToolName(*name)) {
      reader.Problem("name", Shown(Json(*name)) + " must match ^[a-zA-Z0-9_-]{1,64}$");
    }
    entry.name = std::move(*name);
  }
  if (auto title = reader.String("title", false)) entry.title = std::move(*title);
  if (auto description = reader.String("description", !overlay)) {
    if (description->empty()) reader.Problem("description", "must not be empty");
    entry.description = std::move(*description);
  }
  CheckObjectSchema(reader, "inputSchema", !overlay);
  const Json* input_schema = reader.Find("inputSchema");
  CheckObjectSchema(reader, "outputSchema", false);
  std::optional<EffectClass> effect;
  if (const Json* value = reader.Find("effect"); value != nullptr && value->is_string()) {
    effect = ParseEffectClass(value->get_ref<const std::string&>());
  }
  if (!effect) {  // Choice reports why (nothing, for an overlay entry without one)
    reader.Choice("effect", {"read", "expensive_read", "idempotent_write", "unsafe_write"},
                  !overlay);
  }
  if (auto backend = reader.String("backend", false)) {
    if (!IsValidToolName(*backend)) {
      reader.Problem("backend", Shown(Json(*backend)) + " must match ^[a-zA-Z0-9_-]{1,64}$");
    }
    entry.backend = std::move(*backend);
  } else if (!overlay) {
    entry.backend = entry.name;  // its own breaker scope
  }
  entry.timeouts = ReadTimeouts(reader);
  entry.retry = ReadRetry(reader);
  entry.key_components = ReadKeyComponents(reader, effect, !overlay || input_schema != nullptr);
  if (auto approval = reader.Choice("approval", {"none", "required"}, false)) {
    entry.approval_required = *approval == 1;
  }
  constexpr TaskSupport kSupports[] = {TaskSupport::kForbidden, TaskSupport::kOptional,
                                       TaskSupport::kRequired};
  if (auto support = reader.Choice("taskSupport", {"forbidden", "optional", "required"}, false)) {
    entry.task_support = kSupports[*support];
    entry.has_task_support = true;
  }
  entry.result_ttl_ms = reader.Integer("resultTtlMs", 1, kMaxCatalogMs, false);
  ReadModeFields(reader, overlay, effect, entry);

  // A write that claims idempotency must be able to recognise a repeat: by the arguments
  // that make its intent, or by a key the caller passes. (An overlay entry without
  // inputSchema is checked against the upstream's.)
  if (effect == EffectClass::kIdempotentWrite && entry.key_components.empty() &&
      reader.Find("idempotency") == nullptr && (!overlay || input_schema != nullptr) &&
      !HasProperty(input_schema, "idempotencyKey")) {
    reader.Problem("idempotency",
                   "an idempotent_write needs idempotency.keyComponents or an \"idempotencyKey\" "
                   "property in inputSchema, else a repeat cannot be recognised");
  }
  if (reader.problem_count() != before) return std::nullopt;
  entry.has_effect = effect.has_value();  // always, in a serve catalog
  if (effect) entry.effect = *effect;
  if (input_schema != nullptr) entry.input_schema = *input_schema;
  if (const Json* output = reader.Find("outputSchema")) entry.output_schema = *output;
  return entry;
}

// "tools[2] (charge_account)" when the name is usable, else "tools[2]".
std::string LabelOf(const Json& item, size_t index) {
  std::string label = "tools[" + std::to_string(index) + "]";
  if (!item.is_object()) return label;
  const auto name = item.find("name");
  if (name != item.end() && name->is_string() &&
      IsValidToolName(name->get_ref<const std::string&>())) {
    label += " (" + name->get<std::string>() + ")";
  }
  return label;
}

// The tools array, in order; duplicates and bad entries are problems.
std::vector<CatalogEntry> ReadTools(const Json& tools, CatalogMode mode,
                                    std::vector<std::string>* problems) {
  std::vector<CatalogEntry> entries;
  std::unordered_map<std::string, size_t> first_index;  // name -> where it first appears
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& item = tools[i];
    const std::string label = LabelOf(item, i);
    if (!item.is_object()) {
      problems->push_back(label + ": must be an object, got " + std::string(item.type_name()));
      continue;
    }
    if (label.find(' ') != std::string::npos) {
      const std::string name = item.at("name").get<std::string>();
      auto [it, inserted] = first_index.emplace(name, i);
      if (!inserted) {
        problems->push_back(label + ".name: \"" + name + "\" is already the name of tools[" +
                            std::to_string(it->second) + "]");
      }
    }
    if (auto entry = ReadEntry(item, label, mode, problems)) entries.push_back(std::move(*entry));
  }
  return entries;
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string ParseMessage(const Json::exception& e) {
  std::string message = e.what();
  const size_t end = message.find("] ");
  return end == std::string::npos ? message : message.substr(end + 2);
}

// The `server` section: each field optional, a non-empty string of bounded length.
ServerIdentity ReadServerIdentity(ObjectReader& top) {
  ServerIdentity identity;
  const Json* section = top.Object("server");
  if (section == nullptr) return identity;
  ObjectReader server = top.Nested(*section, "server");
  server.OnlyFields({"name", "title", "version", "instructions"});
  auto read = [&server](std::string_view field, size_t max_bytes) -> std::optional<std::string> {
    std::optional<std::string> value = server.String(field, false);
    if (!value) return std::nullopt;
    if (value->empty() || value->size() > max_bytes) {
      server.Problem(
          field, "must be a non-empty string of at most " + std::to_string(max_bytes) + " bytes");
      return std::nullopt;
    }
    return value;
  };
  identity.name = read("name", kMaxServerNameBytes);
  identity.title = read("title", kMaxServerNameBytes);
  identity.version = read("version", kMaxServerNameBytes);
  identity.instructions = read("instructions", kMaxInstructionsBytes);
  return identity;
}

}  // namespace

bool HasInputProperty(const Json& schema, const std::string& name) {
  if (!schema.is_object()) return false;
  const auto properties = schema.find("properties");
  return properties != schema.end() && properties->is_object() && properties->contains(name);
}

CatalogLoad LoadCatalog(std::string_view json_text) {
  return LoadCatalog(json_text, CatalogMode::kServe);
}

CatalogLoad LoadCatalog(std::string_view json_text, CatalogMode mode) {
  CatalogLoad load;
  std::vector<std::string>& problems = load.problems;
  // Before parsing: a value nested thousands deep parses fine (nlohmann's parser does not
  // recurse) but overflows the stack of whatever copies or dumps it next: the problem message
  // quoting it, or the entry's copy and tools/list. tests/fuzz/regressions/catalog/ has two.
  if (const int depth = JsonNestingDepth(json_text); depth > kMaxCatalogDepth) {
    problems.push_back("catalog: nests " + std::to_string(depth) + " levels deep; at most " +
                       std::to_string(kMaxCatalogDepth) + " are allowed");
    return load;
  }
  Json root;
  DuplicateKeyFinder duplicates;  // JSON keeps the last of two equal keys: refuse the file
  try {
    root = Json::parse(json_text, std::ref(duplicates));
  } catch (const Json::exception& e) {
    problems.push_back("catalog: not valid JSON: " + ParseMessage(e));
    return load;
  }
  for (std::string& problem : duplicates.TakeProblems()) problems.push_back(std::move(problem));
  if (!root.is_object()) {
    problems.push_back("catalog: must be an object {\"tools\": [...], ...}, got " +
                       std::string(root.type_name()));
    return load;
  }
  ObjectReader top(root, "catalog", &problems);
  top.OnlyFields({"server", "tools", "resources", "resourceTemplates", "prompts"});
  ServerIdentity server = ReadServerIdentity(top);
  static const Json kNone = Json::array();
  const Json* sections[4] = {};
  bool serves_something = false;
  size_t index = 0;
  for (std::string_view field : {"tools", "resources", "resourceTemplates", "prompts"}) {
    const Json* list = top.Find(field);
    if (list != nullptr && !list->is_array()) {
      top.Problem(field, "must be an array, got " + Shown(*list));
      list = nullptr;
    }
    serves_something = serves_something || (list != nullptr && !list->empty());
    sections[index++] = list == nullptr ? &kNone : list;
  }
  if (!serves_something) {
    problems.push_back(
        "catalog: serves nothing: at least one of tools, resources, resourceTemplates and "
        "prompts must be a non-empty array");
    return load;
  }
  Catalog catalog;
  catalog.server = std::move(server);
  catalog.tools = ReadTools(*sections[0], mode, &problems);
  catalog.resources = ReadResources(*sections[1], &problems);
  catalog.resource_templates = ReadResourceTemplates(*sections[2], &problems);
  catalog.prompts = ReadPrompts(*sections[3], catalog.resources, &problems);
  if (problems.empty()) load.catalog = std::move(catalog);
  return load;
}

}  // namespace keel
