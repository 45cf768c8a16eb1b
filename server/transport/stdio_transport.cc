#include "server/transport/stdio_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "server/transport/inbound.h"

namespace keel {

StdioTransport::StdioTransport(EventLoop& loop, StdioFd in, StdioFd out, size_t max_line_bytes,
                               size_t outbox_bytes, Dispatcher& dispatcher)
    : Exchange(kExchangeId),
      loop_(loop),
      in_(in),
      out_(out),
      max_line_bytes_(max_line_bytes),
      dispatcher_(dispatcher),
      framer_(
          max_line_bytes, [this](std::string_view line) { OnLine(line); },
          [this](size_t bytes) { AnswerOversizedLine(*this, bytes, max_line_bytes_); }),
      outbox_(outbox_bytes,
              [this](uint64_t stream) { dispatcher_.OnProgressDropped(*this, stream); }) {
  read_buffer_.resize(kReadChunkBytes);
  loop_.Watch(in_.fd, POLLIN, [this](short) { OnReadable(); });
  loop_.Watch(out_.fd, 0, [this](short revents) { OnWritable(revents); });
  loop_.AddBeforeWait([this] { Flush(); });
}

StdioTransport::~StdioTransport() {
  loop_.Unwatch(in_.fd);
  loop_.Unwatch(out_.fd);
}

void StdioTransport::StopReading() {
  reading_ = false;
  UpdateInterest();
}

void StdioTransport::SendResponse(std::string line) { outbox_.PushResponse(std::move(line)); }

void StdioTransport::SendProgress(uint64_t stream, std::string line) {
  outbox_.PushProgress(stream, std::move(line));
}

void StdioTransport::DiscardProgress(uint64_t stream) { outbox_.DiscardProgress(stream); }

void StdioTransport::SendLog(std::string line) { outbox_.PushLog(std::move(line)); }

void StdioTransport::OnLine(std::string_view line) {
  std::optional<Message> message = DecodeInbound(line, *this);
  if (message) dispatcher_.OnMessage(*this, std::move(*message));
}

void StdioTransport::OnReadable() {
  if (!reading_ || paused_) return;
  const ssize_t n = ReadSome(in_, read_buffer_.data(), read_buffer_.size());
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return;
    // A read error is as final as EOF: there is no more input to serve.
  }
  if (n <= 0) {
    // stdin EOF is how an MCP client ends the session: stop reading (never spin on it).
    framer_.Finish();
    StopReading();
    dispatcher_.OnInputEnded();
    return;
  }
  framer_.Feed(std::string_view(read_buffer_.data(), static_cast<size_t>(n)));
}

void StdioTransport::OnWritable(short revents) {
  if (revents & (POLLERR | POLLHUP | POLLNVAL)) return PeerGone();
  Flush();
}

void StdioTransport::PeerGone() {
  if (!MarkClosed()) return;
  UpdateInterest();
  dispatcher_.OnExchangeClosed(*this);
}

void StdioTransport::Flush() {
  if (!closed() && !outbox_.empty() && outbox_.WriteTo(out_) == Outbox::WriteStatus::kPeerGone) {
    return PeerGone();
  }
  UpdateInterest();
}

void StdioTransport::UpdateInterest() {
  // Hysteresis: resuming only below half keeps a slow reader from toggling us per line.
  if (paused_ && outbox_.bytes() < outbox_.max_bytes() / 2) paused_ = false;
  if (!paused_ && outbox_.bytes() >= outbox_.max_bytes()) paused_ = true;
  loop_.SetEvents(in_.fd, reading_ && !paused_ ? POLLIN : 0);
  loop_.SetEvents(out_.fd, !closed() && !outbox_.empty() ? POLLOUT : 0);
}

bool StdioTransport::FlushBlocking(TimePoint deadline) {
  const Clock& clock = loop_.clock();
  while (!closed() && !outbox_.empty()) {
    if (outbox_.WriteTo(out_) == Outbox::WriteStatus::kPeerGone) return false;
    if (outbox_.empty()) break;
    const auto left = std::chrono::ceil<Millis>(Deadline::At(deadline).Remaining(clock.Now()));
    if (left.count() <= 0) return false;
    pollfd pfd{out_.fd, POLLOUT, 0};
    poll(&pfd, 1, static_cast<int>(left.count()));
  }
  return outbox_.empty();
}

}  // namespace keel
