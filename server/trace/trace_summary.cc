#include "server/trace/trace_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

}  // namespace

std::string SummarizeTrace(std::istream& lines) {
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  std::map<std::string, CallFacts> calls;
  size_t skipped = 0;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    // A trace file may come from anywhere: read with the bound on nesting (bounded_json.h).
    const Json record = ParseBoundedJson(line).value;
    if (!record.is_object() || !record.contains("event") || !record["event"].is_string() ||
        !record.contains("attributes") || !record["attributes"].is_object()) {
      ++skipped;
      continue;
    }
    const std::string event = record["event"].get<std::string>();
    const Json& attributes = record["attributes"];
    const std::string call_id = Text(attributes, "keel.call.id", "");
    if (event == "tool.attempt.start") {
      ++calls[call_id].attempts;
    } else if (event == "tool.attempt.end") {
      const std::string op = Text(attributes, "keel.backend.operation.id", "");
      if (!op.empty()) calls[call_id].operations.insert(op);
    } else if (event == "breaker.rejected") {
      ++calls[call_id].breaker_rejects;
    } else if (event == "timeout.fired") {
      calls[call_id].timed_out = true;
    } else if (event == "tool.call.end") {
      const std::string tool = Text(attributes, "gen_ai.tool.name", "-");
      const std::string backend = Text(attributes, "keel.backend", "-");
      const std::string outcome = Text(attributes, "outcome", "-");
      Group& group = groups[{tool, backend, outcome}];
      const CallFacts facts = calls[call_id];
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
      calls.erase(call_id);
    }
  }
  std::string out;
  char row[512];
  std::snprintf(row, sizeof(row), "%-28s %-14s %-10s %6s %7s %7s %8s %8s %8s %8s %8s %9s\n", "tool",
                "backend", "outcome", "calls", "intents", "retries", "timeouts", "breaker",
                "p50_ms", "p95_ms", "backend", "calls/");
  out += row;
  std::snprintf(row, sizeof(row), "%-28s %-14s %-10s %6s %7s %7s %8s %8s %8s %8s %8s %9s\n", "", "",
                "", "", "", "", "", "rejects", "", "", "ops", "intent");
  out += row;
  for (auto& [key, group] : groups) {
    std::sort(group.durations_ms.begin(), group.durations_ms.end());
    const auto& [tool, backend, outcome] = key;
    std::snprintf(
        row, sizeof(row), "%-28s %-14s %-10s %6zu %7zu %7zu %8zu %8zu %8.1f %8.1f %8zu %9.2f\n",
        tool.c_str(), backend.c_str(), outcome.c_str(), group.calls, group.intents.size(),
        group.retries, group.timeouts, group.breaker_rejects, Percentile(group.durations_ms, 0.50),
        Percentile(group.durations_ms, 0.95), group.operations.size(),
        group.intents.empty()
            ? 0.0
            : static_cast<double>(group.calls) / static_cast<double>(group.intents.size()));
    out += row;
  }
  if (groups.empty()) out += "(no finished calls in the trace)\n";
  if (skipped > 0)
    out += std::to_string(skipped) + " line(s) were not trace records and were skipped\n";
  return out;
}

}  // namespace keel
