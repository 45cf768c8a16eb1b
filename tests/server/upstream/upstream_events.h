// UpstreamEventLog: UpstreamEvents that keep what a transport delivered (messages, the
// reasons it closed), with waits on a condition variable (no sleeps), and CapturedUpstreamLog,
// the default spdlog logger routed into memory for one test. Shared by the StdioUpstream tests.
// Thread-safety: the events run on the transport's thread; the accessors on any.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "server/upstream/upstream_transport.h"

namespace keel {

class UpstreamEventLog {
 public:
  UpstreamEvents Events() {
    UpstreamEvents events;
    events.on_message = [this](Json message, const Json&) {
      std::lock_guard<std::mutex> lock(mu_);
      messages_.push_back(std::move(message));
      cv_.notify_all();
    };
    events.on_closed = [this](std::string why) {
      std::lock_guard<std::mutex> lock(mu_);
      closes_.push_back(std::move(why));
      cv_.notify_all();
    };
    return events;
  }
  // True once `count` messages came (false if `limit` passed first).
  bool WaitMessages(size_t count, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return messages_.size() >= count; });
  }
  bool WaitClosed(std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return !closes_.empty(); });
  }
  std::vector<Json> messages() const {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }
  std::vector<std::string> closes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closes_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Json> messages_;       // guarded by mu_
  std::vector<std::string> closes_;  // guarded by mu_
};

// Routes the default logger into memory while it lives (every level).
class CapturedUpstreamLog {
 public:
  CapturedUpstreamLog()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256)),
        previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("upstream-test", sink_);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedUpstreamLog() { spdlog::set_default_logger(previous_); }
  CapturedUpstreamLog(const CapturedUpstreamLog&) = delete;
  CapturedUpstreamLog& operator=(const CapturedUpstreamLog&) = delete;

  // Whether some line logged so far contains `text`.
  bool Contains(const std::string& text) const {
    for (const std::string& line : sink_->last_formatted()) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace keel
