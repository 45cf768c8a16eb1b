#include "server/transport/http/http_exchange.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "protocol/error_codes.h"

namespace keel {

namespace {

std::string Event(std::string line) { return "data: " + std::move(line) + "\n"; }

}  // namespace

int StatusOfAnswer(const std::string& line, bool modern) {
  if (line.find("\"error\"") == std::string::npos) return 200;
  const nlohmann::json answer = nlohmann::json::parse(line, nullptr, false);
  if (!answer.is_object() || !answer.contains("error") || !answer["error"].is_object()) return 200;
  const auto code = answer["error"].value("code", 0);
  switch (code) {
    case kParseError:
    case kInvalidRequest:
    case kHeaderMismatch:
    case kMissingRequiredClientCapability:
    case kUnsupportedProtocolVersion:
      return 400;
    case kMethodNotFound:
      return modern ? 404 : 200;
    default:
      return 200;
  }
}

HttpExchange::HttpExchange(ExchangeId id, PeerId peer, HttpCall* call, Options options)
    : Exchange(id, peer),
      call_(call),
      options_(std::move(options)),
      outbox_(options_.stream_bytes, options_.on_progress_dropped) {}

bool HttpExchange::answer_is_error() const {
  if (!answered_ || streaming_) return true;
  const nlohmann::json answer = nlohmann::json::parse(response_, nullptr, false);
  return !answer.is_object() || !answer.contains("result");
}

void HttpExchange::Begin() {
  if (begun_ || call_ == nullptr) return;
  begun_ = true;
  if (answered_) {
    if (response_.empty()) {
      call_->Respond(204, "", "", headers_);  // cancelled before it began (EndUnanswered)
    } else {
      call_->Respond(StatusOfAnswer(response_, options_.modern), "application/json", response_,
                     headers_);
    }
    return;
  }
  if (!options_.stream) return;  // the JSON response comes later
  streaming_ = true;
  HttpHeaders headers = headers_;
  headers.emplace_back("Cache-Control", "no-cache");
  headers.emplace_back("X-Accel-Buffering", "no");
  call_->Stream(200, "text/event-stream", std::move(headers), this);
}

void HttpExchange::SendResponse(std::string line) {
  if (answered_ || closed()) return;
  answered_ = true;
  if (streaming_) {
    outbox_.PushResponse(Event(std::move(line)));
    Wake();
    return;
  }
  response_ = std::move(line);
  if (begun_ && call_ != nullptr) {
    call_->Respond(StatusOfAnswer(response_, options_.modern), "application/json", response_,
                   headers_);
  }
}

void HttpExchange::SendRequest(std::string line) {
  if (!CanQueue() || closed()) return;
  outbox_.PushResponse(Event(std::move(line)));
  Wake();
}

void HttpExchange::SendProgress(uint64_t stream, std::string line) {
  if (!CanQueue() || closed()) return;
  outbox_.PushProgress(stream, Event(std::move(line)));
  Wake();
}

void HttpExchange::DiscardProgress(uint64_t stream) { outbox_.DiscardProgress(stream); }

void HttpExchange::SendLog(std::string line) {
  if (!CanQueue() || closed()) return;
  outbox_.PushLog(Event(std::move(line)));
  Wake();
}

void HttpExchange::EndUnanswered() {
  if (answered_) return;
  answered_ = true;
  if (streaming_) return Wake();  // ended() is true once the outbox is drained
  response_.clear();
  if (begun_ && call_ != nullptr) call_->Respond(204, "", "", headers_);
}

void HttpExchange::KeepAlive() {
  if (!streaming_ || answered_ || call_ == nullptr || !outbox_.empty()) return;
  outbox_.PushLog(": keep-alive\n");
  Wake();
}

size_t HttpExchange::Read(char* buf, size_t max) { return outbox_.CopyOut(buf, max); }

void HttpExchange::Wake() {
  if (streaming_ && call_ != nullptr) call_->Wake();
}

}  // namespace keel
