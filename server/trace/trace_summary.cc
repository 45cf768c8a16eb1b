#include "server/trace/trace_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/bounded_json.h"

namespace keel {
namespace {

using Json = nlohmann::json;

struct Group {
  size_t calls = 0;
  std::set<std::string> intents;
  size_t retries = 0;
  size_t timeouts = 0;
  size_t breaker_rejects = 0;
  size_t attempts = 0;
  std::set<std::string> operations;  // distinct backend operation ids
  std::vector<double> durations_ms;
};

// Per call id: how many attempts it made and whether a timeout fired (known before its end).
struct CallFacts {
  size_t attempts = 0;
  size_t breaker_rejects = 0;
  bool timed_out = false;
  std::set<std::string> operations;
};

std::string Text(const Json& attributes, const char* key, const char* fallback) {
  const auto it = attributes.find(key);
  return it != attributes.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

// What the summary adds up, line by line.
class Summary {
 public:
  void Line(const std::string& line) {
    if (line.empty()) return;
    // A trace file may come from anywhere: read with the bound on nesting (bounded_json.h).
    const Json record = ParseBoundedJson(line).value;
    if (record.is_object() && record.contains("resourceSpans")) {
      if (!OtlpLine(record)) ++skipped_;
      return;
    }
    if (!record.is_object() || !record.contains("event") || !record["event"].is_string() ||
        !record.contains("attributes") || !record["attributes"].is_object()) {
      ++skipped_;
      return;
    }
    Record(record["event"].get<std::string>(), record["attributes"]);
  }

  std::map<std::tuple<std::string, std::string, std::string>, Group>& groups() {
    for (auto& [key, group] : groups_)
      std::sort(group.durations_ms.begin(), group.durations_ms.end());
    return groups_;
  }
  size_t skipped() const { return skipped_; }

 private:
  void Record(const std::string& event, const Json& attributes) {
    const std::string call_id = Text(attributes, "keel.call.id", "");
    if (event == "tool.attempt.start") {
      ++calls_[call_id].attempts;
    } else if (event == "tool.attempt.end") {
      const std::string op = Text(attributes, "keel.backend.operation.id", "");
      if (!op.empty()) calls_[call_id].operations.insert(op);
    } else if (event == "breaker.rejected") {
      ++calls_[call_id].breaker_rejects;
    } else if (event == "timeout.fired") {
      calls_[call_id].timed_out = true;
    } else if (event == "tool.call.end") {
      const std::string tool = Text(attributes, "gen_ai.tool.name", "-");
      const std::string backend = Text(attributes, "keel.backend", "-");
      const std::string outcome = Text(attributes, "outcome", "-");
      Group& group = groups_[{tool, backend, outcome}];
      const CallFacts facts = calls_[call_id];
      ++group.calls;
      group.intents.insert(Text(attributes, "keel.intent.id", call_id.c_str()));
      group.attempts += facts.attempts;
      group.retries += facts.attempts > 1 ? facts.attempts - 1 : 0;
      group.timeouts += facts.timed_out ? 1 : 0;
      group.breaker_rejects += facts.breaker_rejects;
      group.operations.insert(facts.operations.begin(), facts.operations.end());
      const auto duration = attributes.find("duration_ms");
      if (duration != attributes.end() && duration->is_number()) {
        group.durations_ms.push_back(duration->get<double>());
      }
      calls_.erase(call_id);
    }
  }

  // An OTLP span line (--trace-format otlp): its attempt spans and call spans read as the
  // records they were made of (OtlpSpanBuilder), with the record attribute names.
  bool OtlpLine(const Json& request) {
    bool any = false;
    for (const Json& resource : Array(request, "resourceSpans")) {
      for (const Json& scope : Array(resource, "scopeSpans")) {
        for (const Json& span : Array(scope, "spans")) any = OtlpSpanRecords(span) || any;
      }
    }
    return any;
  }

  bool OtlpSpanRecords(const Json& span) {
    if (!span.is_object()) return false;
    Json attributes = FlatAttributes(span);
    if (!attributes.contains("keel.call.id")) return false;
    for (const auto& [from, to] :
         {std::pair{"keel.outcome", "outcome"}, std::pair{"keel.duration_ms", "duration_ms"}}) {
      if (attributes.contains(from)) attributes[to] = attributes[from];
    }
    for (const Json& event : Array(span, "events")) {
      const std::string name = event.is_object() ? Text(event, "name", "") : "";
      if (name.rfind("keel.", 0) == 0) Record(name.substr(5), attributes);
    }
    const int kind = span.value("kind", 0);
    if (kind == 1) {  // an attempt
      Record("tool.attempt.start", attributes);
      Record("tool.attempt.end", attributes);
    } else if (kind == 2) {
      Record("tool.call.end", attributes);
    }
    return true;
  }

  static const Json& Array(const Json& object, const char* key) {
    static const Json empty = Json::array();
    if (!object.is_object()) return empty;
    const auto it = object.find(key);
    return it != object.end() && it->is_array() ? *it : empty;
  }

  // OTLP KeyValue attributes as a flat object (scalars only; what the summary reads).
  static Json FlatAttributes(const Json& span) {
    Json flat = Json::object();
    for (const Json& kv : Array(span, "attributes")) {
      if (!kv.is_object() || !kv.contains("key") || !kv["key"].is_string()) continue;
      const Json value = kv.value("value", Json::object());
      if (!value.is_object()) continue;
      const std::string key = kv["key"].get<std::string>();
      if (value.contains("stringValue")) {
        flat[key] = value["stringValue"];
      } else if (value.contains("doubleValue")) {
        flat[key] = value["doubleValue"];
      } else if (value.contains("intValue") && value["intValue"].is_string()) {
        flat[key] = std::strtod(value["intValue"].get<std::string>().c_str(), nullptr);
      } else if (value.contains("boolValue")) {
        flat[key] = value["boolValue"];
      }
    }
    return flat;
  }

  std::map<std::tuple<std::string, std::string, std::string>, Group> groups_;
  std::map<std::string, CallFacts> calls_;
  size_t skipped_ = 0;
};

double CallsPerIntent(const Group& group) {
  return group.intents.empty()
             ? 0.0
             : static_cast<double>(group.calls) / static_cast<double>(group.intents.size());
}

Summary Read(std::istream& lines) {
  Summary summary;
  std::string line;
  while (std::getline(lines, line)) summary.Line(line);
  return summary;
}

}  // namespace

std::string SummarizeTrace(std::istream& lines) {
  Summary summary = Read(lines);
  const auto& groups = summary.groups();
  std::string out;
  char row[512];
  std::snprintf(row, sizeof(row), "%-28s %-14s %-10s %6s %7s %7s %8s %8s %8s %8s %8s %9s\n", "tool",
                "backend", "outcome", "calls", "intents", "retries", "timeouts", "breaker",
                "p50_ms", "p95_ms", "backend", "calls/");
  out += row;
  std::snprintf(row, sizeof(row), "%-28s %-14s %-10s %6s %7s %7s %8s %8s %8s %8s %8s %9s\n", "", "",
                "", "", "", "", "", "rejects", "", "", "ops", "intent");
  out += row;
  for (const auto& [key, group] : groups) {
    const auto& [tool, backend, outcome] = key;
    std::snprintf(
        row, sizeof(row), "%-28s %-14s %-10s %6zu %7zu %7zu %8zu %8zu %8.1f %8.1f %8zu %9.2f\n",
        tool.c_str(), backend.c_str(), outcome.c_str(), group.calls, group.intents.size(),
        group.retries, group.timeouts, group.breaker_rejects, Percentile(group.durations_ms, 0.50),
        Percentile(group.durations_ms, 0.95), group.operations.size(), CallsPerIntent(group));
    out += row;
  }
  if (groups.empty()) out += "(no finished calls in the trace)\n";
  if (summary.skipped() > 0) {
    out += std::to_string(summary.skipped()) + " line(s) were not trace records and were skipped\n";
  }
  return out;
}

Json SummarizeTraceJson(std::istream& lines) {
  Summary summary = Read(lines);
  Json groups = Json::array();
  for (const auto& [key, group] : summary.groups()) {
    const auto& [tool, backend, outcome] = key;
    groups.push_back(Json{{"tool", tool},
                          {"backend", backend},
                          {"outcome", outcome},
                          {"calls", group.calls},
                          {"intents", group.intents.size()},
                          {"retries", group.retries},
                          {"timeouts", group.timeouts},
                          {"breaker_rejects", group.breaker_rejects},
                          {"p50_ms", Percentile(group.durations_ms, 0.50)},
                          {"p95_ms", Percentile(group.durations_ms, 0.95)},
                          {"backend_operations", group.operations.size()},
                          {"calls_per_intent", CallsPerIntent(group)}});
  }
  return Json{{"groups", std::move(groups)}, {"skipped_lines", summary.skipped()}};
}

}  // namespace keel
