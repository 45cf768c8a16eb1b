// OutputSink: where the session's outgoing lines go. The stdio transport implements it
// with the Outbox; unit tests implement it with a recorder. Loop thread only.
// Lines are complete JSON-RPC messages without the trailing newline.
#pragma once

#include <string>

namespace keel {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // A response: never dropped.
  virtual void SendResponse(std::string line) = 0;
  // Progress for one token: a newer line for the same token may replace an unsent one.
  virtual void SendProgress(const std::string& token_key, std::string line) = 0;
  // A log notification: may be dropped under pressure.
  virtual void SendLog(std::string line) = 0;
};

}  // namespace keel
