#include "protocol/line_framer.h"

#include <utility>

namespace keel {

LineFramer::LineFramer(size_t max_line_bytes, LineFn on_line, OversizedFn on_oversized)
    : max_line_bytes_(max_line_bytes),
      on_line_(std::move(on_line)),
      on_oversized_(std::move(on_oversized)) {}

void LineFramer::Emit(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > max_line_bytes_) {
    on_oversized_(line.size());
    return;
  }
  on_line_(line);
}

void LineFramer::Feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    if (discarding_) {
      discarded_ += piece.size();
      if (nl == std::string_view::npos) return;
      discarding_ = false;
      on_oversized_(discarded_);
      discarded_ = 0;
    } else if (partial_.size() + piece.size() > max_line_bytes_ + 1) {
      // +1 leaves room for a CR that CRLF framing strips. The line is too long:
      // drop what we hold and skip to its end, whenever that comes.
      discarded_ = partial_.size() + piece.size();
      partial_.clear();
      partial_.shrink_to_fit();
      discarding_ = nl == std::string_view::npos;
      if (!discarding_) {
        on_oversized_(discarded_);
        discarded_ = 0;
      }
      if (discarding_) return;
    } else if (nl == std::string_view::npos) {
      partial_.append(piece);
      return;
    } else if (partial_.empty()) {
      Emit(piece);  // the common case: a whole line inside one chunk, no copy
    } else {
      partial_.append(piece);
      std::string line = std::move(partial_);
      partial_.clear();
      Emit(line);
    }
    chunk.remove_prefix(nl + 1);
  }
}

void LineFramer::Finish() {
  if (discarding_) {
    discarding_ = false;
    on_oversized_(discarded_);
    discarded_ = 0;
  } else if (!partial_.empty()) {
    std::string line = std::move(partial_);
    partial_.clear();
    Emit(line);
  }
}

}  // namespace keel
