// LineFramer: turns a byte stream into newline-delimited lines with a size cap.
// Owned by whoever reads the transport; not thread-safe (one reader).
//
// Invariants:
//  1. A line is delivered without its "\n" and without one trailing "\r" (CRLF tolerated).
//  2. A line longer than `max_line_bytes` is never buffered whole: once the cap is passed
//     the framer discards bytes up to the next "\n" and reports the line once, as oversized.
//  3. Memory held is at most max_line_bytes plus one read chunk.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace keel {

class LineFramer {
 public:
  // `on_line(line)` for each complete line (blank lines included: the caller decides);
  // `on_oversized(bytes_seen)` once per line that passed the cap.
  using LineFn = std::function<void(std::string_view line)>;
  using OversizedFn = std::function<void(size_t bytes_seen)>;

  LineFramer(size_t max_line_bytes, LineFn on_line, OversizedFn on_oversized);

  // Feeds the next chunk of the stream.
  void Feed(std::string_view chunk);

  // At end of stream: a final line without "\n" is still a line (`keel < file`
  // where the file lacks a trailing newline).
  void Finish();

  // Bytes currently buffered (a partial line).
  size_t buffered() const { return partial_.size(); }

 private:
  void Emit(std::string_view line);

  size_t max_line_bytes_;
  LineFn on_line_;
  OversizedFn on_oversized_;
  std::string partial_;
  bool discarding_ = false;  // inside an oversized line, dropping until "\n"
  size_t discarded_ = 0;     // bytes of the oversized line seen so far
};

}  // namespace keel
