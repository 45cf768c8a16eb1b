// Fast rejection while a circuit breaker is open (CB-2): what a call gets instead of
// touching its backend, and the last known good results reads fall back to.
//
// The answer always says whether data is fresh, cached or absent:
//  - a read with a last known good result: isError false, structuredContent =
//      {freshness: "cached", cached_at, age_ms, data: <the cached structuredContent>,
//       circuit: {...}, no_write_action_performed: true}, and text saying it is stale;
//  - a read without one: isError true, error {type: "circuit_open", freshness: "absent",
//      circuit..., no_write_action_performed: true};
//  - a write: isError true, error {type: "circuit_open", ...}: never a fallback.
// circuit = {state, backend, retry_after_ms, incident}. Every rejection has failure_class
// rejected_permanent: retrying inside the call cannot help while the breaker is open; the
// client may come back after retry_after_ms.
//
// LastGoodResults: the latest successful result per (tool, canonical arguments) of read
// tools, for the fallback. Thread-safe (one mutex), bounded: at most `capacity` entries, the
// least recently stored dropped first. In memory: a restart forgets it (the answer is then
// "absent", never invented).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "server/catalog/tool.h"

namespace keel {

struct CircuitRejection {
  std::string state;  // the breaker's state, e.g. "open", "half_open", "forced_open"
  std::string backend;
  int64_t retry_after_ms = 0;
  std::string incident;  // e.g. "cb-deployment-api-3": the breaker's scope and generation
};

struct CachedResult {
  Json result;            // the CallToolResult as it was returned
  int64_t stored_ms = 0;  // wall clock, ms since the epoch
};

// The incident a breaker's state belongs to: "cb-<backend>-<generation>".
std::string BreakerIncidentId(const std::string& backend, uint64_t generation);

Json DegradedAnswer(const ToolSpec& spec, const CircuitRejection& rejection,
                    const std::optional<CachedResult>& cached, int64_t now_ms);

class LastGoodResults {
 public:
  explicit LastGoodResults(size_t capacity = 1024) : capacity_(capacity) {}
  void Put(const std::string& tool, const Json& arguments, const Json& result, int64_t now_ms);
  std::optional<CachedResult> Get(const std::string& tool, const Json& arguments) const;
  size_t size() const;

 private:
  static std::string KeyOf(const std::string& tool, const Json& arguments);
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::string> order_;  // oldest first; guarded by mu_
  struct Slot {
    CachedResult value;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, Slot> entries_;  // guarded by mu_
};

}  // namespace keel
