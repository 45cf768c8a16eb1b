// RequestCoordinator: owns every in-flight tools/call from admission to settle, and is
// the single authority on its fate. Loop thread only; workers reach it through
// EventLoop::Post().
//
// Invariants:
//  1. Each admitted request settles exactly once: one response line, or silence after
//     a cancel. Whatever arrives for a settled request (a late result, late progress, a
//     second cancel) is dropped here, never trusted to the tool.
//  2. Entries are keyed by id plus a generation, so a reused id never touches an old
//     entry.
//  3. A request settled while its worker still runs stays counted ("draining") until the
//     worker returns, so admission accounts for slots a slow-to-stop tool still holds.
//  4. Progress for a request is sent only with the client's token, echoed with its exact
//     type, and only when strictly greater than the last value sent.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "server/cancellation.h"
#include "server/output_sink.h"

namespace keel {

using Json = nlohmann::json;

class RequestCoordinator {
 public:
  struct Handle {
    std::string key;  // IdKey of the JSON-RPC id
    uint64_t generation = 0;
  };

  RequestCoordinator(OutputSink& sink, size_t max_inflight);

  bool InFlight(const Json& id) const;
  // No room for another call: live plus draining calls reach --max-inflight.
  bool AtCapacity() const { return live_.size() + draining_.size() >= max_inflight_; }

  Handle Begin(const Json& id, Json progress_token, CancellationToken token);

  // The worker's result. Written unless the request already settled.
  void Complete(const Handle& handle, Json result);

  // A tool's progress report (PRG-1 rules above).
  void Progress(const Handle& handle, double progress, std::optional<double> total,
                std::string message);

  // notifications/cancelled: settles the request silently and cancels its token.
  // Unknown or settled ids are ignored (CAN-3). Returns true when a request was cancelled.
  bool Cancel(const Json& request_id);

  // Shutdown: every live request gets one error response and its token is cancelled.
  // Returns how many were settled this way.
  size_t ShutDownAll(int code, std::string_view message);

  size_t live() const { return live_.size(); }
  size_t draining() const { return draining_.size(); }
  uint64_t late_results_dropped() const { return late_results_dropped_; }

  // Called whenever the last live request settles (shutdown waits for it).
  void set_on_idle(std::function<void()> fn) { on_idle_ = std::move(fn); }

 private:
  struct Entry {
    Json id;
    uint64_t generation;
    Json progress_token;  // null when the client asked for no progress
    CancellationToken token;
    std::optional<double> last_progress;
  };

  // Removes a live entry; its worker has not returned, so it starts draining.
  void SettleWithoutWorker(std::unordered_map<std::string, Entry>::iterator it);
  void NotifyIfIdle();

  OutputSink& sink_;
  size_t max_inflight_;
  uint64_t next_generation_ = 1;
  std::unordered_map<std::string, Entry> live_;
  std::unordered_set<uint64_t> draining_;  // generations settled before their worker returned
  uint64_t late_results_dropped_ = 0;
  std::function<void()> on_idle_;
};

}  // namespace keel
