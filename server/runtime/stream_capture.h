// StreamCapture: what keel keeps of one output pipe of a child process (process_runner.h,
// item 3), bounded so a chatty command cannot grow keel's memory. No I/O: RunProcess reads
// the pipe and hands each chunk to Consume.
//  - Bytes mode (stdout, stderr): the first `cap` bytes are kept; what comes after is
//    discarded and marks the stream truncated.
//  - Lines mode (the progress pipe): the bytes are split at '\n'; each complete line (without
//    its '\n') is passed to on_line, capped at `cap` bytes (the rest of that line is
//    dropped). An unterminated last line is never delivered.
//
// Thread: one owner at a time (the thread running the process). on_line is called on that
// thread, from Consume, and must not throw.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace keel {

class StreamCapture {
 public:
  using LineFn = std::function<void(std::string_view line)>;

  static StreamCapture Bytes(size_t cap) { return StreamCapture(cap, false, nullptr); }
  // on_line (or the function it points to) may be empty: lines are then dropped. It must
  // outlive the capture.
  static StreamCapture Lines(size_t cap, const LineFn* on_line) {
    return StreamCapture(cap, true, on_line);
  }

  void Consume(std::string_view bytes);

  // Bytes mode: what was kept, and whether anything was discarded.
  std::string TakeBytes() { return std::move(kept_); }
  bool truncated() const { return truncated_; }

 private:
  StreamCapture(size_t cap, bool lines_mode, const LineFn* on_line)
      : cap_(cap), lines_mode_(lines_mode), on_line_(on_line) {}
  void ConsumeLines(std::string_view bytes);

  size_t cap_;
  bool lines_mode_;
  const LineFn* on_line_;  // lines mode only; may be null
  std::string kept_;       // bytes mode: the capture; lines mode: the incomplete line so far
  bool truncated_ = false;
};

}  // namespace keel
