#include "server/upstream/transfer_pool.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>
#include <utility>

#include "server/upstream/curl_api.h"

namespace keel {

TransferPool::TransferPool() : multi_(Curl().multi_init()) {}

TransferPool::~TransferPool() {
  StopAll();
  if (multi_ != nullptr) Curl().multi_cleanup(multi_);
}

bool TransferPool::Add(std::unique_ptr<UpstreamTransfer> transfer) {
  CURL* easy = transfer->easy();
  if (Curl().multi_add_handle(multi_, easy) != CURLM_OK) return false;
  active_[easy] = std::move(transfer);
  return true;
}

void TransferPool::Stop(Active::iterator it) {
  Curl().multi_remove_handle(multi_, it->first);
  active_.erase(it);
}

void TransferPool::StopRequest(const Json& id) {
  for (auto it = active_.begin(); it != active_.end(); ++it) {
    if (it->second->is_request() && it->second->id() == id) return Stop(it);
  }
}

void TransferPool::StopLingering(TimePoint now) {
  for (auto it = active_.begin(); it != active_.end();) {
    const std::optional<TimePoint> at = it->second->answered_at();
    const auto next = std::next(it);
    if (at && now - *at >= kAnswerLinger) Stop(it);
    it = next;
  }
}

void TransferPool::StopAll() {
  while (!active_.empty()) Stop(active_.begin());
}

void TransferPool::Run(const DoneFn& done) {
  int running = 0;
  Curl().multi_perform(multi_, &running);
  int left = 0;
  while (CURLMsg* message = Curl().multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    // The message does not outlive curl_multi_remove_handle: read it first.
    CURL* easy = message->easy_handle;
    const CURLcode code = message->data.result;
    const auto it = active_.find(easy);
    if (it == active_.end()) continue;
    std::unique_ptr<UpstreamTransfer> transfer = std::move(it->second);
    active_.erase(it);
    Curl().multi_remove_handle(multi_, easy);
    const UpstreamTransfer::Outcome outcome = transfer->Finish(code);
    done(std::move(transfer), outcome);
  }
}

void TransferPool::Wait(TimePoint now, TimePoint until) {
  for (const auto& [easy, transfer] : active_) {
    if (const std::optional<TimePoint> at = transfer->answered_at()) {
      until = std::min(until, *at + kAnswerLinger);
    }
  }
  int ms = 0;
  if (until > now) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    ms = static_cast<int>(std::min<long long>(left + 1, INT_MAX));
  }
  Curl().multi_poll(multi_, nullptr, 0, ms, nullptr);
}

void TransferPool::Wake() { Curl().multi_wakeup(multi_); }

}  // namespace keel
