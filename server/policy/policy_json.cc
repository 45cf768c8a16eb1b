#include "server/policy/policy_json.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>

#include "protocol/bounded_json.h"
#include "protocol/duplicate_keys.h"
#include "protocol/json_parser.h"
#include "protocol/tool_name.h"
#include "server/policy/policy_validation.h"

namespace keel {
namespace {

using nlohmann::json;

constexpr size_t kMaxVersionBytes = 128;  // it is printed in traces and `policy show`
constexpr int kMaxAttempts = 10;          // RET-2: a few retries, not a retry storm
constexpr int kMaxMinimumCalls = 100000;
constexpr int kMaxHalfOpenProbes = 100;
constexpr double kMaxBurst = 1e6;
// A valid policy nests 4 levels (tools.<name>.retry.<field>); this leaves room for mistakes
// worth reporting field by field, and bounds the duplicate-key finder's paths (each frame
// holds its path) and the recursion of dumping a value into a message. Tighter than the bound
// on all JSON keel did not write (bounded_json.h), never looser.
constexpr int kMaxPolicyDepth = 16;
static_assert(kMaxPolicyDepth <= kMaxJsonDepth);

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// "string \"3\"": the type, and the value cut short so one bad field cannot flood the report.
std::string Describe(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + text;
}

// Reads the fields of one JSON object at `path`. Each field is taken at most once; a value
// of the wrong type or out of range is reported and not stored, so `out` keeps its previous
// (default or inherited) value. ReportUnknown() names every field nobody took.
class FieldReader {
 public:
  FieldReader(const json& object, std::string path, std::vector<std::string>& problems)
      : object_(object), path_(std::move(path)), problems_(problems) {}

  const json* Take(std::string_view key) {
    const auto it = object_.find(key);
    if (it == object_.end()) return nullptr;
    taken_.insert(std::string(key));
    return &*it;
  }

  void Problem(std::string_view key, const std::string& what) {
    problems_.push_back(Join(path_, key) + ": " + what);
  }

  template <typename I>
  void Int(std::string_view key, I& out, int64_t min, int64_t max) {
    const json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_number_integer())
      return Problem(key, "must be an integer, got " + Describe(*value));
    const bool too_big =
        value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(max);
    if (too_big || value->get<int64_t>() < min || value->get<int64_t>() > max) {
      return Problem(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                              ", got " + value->dump());
    }
    out = static_cast<I>(value->get<int64_t>());
  }

  // A number in (min, max] when `min_open`, else in [min, max].
  void Number(std::string_view key, double& out, double min, bool min_open, double max) {
    const json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_number()) return Problem(key, "must be a number, got " + Describe(*value));
    const double number = value->get<double>();
    const bool low = min_open ? number <= min : number < min;
    if (low || number > max || !std::isfinite(number)) {
      json lo = min, hi = max;
      return Problem(key, std::string("must be ") + (min_open ? "greater than " : "at least ") +
                              lo.dump() + " and at most " + hi.dump() + ", got " + value->dump());
    }
    out = number;
  }

  void Bool(std::string_view key, bool& out) {
    const json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_boolean()) return Problem(key, "must be true or false, got " + Describe(*value));
    out = value->get<bool>();
  }

  // A string naming one value of an enum: `parse` maps a name to it, `names` lists every
  // name for the message.
  template <typename E, typename Parse>
  void Choice(std::string_view key, E& out, Parse parse, std::string_view names) {
    const json* value = Take(key);
    if (value == nullptr) return;
    const std::optional<E> parsed =
        value->is_string() ? parse(value->get_ref<const std::string&>()) : std::nullopt;
    if (!parsed) {
      return Problem(key, "must be one of " + std::string(names) + ", got " + Describe(*value));
    }
    out = *parsed;
  }

  // Calls read(FieldReader&) on the object at `key`, if present and an object.
  template <typename Read>
  void Section(std::string_view key, Read read) {
    const json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_object()) return Problem(key, "must be an object, got " + Describe(*value));
    FieldReader section(*value, Join(path_, key), problems_);
    read(section);
    section.ReportUnknown();
  }

  const json& object() const { return object_; }

  void ReportUnknown() {
    for (const auto& [key, value] : object_.items()) {
      if (taken_.count(key) == 0) problems_.push_back(Join(path_, key) + ": unknown field");
    }
  }

 private:
  const json& object_;
  const std::string path_;
  std::vector<std::string>& problems_;
  std::set<std::string> taken_;
};

std::string_view NameOf(BreakerMode mode) { return BreakerModeName(mode); }

// Writes fields into a JSON object: the same visits as FieldReader, the other way.
class FieldWriter {
 public:
  explicit FieldWriter(json& out) : out_(out) {}
  template <typename I>
  void Int(std::string_view key, const I& value, int64_t, int64_t) {
    out_[std::string(key)] = value;
  }
  void Number(std::string_view key, const double& value, double, bool, double) {
    out_[std::string(key)] = value;
  }
  void Bool(std::string_view key, const bool& value) { out_[std::string(key)] = value; }
  template <typename E, typename Parse>
  void Choice(std::string_view key, const E& value, Parse, std::string_view) {
    out_[std::string(key)] = std::string(NameOf(value));
  }
  template <typename Write>
  void Section(std::string_view key, Write write) {
    json section = json::object();
    FieldWriter writer(section);
    write(writer);
    out_[std::string(key)] = std::move(section);
  }

