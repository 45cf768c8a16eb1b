// StdioTransport: newline-delimited JSON-RPC over two fds (keel's private handles on stdin
// and stdout, see StdioFd: their I/O never blocks). It is the stdio Transport and its one
// Exchange (transport.h): it frames input with LineFramer, decodes each line (inbound.h)
// and delivers the messages to its Dispatcher; it queues output in a bounded Outbox and
// writes only when the fd accepts bytes. Loop thread only.
//
// Invariants (`outbox_bytes` is the bound given to the constructor, BP-1):
//  1. Reading stops for good at EOF or StopReading(); it pauses while the outbox holds
//     at least outbox_bytes (backpressure to a client that stopped reading: nothing
//     already accepted is dropped, and memory stays bounded) and resumes below half.
//     EOF is reported once, as OnInputEnded, after the last line was delivered.
//  2. Progress that the outbox drops to stay within its bound is reported per stream
//     through OnProgressDropped (the request then needs a resync).
//  3. The outbox is flushed once per loop iteration, before the loop waits, so replies
//     produced together leave in one writev().
//  4. A write error (EPIPE: the client is gone) closes the exchange: reported once
//     through OnExchangeClosed, and nothing is written after it.
//  5. Lines that are blank, cannot be decoded, or exceed max_line_bytes never reach the
//     dispatcher; the transport answers them itself (inbound.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/line_framer.h"
#include "server/runtime/event_loop.h"
#include "server/transport/exchange.h"
#include "server/transport/outbox.h"
#include "server/transport/stdio_fd.h"
#include "server/transport/transport.h"

namespace keel {

class StdioTransport final : public Transport, public Exchange {
 public:
  static constexpr size_t kReadChunkBytes = 64 << 10;
  // The one exchange of a stdio process.
  static constexpr ExchangeId kExchangeId = 1;

  // `outbox_bytes` bounds the outbox (--outbox-bytes): see invariants 1 and 2.
  // `dispatcher` must outlive the transport.
  StdioTransport(EventLoop& loop, StdioFd in, StdioFd out, size_t max_line_bytes,
                 size_t outbox_bytes, Dispatcher& dispatcher);
  ~StdioTransport() override;

  // Transport.
  void StopReading() override;
  bool FlushBlocking(TimePoint deadline) override;

  bool reading() const { return reading_; }
  // True while reading is paused because the outbox is full (invariant 1).
  bool paused() const { return paused_; }

  // Exchange (OutputSink).
  void SendResponse(std::string line) override;
  void SendProgress(uint64_t stream, std::string line) override;
  void DiscardProgress(uint64_t stream) override;
  void SendLog(std::string line) override;

  const Outbox& outbox() const { return outbox_; }

 private:
  void OnLine(std::string_view line);
  void OnReadable();
  void OnWritable(short revents);
  void Flush();
  // The client stopped reading stdout: the exchange is closed (invariant 4).
  void PeerGone();
  void UpdateInterest();

  EventLoop& loop_;
  StdioFd in_;
  StdioFd out_;
  const size_t max_line_bytes_;
  Dispatcher& dispatcher_;
  LineFramer framer_;
  Outbox outbox_;
  std::string read_buffer_;
  bool reading_ = true;
  bool paused_ = false;
};

}  // namespace keel
