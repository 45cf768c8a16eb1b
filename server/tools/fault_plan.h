// FaultPlan: fault injection for the simulated deployment backend (FLT-1..4), for
// tests, drills and demos. Set with `--fault TOOL:KIND[=VALUE]` (repeatable; env
// KEEL_FAULTS, comma-separated). Kinds:
//   latency=MS         every call answers MS later (slow=MS is the same; a latency beyond the
//                      attempt timeout is a "slow response": the attempt times out)
//   fail_503=N         the first N calls are refused with 503, then calls succeed
//   sustained_503=MS   every call is refused with 503 for MS from the first call on
//   lose_response[=N]  the first N calls (default 1) are carried out, then their response is
//                      lost (the backend accepted the operation; the caller cannot know)
//   start_after=N      the first N calls meet no fault; the others count from call N+1 (so
//                      a drill can read good state before the outage begins)
// TOOL is one of the simulated backend's tools; ParseFaults refuses anything else.
//
// Thread-safety: Next() may be called from any thread (one mutex). Time comes from the
// injected clock function, so tests drive the sustained outage without sleeping.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/runtime/clock.h"

namespace keel {

struct FaultSpec {
  int64_t latency_ms = 0;
  int fail_503 = 0;
  std::optional<int64_t> sustained_503_ms;
  int lose_response = 0;
  int start_after = 0;
};

// What one call to the backend meets.
struct FaultAction {
  int64_t latency_ms = 0;
  bool refuse_503 = false;
  bool lose_response = false;
};

class FaultPlan {
 public:
  explicit FaultPlan(std::map<std::string, FaultSpec> specs = {},
                     std::function<TimePoint()> now = nullptr);

  // The faults the next call to `tool` meets (and counts it).
  FaultAction Next(const std::string& tool);
  bool empty() const { return specs_.empty(); }
  // "get_deployment_job:fail_503=1, ..." for the start-up log.
  std::string Describe() const;

 private:
  struct State {
    int calls = 0;
    std::optional<TimePoint> first_call;
  };
  std::map<std::string, FaultSpec> specs_;
  std::function<TimePoint()> now_;
  std::mutex mu_;
  std::map<std::string, State> state_;  // guarded by mu_
};

// Parses the --fault values. On a bad one returns nullopt and sets *error (naming it).
std::optional<std::map<std::string, FaultSpec>> ParseFaults(const std::vector<std::string>& values,
                                                            const std::set<std::string>& tools,
                                                            std::string* error);

}  // namespace keel