 private:
  json& out_;
};

// One list of fields, names and ranges for both directions. S is a settings struct or a
// const one; V is FieldReader or FieldWriter.
template <typename S, typename V>
void VisitTimeouts(S& t, V& v) {
  v.Int("idle_ms", t.idle_ms, 0, kMaxPolicyDurationMs);
  v.Int("max_ms", t.max_ms, 1, kMaxPolicyDurationMs);
  v.Int("attempt_ms", t.attempt_ms, 1, kMaxPolicyDurationMs);
}

template <typename S, typename V>
void VisitRetry(S& r, V& v) {
  v.Int("max_attempts", r.max_attempts, 1, kMaxAttempts);
  v.Int("base_ms", r.base_ms, 1, kMaxPolicyDurationMs);
  v.Int("cap_ms", r.cap_ms, 1, kMaxPolicyDurationMs);
  v.Int("retry_after_cap_ms", r.retry_after_cap_ms, 0, kMaxPolicyDurationMs);
  v.Int("min_useful_attempt_ms", r.min_useful_attempt_ms, 1, kMaxPolicyDurationMs);
}

template <typename S, typename V>
void VisitBreaker(S& b, V& v) {
  v.Int("window_ms", b.window_ms, 1, kMaxBreakerWindowMs);
  v.Int("minimum_calls", b.minimum_calls, 1, kMaxMinimumCalls);
  v.Int("failure_rate_percent", b.failure_rate_percent, 1, 100);
  v.Int("slow_rate_percent", b.slow_rate_percent, 1, 100);
  v.Int("slow_call_ms", b.slow_call_ms, 1, kMaxPolicyDurationMs);
  v.Int("open_ms", b.open_ms, 1, kMaxPolicyDurationMs);
  v.Int("half_open_probes", b.half_open_probes, 1, kMaxHalfOpenProbes);
  v.Int("half_open_max_wait_ms", b.half_open_max_wait_ms, 1, kMaxPolicyDurationMs);
  v.Int("max_open_ms", b.max_open_ms, 1, kMaxPolicyDurationMs);
  v.Int("probe_timeout_ms", b.probe_timeout_ms, 1, kMaxPolicyDurationMs);
  v.Choice("mode", b.mode, ParseBreakerMode,
           R"("normal", "forced_open", "disabled", "metrics_only")");
}

template <typename S, typename V>
void VisitToolPolicy(S& p, V& v) {
  v.Section("timeouts", [&](V& section) { VisitTimeouts(p.timeouts, section); });
  v.Section("retry", [&](V& section) { VisitRetry(p.retry, section); });
  v.Section("breaker", [&](V& section) { VisitBreaker(p.breaker, section); });
  v.Bool("shadow", p.shadow);
}

template <typename S, typename V>
void VisitRetryBudget(S& b, V& v) {
  v.Number("ratio", b.ratio, 0, /*min_open=*/true, 1);
  v.Number("burst", b.burst, 1, /*min_open=*/false, kMaxBurst);
}

std::string NameProblem(std::string_view kind) {
  return std::string(kind) + " name must match ^[a-zA-Z0-9_-]{1,64}$";
}

// The policy document, or nullopt with the reason reported: too big, nested too deep, not
// JSON, or not an object. Keys given twice in one object are reported; the document is kept.
std::optional<json> ParseDocument(std::string_view json_text, std::vector<std::string>& problems) {
  if (json_text.size() > kMaxPolicyBytes) {
    problems.push_back("policy is " + std::to_string(json_text.size()) + " bytes; at most " +
                       std::to_string(kMaxPolicyBytes) + " are read");
    return std::nullopt;
  }
  // Before parsing: DuplicateKeyFinder keeps the path of every open array and object, so its
  // memory grows with the square of the depth (8000 nested "[" took 64 MB and 2 s; a 1 MiB
  // file of them would need 250 GB), and dumping a deep value into a message recurses.
  // tests/fuzz/regressions/policy/ has one.
  if (const int depth = JsonNestingDepth(json_text); depth > kMaxPolicyDepth) {
    problems.push_back("policy nests " + std::to_string(depth) + " levels deep; at most " +
                       std::to_string(kMaxPolicyDepth) + " are allowed");
    return std::nullopt;
  }
  json document;
  // Keys repeated within one object, by path. nlohmann keeps the last silently; an operator
  // who wrote a field twice meant one of them, and we cannot tell which.
  DuplicateKeyFinder duplicates;
  try {
    document = json::parse(json_text, std::ref(duplicates));
  } catch (const json::exception& error) {
    // Every nlohmann exception, not only parse_error: a number too large for a double
    // ("ratio": 1e400) is out_of_range.406, which used to escape and terminate keel (found by
    // fuzz_policy; tests/fuzz/regressions/policy/number_overflow_uncaught.json).
    // what() is "[json.exception.parse_error.101] parse error at line 3, column 7: ...".
    std::string message = error.what();
    if (const size_t end = message.find("] "); end != std::string::npos) message.erase(0, end + 2);
    problems.push_back(message);
    return std::nullopt;
  }
  for (std::string& problem : duplicates.TakeProblems()) problems.push_back(std::move(problem));
  if (!document.is_object()) {
    problems.push_back("policy must be a JSON object, got " + Describe(document));
    return std::nullopt;
  }
  return document;
}

