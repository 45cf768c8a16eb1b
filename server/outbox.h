// Outbox: lines waiting for stdout, written by the one protocol writer. Loop thread only.
//
// Invariants:
//  1. Responses are never dropped and leave in the order they were queued.
//  2. Progress for a token occupies at most one unsent slot: a newer value overwrites it
//     in place (so it still precedes the response that follows it).
//  3. Log lines are dropped (and counted) once the queue holds kMaxBytesForLogs.
//  4. bytes() counts unsent bytes; the transport stops reading stdin above a bound,
//     so a client that stops reading cannot make keel's memory grow without limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

namespace keel {

class Outbox {
 public:
  // Logs are droppable: past 1 MiB queued, new ones are discarded.
  static constexpr size_t kMaxBytesForLogs = 1 << 20;

  enum class WriteStatus { kDrained, kBlocked, kPeerGone };

  void PushResponse(std::string line);
  void PushProgress(uint64_t stream, std::string line);
  void PushLog(std::string line);

  bool empty() const { return entries_.empty(); }
  size_t bytes() const { return bytes_; }
  uint64_t dropped_logs() const { return dropped_logs_; }

  // Writes as much as `fd` accepts without blocking.
  WriteStatus WriteTo(int fd);

 private:
  struct Entry {
    std::string data;       // the line plus "\n"
    uint64_t stream = 0;  // progress entries only (streams start at 1)
    uint64_t seq;
  };
  void Push(std::string line, uint64_t stream);

  std::deque<Entry> entries_;
  size_t head_written_ = 0;  // bytes of entries_.front() already written
  size_t bytes_ = 0;
  uint64_t next_seq_ = 0;
  std::unordered_map<uint64_t, uint64_t> progress_slot_;  // stream -> seq of unsent slot
  uint64_t dropped_logs_ = 0;
};

}  // namespace keel
