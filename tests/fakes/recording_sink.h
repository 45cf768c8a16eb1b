// RecordingSink: an OutputSink that keeps every line, parsed, for assertions.
// Loop thread only, like the real one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/transport/output_sink.h"

namespace keel {

class RecordingSink final : public OutputSink {
 public:
  void SendResponse(std::string line) override { Record(line); }
  // Recorded like a response; counted, so tests can tell a request went out as one.
  void SendRequest(std::string line) override {
    ++requests_;
    Record(line);
  }
  size_t requests() const { return requests_; }
  void SendProgress(uint64_t, std::string line) override { Record(line); }
  // Recorded lines are already "written": nothing to take back, but tests can check it.
  void DiscardProgress(uint64_t stream) override { discarded_.push_back(stream); }
  const std::vector<uint64_t>& discarded() const { return discarded_; }
  void SendLog(std::string line) override { Record(line); }

  const std::vector<nlohmann::json>& messages() const { return messages_; }
  const std::vector<std::string>& lines() const { return lines_; }

  // Messages that answer `id` (responses or errors); 7 and "7" are different ids.
  std::vector<nlohmann::json> ForId(const nlohmann::json& id) const {
    std::vector<nlohmann::json> out;
    for (const auto& m : messages_) {
      if (m.contains("id") && m["id"] == id && m["id"].is_string() == id.is_string()) {
        out.push_back(m);
      }
    }
    return out;
  }
  std::vector<nlohmann::json> WithMethod(const std::string& method) const {
    std::vector<nlohmann::json> out;
    for (const auto& m : messages_) {
      if (m.value("method", "") == method) out.push_back(m);
    }
    return out;
  }
  void Clear() {
    messages_.clear();
    lines_.clear();
  }

 private:
  void Record(const std::string& line) {
    lines_.push_back(line);
    messages_.push_back(nlohmann::json::parse(line));
  }
  std::vector<nlohmann::json> messages_;
  std::vector<std::string> lines_;
  std::vector<uint64_t> discarded_;
  size_t requests_ = 0;
};

}  // namespace keel
