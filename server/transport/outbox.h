// Outbox: lines waiting for stdout, written by the one protocol writer, bounded by bytes
// (BP-1). Loop thread only. Owned by the transport; lines are copied in.
//
// Invariants (`max_bytes` is the bound given to the constructor):
//  1. Responses are never dropped and leave in the order they were queued, even past the
//     bound (the transport stops reading stdin instead).
//  2. Progress for a stream occupies at most one unsent slot: a newer line overwrites it
//     in place (so it still precedes the response that follows it).
//  3. Progress never takes the unsent bytes above the bound. To make room, the oldest
//     unsent progress slots of other streams are dropped first; if dropping all of them
//     would still not be enough, only the new line is dropped (the older ones are kept).
//     Every dropped progress line reports its stream once through on_progress_dropped,
//     called after the outbox is consistent again (it may push).
//  4. A line is never cut: once its first byte is written it is no longer a slot, so it
//     is neither overwritten, dropped nor discarded; it is finished.
//  5. DiscardProgress() takes back a stream's unsent slot (its request was cancelled):
//     it is never written, and it is not reported as dropped.
//  6. Log lines are dropped (and counted) once the queue holds at least max_bytes / 2.
//  7. bytes() is exactly the unsent bytes (newlines included, the written part of a
//     partly written line excluded).
//
// Cost: push, overwrite, discard and dropping the oldest progress are O(1) each; lines
// live in a linked list so that a slot can leave the middle of the queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/transport/stdio_fd.h"

namespace keel {

class Outbox {
 public:
  enum class WriteStatus { kDrained, kBlocked, kPeerGone };

  explicit Outbox(size_t max_bytes,
                  std::function<void(uint64_t stream)> on_progress_dropped = nullptr);

  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  void PushResponse(std::string line);
  // `stream` names one request (never 0); see OutputSink.
  void PushProgress(uint64_t stream, std::string line);
  // No-op when the stream has no unsent slot.
  void DiscardProgress(uint64_t stream);
  void PushLog(std::string line);

  bool empty() const { return entries_.empty(); }
  size_t bytes() const { return bytes_; }
  size_t max_bytes() const { return max_bytes_; }
  uint64_t dropped_logs() const { return dropped_logs_; }
  uint64_t dropped_progress() const { return dropped_progress_; }

  // Writes as much as `out` accepts without blocking.
  WriteStatus WriteTo(const StdioFd& out);
  // Takes up to `max` unsent bytes into `buf`, as if they were written (invariant 4): for a
  // transport that is asked for bytes instead of writing them (an HTTP response stream).
  size_t CopyOut(char* buf, size_t max);

 private:
  struct Entry {
    std::string data;     // the line plus "\n"
    uint64_t stream = 0;  // nonzero only while this entry is its stream's unsent slot
  };
  using EntryList = std::list<Entry>;
  struct Slot {
    EntryList::iterator entry;
    std::list<uint64_t>::iterator age;  // this stream's place in slot_age_
  };

  void Append(std::string line, uint64_t stream);
  // Drops the oldest slots other than `keep` until `incoming` more bytes fit.
  void MakeRoom(size_t incoming, uint64_t keep, std::vector<uint64_t>* dropped);
  // The entry stays queued but is no longer a slot (it is being written).
  void Detach(Entry& entry);
  // Removes a slot's entry from the queue unwritten.
  void Remove(uint64_t stream);

  const size_t max_bytes_;
  std::function<void(uint64_t stream)> on_progress_dropped_;
  EntryList entries_;
  size_t head_written_ = 0;  // bytes of entries_.front() already written
  size_t bytes_ = 0;
  std::unordered_map<uint64_t, Slot> slots_;  // stream -> its unsent progress
  std::list<uint64_t> slot_age_;              // streams with a slot, oldest slot first
  size_t slot_bytes_ = 0;                     // bytes in slots: what dropping could free
  uint64_t dropped_logs_ = 0;
  uint64_t dropped_progress_ = 0;
};

}  // namespace keel
