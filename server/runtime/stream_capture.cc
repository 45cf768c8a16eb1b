#include "server/runtime/stream_capture.h"

#include <algorithm>

namespace keel {

void StreamCapture::Consume(std::string_view bytes) {
  if (lines_mode_) return ConsumeLines(bytes);
  const size_t room = cap_ - std::min(cap_, kept_.size());
  kept_.append(bytes.substr(0, room));
  if (bytes.size() > room) truncated_ = true;
}

void StreamCapture::ConsumeLines(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    const size_t room = cap_ - std::min(cap_, kept_.size());
    kept_.append(piece.substr(0, room));  // the rest of a line too long is dropped
    if (newline == std::string_view::npos) break;
    if (on_line_ != nullptr && *on_line_) (*on_line_)(kept_);
    kept_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

}  // namespace keel