// Which parts of the policy were read as written: the cross-field rules look at those only.
struct ReadAsWritten {
  bool version = true;  // false: its problem is reported, the validator must not repeat it
  bool defaults = true;
  std::set<std::string> invalid_tools;
};

void ReadVersion(FieldReader& root, Policy& policy, ReadAsWritten& read) {
  const json* version = root.Take("version");
  if (version == nullptr) return;
  if (!version->is_string()) {
    root.Problem("version", "must be a string, got " + Describe(*version));
    read.version = false;
  } else if (version->get_ref<const std::string&>().size() > kMaxVersionBytes) {
    root.Problem("version", "must be at most " + std::to_string(kMaxVersionBytes) + " bytes");
    read.version = false;
  } else {
    policy.version = version->get<std::string>();
  }
}

// "tools": each merges over the defaults, so those must be read first.
void ReadTools(FieldReader& root, Policy& policy, std::vector<std::string>& problems,
               ReadAsWritten& read) {
  root.Section("tools", [&](FieldReader& tools) {
    for (const auto& [name, value] : tools.object().items()) {
      const size_t before = problems.size();
      if (!IsValidToolName(name)) tools.Problem(name, NameProblem("tool"));
      ToolPolicy tool = policy.defaults;
      tools.Section(name, [&](FieldReader& r) { VisitToolPolicy(tool, r); });
      if (problems.size() != before) read.invalid_tools.insert(name);
      policy.tools.emplace(name, tool);
    }
  });
}

void ReadBackends(FieldReader& root, Policy& policy) {
  root.Section("backends", [&](FieldReader& backends) {
    for (const auto& [name, value] : backends.object().items()) {
      if (!IsValidToolName(name)) backends.Problem(name, NameProblem("backend"));
      RetryBudgetSettings budget = policy.retry_budget;
      backends.Section(name, [&](FieldReader& backend) {
        backend.Section("retry_budget", [&](FieldReader& r) { VisitRetryBudget(budget, r); });
      });
      policy.backend_retry_budgets.emplace(name, budget);
    }
  });
}

// Cross-field rules, only over values that were read as written.
void CheckAcrossFields(Policy checked, const ReadAsWritten& read,
                       std::vector<std::string>& problems) {
  if (!read.version) checked.version = "reported above";
  if (!read.defaults) {
    checked.defaults = ToolPolicy{};
    checked.tools.clear();
  }
  for (const std::string& name : read.invalid_tools) checked.tools.erase(name);
  for (std::string& problem : ValidatePolicy(checked)) problems.push_back(std::move(problem));
}

}  // namespace

PolicyParseResult ParsePolicy(std::string_view json_text) {
  PolicyParseResult result;
  std::vector<std::string>& problems = result.problems;
  const std::optional<json> document = ParseDocument(json_text, problems);
  if (!document) return result;

  Policy policy;
  ReadAsWritten read;
  FieldReader root(*document, "", problems);
  ReadVersion(root, policy, read);
  // The defaults first, whatever the order in the file: tools merge over them.
  const size_t before = problems.size();
  root.Section("defaults", [&](FieldReader& r) { VisitToolPolicy(policy.defaults, r); });
  read.defaults = problems.size() == before;
  root.Section("retry_budget", [&](FieldReader& r) { VisitRetryBudget(policy.retry_budget, r); });
  ReadTools(root, policy, problems, read);
  ReadBackends(root, policy);
  root.ReportUnknown();
  CheckAcrossFields(policy, read, problems);

  if (problems.empty()) result.policy = std::move(policy);
  return result;
}

json PolicyToJson(const Policy& policy) {
  json out = json::object();
  out["version"] = policy.version;
  FieldWriter root(out);
  root.Section("defaults", [&](FieldWriter& w) { VisitToolPolicy(policy.defaults, w); });
  root.Section("tools", [&](FieldWriter& tools) {
    // Not a structured binding: clang 14 (the fuzz build's compiler) cannot capture one.
    for (const auto& entry : policy.tools) {
      const ToolPolicy& tool = entry.second;
      tools.Section(entry.first, [&](FieldWriter& w) { VisitToolPolicy(tool, w); });
    }
  });
  root.Section("retry_budget", [&](FieldWriter& w) { VisitRetryBudget(policy.retry_budget, w); });
  root.Section("backends", [&](FieldWriter& backends) {
    for (const auto& entry : policy.backend_retry_budgets) {
      const RetryBudgetSettings& budget = entry.second;
      backends.Section(entry.first, [&](FieldWriter& backend) {
        backend.Section("retry_budget", [&](FieldWriter& w) { VisitRetryBudget(budget, w); });
      });
    }
  });
  return out;
}

}  // namespace keel
