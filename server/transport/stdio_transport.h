// StdioTransport: newline-delimited JSON-RPC over two fds (keel's private handles on stdin
// and stdout, see StdioFd: their I/O never blocks). It frames input with LineFramer, queues
// output in a bounded Outbox, and writes only when the fd accepts bytes. Loop thread only.
//
// Invariants (`outbox_bytes` is the bound given to the constructor, BP-1):
//  1. Reading stops for good at EOF or StopReading(); it pauses while the outbox holds
//     at least outbox_bytes (backpressure to a client that stopped reading: nothing
//     already accepted is dropped, and memory stays bounded) and resumes below half.
//  2. Progress that the outbox drops to stay within its bound is reported per stream
//     through on_progress_dropped (the request then needs a resync).
//  3. The outbox is flushed once per loop iteration, before the loop waits, so replies
//     produced together leave in one writev().
//  4. A write error (EPIPE: the client is gone) is reported once through on_peer_gone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "protocol/line_framer.h"
#include "server/runtime/event_loop.h"
#include "server/transport/outbox.h"
#include "server/transport/output_sink.h"
#include "server/transport/stdio_fd.h"

namespace keel {

class StdioTransport final : public OutputSink {
 public:
  static constexpr size_t kReadChunkBytes = 64 << 10;

  struct Callbacks {
    std::function<void(std::string_view line)> on_line;
    std::function<void(size_t bytes)> on_oversized;
    std::function<void()> on_eof;
    std::function<void()> on_peer_gone;
    // The outbox dropped unsent progress of `stream` (see Outbox).
    std::function<void(uint64_t stream)> on_progress_dropped;
  };

  // `outbox_bytes` bounds the outbox (--outbox-bytes): see invariants 1 and 2.
  StdioTransport(EventLoop& loop, StdioFd in, StdioFd out, size_t max_line_bytes,
                 size_t outbox_bytes, Callbacks callbacks);
  ~StdioTransport() override;

  void StopReading();
  bool reading() const { return reading_; }
  // True while reading is paused because the outbox is full (invariant 1).
  bool paused() const { return paused_; }

  // OutputSink.
  void SendResponse(std::string line) override;
  void SendProgress(uint64_t stream, std::string line) override;
  void DiscardProgress(uint64_t stream) override;
  void SendLog(std::string line) override;

  // Blocks until the outbox is written or the deadline passes (exit path only).
  // True when everything was written.
  bool FlushBlocking(TimePoint deadline);

  const Outbox& outbox() const { return outbox_; }

 private:
  void OnReadable();
  void OnWritable(short revents);
  void Flush();
  // The client stopped reading stdout: reported once through on_peer_gone.
  void PeerGone();
  void UpdateInterest();

  EventLoop& loop_;
  StdioFd in_;
  StdioFd out_;
  Callbacks callbacks_;
  LineFramer framer_;
  Outbox outbox_;
  std::string read_buffer_;
  bool reading_ = true;
  bool paused_ = false;
  bool peer_gone_ = false;
};

}  // namespace keel
