#include "server/trace/trace_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "protocol/bounded_json.h"

namespace keel {
namespace {

using Json = nlohmann::json;

std::string AttrText(const Json& attributes, const char* key) {
  const auto it = attributes.find(key);
  if (it == attributes.end()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number() || it->is_boolean()) return it->dump();
  return std::string();
}

double AttrNumber(const Json& attributes, const char* key, double fallback) {
  const auto it = attributes.find(key);
  return it != attributes.end() && it->is_number() ? it->get<double>() : fallback;
}

bool AttrFlag(const Json& attributes, const char* key) {
  const auto it = attributes.find(key);
  return it != attributes.end() && it->is_boolean() && it->get<bool>();
}

// Attempt numbers beyond this are folded into one scratch attempt: a real call makes a
// handful, and a hostile file must not make the per-call lookup quadratic.
constexpr size_t kMaxAttemptsPerCall = 1000;

// Times past this (the year 5138) are treated as unknown: the report multiplies and
// subtracts them, and a hostile file must not overflow that arithmetic.
constexpr int64_t kLatestUnixMs = 100'000'000'000'000;

int64_t RecordTime(const Json& record) {
  const auto it = record.find("ts_unix_ms");
  if (it == record.end() || !it->is_number_integer()) return -1;
  const int64_t ms = it->get<int64_t>();
  return ms >= 0 && ms <= kLatestUnixMs ? ms : -1;
}

class ModelReader {
 public:
  void Read(const Json& record) {
    const std::string& event = record["event"].get_ref<const std::string&>();
    const Json& a = record["attributes"];
    const int64_t at = RecordTime(record);
    if (at >= 0) {
      model_.first_ms = model_.first_ms < 0 ? at : std::min(model_.first_ms, at);
      model_.last_ms = std::max(model_.last_ms, at);
    }
    if (event == "cancel.received") return Cancel(a, at);
    const std::string call_id = AttrText(a, "keel.call.id");
    if (call_id.empty()) return;  // not a call's record
    TraceCall& call = CallFor(call_id, a, at);
    if (at >= 0) call.last_ms = std::max(call.last_ms, at);
    if (event == "tool.call.start") {
      call.start_ms = at;
    } else if (event == "tool.call.end") {
      call.end_ms = at;
      call.outcome = AttrText(a, "outcome");
      if (call.outcome.empty()) call.outcome = "error";
      call.reason = AttrText(a, "keel.reason");
      call.duration_ms = AttrNumber(a, "duration_ms", -1);
    } else if (event == "tool.attempt.start") {
      TraceAttempt& attempt = AttemptOf(call, a);
      attempt.start_ms = at;
      attempt.circuit_state = AttrText(a, "keel.circuit.state");
      attempt.probe = AttrFlag(a, "keel.circuit.probe");
    } else if (event == "tool.attempt.end") {
      TraceAttempt& attempt = AttemptOf(call, a);
      attempt.end_ms = at;
      attempt.duration_ms = AttrNumber(a, "duration_ms", -1);
      attempt.outcome = AttrText(a, "outcome");
      attempt.error_type = AttrText(a, "error.type");
    } else if (event == "retry.scheduled") {
      call.marks.push_back({MarkKind::kBackoff, at, AttrNumber(a, "keel.retry.delay_ms", 0),
                            AttrText(a, "error.type")});
    } else if (event == "retry.suppressed") {
      call.marks.push_back({MarkKind::kRetrySuppressed, at, 0, AttrText(a, "keel.retry.reason")});
    } else if (event == "timeout.fired") {
      call.marks.push_back({MarkKind::kTimeout, at, 0, AttrText(a, "keel.timeout.layer")});
    } else if (event == "idempotency.replay") {
      call.marks.push_back({MarkKind::kReplay, at, 0, AttrText(a, "idempotency.key")});
    } else if (event == "idempotency.mismatch") {
      call.marks.push_back({MarkKind::kMismatch, at, 0, AttrText(a, "idempotency.key")});
    } else if (event == "breaker.rejected") {
      call.marks.push_back({MarkKind::kBreakerRejected, at, 0, AttrText(a, "keel.circuit.state")});
    } else if (event == "breaker.would_have" || event == "retry.would_have") {
      call.marks.push_back({MarkKind::kWouldHave, at, 0, event});
    } else if (event == "breaker.state") {
      model_.breaker_changes.push_back(
          {at, call.backend, AttrText(a, "keel.circuit.previous_state"),
           AttrText(a, "keel.circuit.state"), AttrText(a, "keel.circuit.trip")});
    }
  }

  TraceModel Finish() && {
    for (const auto& [request_id, cancel_times] : pending_cancels_) {
      model_.unmatched_cancels += cancel_times.size();
    }
    return std::move(model_);
  }

  TraceModel& model() { return model_; }

 private:
  TraceCall& CallFor(const std::string& call_id, const Json& a, int64_t at) {
    const auto [it, inserted] = index_.try_emplace(call_id, model_.calls.size());
    if (!inserted) return model_.calls[it->second];
    TraceCall& call = model_.calls.emplace_back();
    call.call_id = call_id;
    call.tool = AttrText(a, "gen_ai.tool.name");
    call.backend = AttrText(a, "keel.backend");
    call.intent = AttrText(a, "keel.intent.id");
    if (call.intent.empty()) call.intent = call_id;
    call.request_id = AttrText(a, "jsonrpc.request.id");
    call.start_ms = at;
    if (!call.request_id.empty()) by_request_[call.request_id].push_back(it->second);
    return call;
  }

  TraceAttempt& AttemptOf(TraceCall& call, const Json& a) {
    const int number = static_cast<int>(std::clamp(AttrNumber(a, "retry.attempt", 1), 0.0, 1e6));
    for (auto it = call.attempts.rbegin(); it != call.attempts.rend(); ++it) {
      if (it->number == number) return *it;
    }
    if (call.attempts.size() >= kMaxAttemptsPerCall) return scratch_;
    TraceAttempt& attempt = call.attempts.emplace_back();
    attempt.number = number;
    return attempt;
  }

  // Rule 3: the latest call with this request id started at or before the cancel. A cancel
  // is written after the call it settled, so the call is normally known already.
  void Cancel(const Json& a, int64_t at) {
    const std::string request_id = AttrText(a, "jsonrpc.request.id");
    const auto it = by_request_.find(request_id);
    if (it != by_request_.end()) {
      for (auto index = it->second.rbegin(); index != it->second.rend(); ++index) {
        TraceCall& call = model_.calls[*index];
        if (call.start_ms <= at || at < 0) {
          call.marks.push_back({MarkKind::kCancel, at, 0, std::string()});
          return;
        }
      }
    }
    pending_cancels_[request_id].push_back(at);
  }

  TraceModel model_;
  TraceAttempt scratch_;                                   // kMaxAttemptsPerCall overflow
  std::map<std::string, size_t> index_;                    // call id -> calls index
  std::map<std::string, std::vector<size_t>> by_request_;  // request id -> calls indexes
  std::map<std::string, std::vector<int64_t>> pending_cancels_;
};

}  // namespace

TraceModel ReadTraceModel(std::istream& lines) {
  ModelReader reader;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    // A trace file may come from anywhere: read with the bound on nesting (bounded_json.h).
    const Json record = ParseBoundedJson(line).value;
    if (!record.is_object() || !record.contains("event") || !record["event"].is_string() ||
        !record.contains("attributes") || !record["attributes"].is_object()) {
      ++reader.model().skipped;
      continue;
    }
    ++reader.model().records;
    reader.Read(record);
  }
  return std::move(reader).Finish();
}

double NearestRankPercentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace keel
