#include "server/call/degraded_answer.h"

#include <utility>

#include "ledger/fingerprint.h"
#include "protocol/iso_time.h"

namespace keel {
namespace {

Json CircuitJson(const CircuitRejection& r) {
  return Json{{"state", r.state},
              {"backend", r.backend},
              {"retry_after_ms", r.retry_after_ms},
              {"incident", r.incident}};
}

}  // namespace

std::string BreakerIncidentId(const std::string& backend, uint64_t generation) {
  return "cb-" + backend + "-" + std::to_string(generation);
}

Json DegradedAnswer(const ToolSpec& spec, const CircuitRejection& rejection,
                    const std::optional<CachedResult>& cached, int64_t now_ms) {
  const std::string why = "The circuit breaker for '" + spec.name + "' on backend '" +
                          rejection.backend + "' is " + rejection.state + " (incident " +
                          rejection.incident + "): keel did not call the backend. Try again in " +
                          std::to_string(rejection.retry_after_ms) + " ms.";
  if (!IsWrite(spec.effect) && cached) {
    const int64_t age = std::max<int64_t>(0, now_ms - cached->stored_ms);
    Json data =
        cached->result.contains("structuredContent") ? cached->result["structuredContent"] : Json();
    if (data.is_object() && data.contains("freshness")) data["freshness"] = "cached";
    Json structured = {{"freshness", "cached"},
                       {"cached_at", IsoTime(cached->stored_ms)},
                       {"age_ms", age},
                       {"data", std::move(data)},
                       {"circuit", CircuitJson(rejection)},
                       {"no_write_action_performed", true}};
    Json answer = TextResult("CACHED, not fresh: the last known good answer from " +
                             IsoTime(cached->stored_ms) + " (" + std::to_string(age / 1000) +
                             " s old). " + why + " No write action was performed.");
    if (const auto content = cached->result.find("content");
        content != cached->result.end() && content->is_array()) {
      for (const Json& block : *content) answer["content"].push_back(block);
    }
    answer["structuredContent"] = std::move(structured);
    return answer;
  }
  Json error = {{"type", "circuit_open"},
                {"failure_class", "rejected_permanent"},
                {"retry_after_ms", rejection.retry_after_ms},
                {"circuit", CircuitJson(rejection)},
                {"no_write_action_performed", true}};
  if (IsWrite(spec.effect)) {
    return ErrorResult(why + " Writes get no fallback: nothing was done.", error);
  }
  error["freshness"] = "absent";
  return ErrorResult(why +
                         " No earlier answer is known, so there is no data (freshness: "
                         "absent). No write action was performed.",
                     error);
}

std::string LastGoodResults::KeyOf(const std::string& tool, const Json& arguments) {
  return tool + '\n' + CanonicalJson(arguments);
}

void LastGoodResults::Put(const std::string& tool, const Json& arguments, const Json& result,
                          int64_t now_ms) {
  if (capacity_ == 0) return;
  std::string key = KeyOf(tool, arguments);
  Json replaced;  // destroyed after the lock is released
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      // The common case, a read called again with the same arguments: the entry becomes the
      // newest in place, no node freed or allocated, and the result is copied only when it
      // changed (a comparison allocates nothing; a copy of a result allocates every node).
      order_.splice(order_.end(), order_, it->second.position);
      it->second.value.stored_ms = now_ms;
      if (it->second.value.result != result) {
        replaced = std::exchange(it->second.value.result, result);
      }
      return;
    }
    while (entries_.size() >= capacity_) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(key);
    entries_.emplace(std::move(key), Slot{CachedResult{result, now_ms}, std::prev(order_.end())});
  }
}

std::optional<CachedResult> LastGoodResults::Get(const std::string& tool,
                                                 const Json& arguments) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(KeyOf(tool, arguments));
  if (it == entries_.end()) return std::nullopt;
  return it->second.value;
}

size_t LastGoodResults::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace keel
