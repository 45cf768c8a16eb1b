#include "server/outbox.h"

#include <sys/uio.h>

#include <cerrno>

namespace keel {

void Outbox::Push(std::string line, uint64_t stream) {
  line += '\n';
  bytes_ += line.size();
  entries_.push_back(Entry{std::move(line), stream, next_seq_++});
}

void Outbox::PushResponse(std::string line) { Push(std::move(line), 0); }

void Outbox::PushProgress(uint64_t stream, std::string line) {
  auto slot = progress_slot_.find(stream);
  if (slot != progress_slot_.end() && !entries_.empty()) {
    const uint64_t front_seq = entries_.front().seq;
    // Replace only a slot that is still queued and not partly written.
    if (slot->second > front_seq || (slot->second == front_seq && head_written_ == 0)) {
      Entry& entry = entries_[slot->second - front_seq];
      line += '\n';
      bytes_ = bytes_ - entry.data.size() + line.size();
      entry.data = std::move(line);
      return;
    }
  }
  progress_slot_[stream] = next_seq_;
  Push(std::move(line), stream);
}

void Outbox::PushLog(std::string line) {
  if (bytes_ >= kMaxBytesForLogs) {
    ++dropped_logs_;
    return;
  }
  Push(std::move(line), 0);
}

Outbox::WriteStatus Outbox::WriteTo(int fd) {
  constexpr size_t kMaxIov = 64;
  while (!entries_.empty()) {
    iovec iov[kMaxIov];
    size_t count = 0;
    for (auto it = entries_.begin(); it != entries_.end() && count < kMaxIov; ++it, ++count) {
      const size_t skip = count == 0 ? head_written_ : 0;
      iov[count].iov_base = it->data.data() + skip;
      iov[count].iov_len = it->data.size() - skip;
    }
    const ssize_t n = writev(fd, iov, static_cast<int>(count));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return WriteStatus::kBlocked;
      return WriteStatus::kPeerGone;  // EPIPE and friends: nobody is reading any more
    }
    size_t left = static_cast<size_t>(n);
    bytes_ -= left;
    while (left > 0) {
      Entry& front = entries_.front();
      const size_t remaining = front.data.size() - head_written_;
      if (left < remaining) {
        head_written_ += left;
        break;
      }
      left -= remaining;
      if (front.stream != 0) {
        auto slot = progress_slot_.find(front.stream);
        if (slot != progress_slot_.end() && slot->second == front.seq) progress_slot_.erase(slot);
      }
      entries_.pop_front();
      head_written_ = 0;
    }
  }
  return WriteStatus::kDrained;
}

}  // namespace keel
