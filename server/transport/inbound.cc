#include "server/transport/inbound.h"

#include <string>
#include <variant>

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"

namespace keel {
namespace {

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

std::optional<Message> DecodeInbound(std::string_view line, OutputSink& replies) {
  if (IsBlank(line)) return std::nullopt;
  DecodeResult decoded = DecodeLine(line);
  if (auto* error = std::get_if<DecodeError>(&decoded)) {
    spdlog::debug("rejected input line: {}", error->message);
    if (error->notification) return std::nullopt;  // notifications are never answered (CAN-3)
    replies.SendResponse(EncodeError(error->id, error->code, error->message));
    return std::nullopt;
  }
  return std::move(std::get<Message>(decoded));
}

void AnswerOversizedLine(OutputSink& replies, size_t bytes, size_t max_line_bytes) {
  spdlog::warn("skipped an input line of {} bytes (limit {})", bytes, max_line_bytes);
  replies.SendResponse(EncodeError(std::nullopt, kInvalidRequest,
                                   "Invalid Request: line of " + std::to_string(bytes) +
                                       " bytes exceeds --max-line-bytes " +
                                       std::to_string(max_line_bytes) + "; it was skipped"));
}

}  // namespace keel
