// StderrSink: the spdlog sink for keel's process log on stderr. It never waits: a host may
// leave stderr unread (MCP allows it), and a log line must not stall the loop or a worker
// once the pipe is full. Any thread may log; spdlog's mutex serialises the
// sink, and nothing is done under it that can wait.
//
// Invariants:
//  1. Each line is written with one non-blocking write (see StdioFd); a line that does not
//     fit at all is dropped and counted.
//  2. A line is never cut: when only its beginning fits, the rest is kept (one line at most)
//     and goes out before anything else; until it has, new lines are dropped and counted.
//  3. Dropped lines are reported by one line "N log line(s) dropped: stderr was full" at the
//     first write that finds room again (the next log line, or a flush), ahead of that line.
//  4. A write error (nobody reads stderr any more) drops the line like a full pipe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "server/transport/stdio_fd.h"

namespace keel {

class StderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit StderrSink(StdioFd out) : out_(out) {}

  // Lines dropped and not reported yet (for tests).
  uint64_t unreported_drops() {
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  // Writes what is owed (the rest of a cut line, the drop report) if it fits now.
  void flush_() override;

 private:
  // Writes `pending_` then the drop report, as far as they fit. True when both are out.
  bool CatchUp();
  // Writes `text`; keeps what did not fit in pending_ unless nothing fit. False when nothing
  // fit (the caller drops it).
  bool Write(std::string_view text);

  StdioFd out_;
  std::string pending_;  // the rest of a line whose beginning is written (invariant 2)
  uint64_t dropped_ = 0;
};

}  // namespace keel
