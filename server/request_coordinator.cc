#include "server/request_coordinator.h"

#include "protocol/json_rpc.h"

namespace keel {
namespace {

// Whole numbers go out as JSON integers ("3", not "3.0"), which is what clients expect.
Json JsonNumber(double value) {
  constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
  if (value < kMaxExactInteger && value > -kMaxExactInteger &&
      value == static_cast<double>(static_cast<long long>(value))) {
    return Json(static_cast<long long>(value));
  }
  return Json(value);
}

}  // namespace

RequestCoordinator::RequestCoordinator(OutputSink& sink, size_t max_inflight)
    : sink_(sink), max_inflight_(max_inflight) {}

bool RequestCoordinator::InFlight(const Json& id) const { return live_.count(IdKey(id)) != 0; }

RequestCoordinator::Handle RequestCoordinator::Begin(const Json& id, Json progress_token,
                                                     CancellationToken token) {
  Handle handle{IdKey(id), next_generation_++};
  live_.emplace(handle.key,
                Entry{id, handle.generation, std::move(progress_token), std::move(token), {}});
  return handle;
}

void RequestCoordinator::Complete(const Handle& handle, Json result) {
  auto it = live_.find(handle.key);
  if (it == live_.end() || it->second.generation != handle.generation) {
    // Settled earlier (cancelled or shut down): the result is dropped, the slot freed.
    if (draining_.erase(handle.generation) != 0) ++late_results_dropped_;
    return;
  }
  sink_.SendResponse(EncodeResult(it->second.id, result));
  live_.erase(it);
  NotifyIfIdle();
}

void RequestCoordinator::Progress(const Handle& handle, double progress,
                                  std::optional<double> total, std::string message) {
  auto it = live_.find(handle.key);
  if (it == live_.end() || it->second.generation != handle.generation) return;
  Entry& entry = it->second;
  if (entry.progress_token.is_null()) return;
  if (entry.last_progress && progress <= *entry.last_progress) return;
  entry.last_progress = progress;
  Json params = {{"progressToken", entry.progress_token}, {"progress", JsonNumber(progress)}};
  if (total) params["total"] = JsonNumber(*total);
  if (!message.empty()) params["message"] = std::move(message);
  sink_.SendProgress(entry.generation,
                     EncodeNotification("notifications/progress", params));
}

void RequestCoordinator::SettleWithoutWorker(std::unordered_map<std::string, Entry>::iterator it) {
  it->second.token.Cancel();
  draining_.insert(it->second.generation);
  live_.erase(it);
}

bool RequestCoordinator::Cancel(const Json& request_id) {
  if (!IsValidId(request_id)) return false;
  auto it = live_.find(IdKey(request_id));
  if (it == live_.end()) return false;
  SettleWithoutWorker(it);  // cancelled settles silently: no response is ever written
  NotifyIfIdle();
  return true;
}

size_t RequestCoordinator::ShutDownAll(int code, std::string_view message) {
  const size_t count = live_.size();
  while (!live_.empty()) {
    auto it = live_.begin();
    sink_.SendResponse(EncodeError(it->second.id, code, message));
    SettleWithoutWorker(it);
  }
  NotifyIfIdle();
  return count;
}

void RequestCoordinator::NotifyIfIdle() {
  if (live_.empty() && on_idle_) on_idle_();
}

}  // namespace keel
