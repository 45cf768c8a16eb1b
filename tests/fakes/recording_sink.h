// RecordingSink: an OutputSink that keeps every line, parsed, for assertions.
// Loop thread only, like the real one.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/output_sink.h"

namespace keel {

class RecordingSink final : public OutputSink {
 public:
  void SendResponse(std::string line) override { Record(line); }
  void SendProgress(const std::string&, std::string line) override { Record(line); }
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
};

}  // namespace keel
