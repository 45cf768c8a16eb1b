#include "server/upstream/sse_reader.h"

#include <algorithm>
#include <utility>

namespace keel {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

}  // namespace

SseReader::SseReader(size_t max_event_bytes, EventFn on_event, OversizeFn on_oversize)
    : max_event_bytes_(max_event_bytes),
      on_event_(std::move(on_event)),
      on_oversize_(std::move(on_oversize)) {}

void SseReader::Feed(std::string_view bytes) {
  std::string held;
  if (!bom_checked_) {
    // Rule 1: the first three bytes decide; a shorter start waits for more.
    bom_prefix_.append(bytes);
    const size_t n = std::min(bom_prefix_.size(), kBom.size());
    if (bom_prefix_.size() < kBom.size() && bom_prefix_.compare(0, n, kBom.substr(0, n)) == 0) {
      return;
    }
    bom_checked_ = true;
    held.swap(bom_prefix_);
    bytes = held;
    if (bytes.substr(0, kBom.size()) == kBom) bytes.remove_prefix(kBom.size());
  }
  while (!bytes.empty()) {
    if (after_cr_) {
      after_cr_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        continue;
      }
    }
    const size_t end = bytes.find_first_of("\r\n");
    if (end == std::string_view::npos) {
      Append(bytes);
      return;
    }
    Append(bytes.substr(0, end));
    after_cr_ = bytes[end] == '\r';
    bytes.remove_prefix(end + 1);
    EndLine();
  }
}

void SseReader::Append(std::string_view bytes) {
  line_length_ += bytes.size();
  if (skipped_ > 0) {
    skipped_ += bytes.size();
    return;
  }
  const size_t total = data_.size() + line_.size() + bytes.size();
  if (total > max_event_bytes_) {
    skipped_ = total;
    data_.clear();
    line_.clear();
    on_oversize_(total);
    return;
  }
  line_.append(bytes);
}

void SseReader::EndLine() {
  const size_t length = line_length_;
  line_length_ = 0;
  if (skipped_ > 0) {
    if (length == 0) skipped_ = 0;  // the blank line that ends the skipped event
    return;
  }
  if (line_.empty()) return Dispatch();
  const std::string_view line = line_;
  const size_t colon = line.find(':');
  if (colon != 0 && line.substr(0, colon) == "data") {
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    data_.append(value);
    data_.push_back('\n');
  }
  line_.clear();
  if (data_.size() > max_event_bytes_) {
    skipped_ = data_.size();
    data_.clear();
    on_oversize_(skipped_);
  }
}

void SseReader::Dispatch() {
  if (data_.empty()) return;
  data_.pop_back();  // the "\n" after the last data line
  if (!data_.empty()) on_event_(data_);
  data_.clear();
}

size_t SseReader::Finish() {
  if (!bom_checked_ && !bom_prefix_.empty()) {
    bom_checked_ = true;
    const std::string held = std::move(bom_prefix_);
    bom_prefix_.clear();
    Feed(held);
  }
  const size_t cut = line_length_;
  line_length_ = 0;
  line_.clear();
  if (cut == 0 && skipped_ == 0) {
    Dispatch();
  } else {
    data_.clear();  // rule 4: an event with a half line is half a message
  }
  skipped_ = 0;
  return cut;
}

}  // namespace keel
