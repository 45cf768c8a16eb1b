#include "server/transport/outbox.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <iterator>

#include <sys/uio.h>

namespace keel {

Outbox::Outbox(size_t max_bytes, std::function<void(uint64_t stream)> on_progress_dropped)
    : max_bytes_(max_bytes), on_progress_dropped_(std::move(on_progress_dropped)) {}

void Outbox::Append(std::string line, uint64_t stream) {
  bytes_ += line.size();
  entries_.push_back(Entry{std::move(line), stream});
  if (stream == 0) return;
  slot_bytes_ += entries_.back().data.size();
  slot_age_.push_back(stream);
  slots_.emplace(stream, Slot{std::prev(entries_.end()), std::prev(slot_age_.end())});
}

void Outbox::PushResponse(std::string line) {
  line += '\n';
  Append(std::move(line), 0);
}

void Outbox::PushProgress(uint64_t stream, std::string line) {
  assert(stream != 0);
  line += '\n';
  const size_t size = line.size();
  auto slot = slots_.find(stream);
  if (slot != slots_.end() && size <= slot->second.entry->data.size()) {
    // Overwriting in place with a line no longer than the old one never needs room.
    bytes_ -= slot->second.entry->data.size() - size;
    slot_bytes_ -= slot->second.entry->data.size() - size;
    slot->second.entry->data = std::move(line);
    return;
  }
  std::vector<uint64_t> dropped;
  // What no drop can free: responses, logs, a partly written head. If the line does not
  // fit beside that alone, dropping the other streams' progress would lose them for nothing.
  if (bytes_ - slot_bytes_ + size > max_bytes_) {
    ++dropped_progress_;
    dropped.push_back(stream);
  } else if (slot != slots_.end()) {
    const size_t growth = size - slot->second.entry->data.size();
    MakeRoom(growth, stream, &dropped);
    bytes_ += growth;
    slot_bytes_ += growth;
    slot->second.entry->data = std::move(line);
  } else {
    MakeRoom(size, stream, &dropped);
    Append(std::move(line), stream);
  }
  // Reported last, so a callback that pushes finds the outbox consistent.
  if (on_progress_dropped_) {
    for (uint64_t s : dropped) on_progress_dropped_(s);
  }
}

void Outbox::MakeRoom(size_t incoming, uint64_t keep, std::vector<uint64_t>* dropped) {
  while (bytes_ + incoming > max_bytes_) {
    auto oldest = slot_age_.begin();
    if (oldest != slot_age_.end() && *oldest == keep) ++oldest;
    assert(oldest != slot_age_.end());  // the caller checked that dropping every slot suffices
    const uint64_t stream = *oldest;
    Remove(stream);
    ++dropped_progress_;
    dropped->push_back(stream);
  }
}

void Outbox::DiscardProgress(uint64_t stream) {
  if (slots_.count(stream) != 0) Remove(stream);
}

void Outbox::Remove(uint64_t stream) {
  auto it = slots_.find(stream);
  const size_t size = it->second.entry->data.size();
  bytes_ -= size;
  slot_bytes_ -= size;
  entries_.erase(it->second.entry);
  slot_age_.erase(it->second.age);
  slots_.erase(it);
}

void Outbox::Detach(Entry& entry) {
  if (entry.stream == 0) return;
  auto it = slots_.find(entry.stream);
  slot_bytes_ -= entry.data.size();
  slot_age_.erase(it->second.age);
  slots_.erase(it);
  entry.stream = 0;
}

void Outbox::PushLog(std::string line) {
  // Logs yield to everything else: half the bound is left for responses and progress.
  if (bytes_ >= max_bytes_ / 2) {
    ++dropped_logs_;
    return;
  }
  line += '\n';
  Append(std::move(line), 0);
}

size_t Outbox::CopyOut(char* buf, size_t max) {
  size_t copied = 0;
  while (copied < max && !entries_.empty()) {
    Entry& front = entries_.front();
    Detach(front);  // taken, or partly taken: either way no longer a slot
    const size_t remaining = front.data.size() - head_written_;
    const size_t n = std::min(remaining, max - copied);
    std::memcpy(buf + copied, front.data.data() + head_written_, n);
    copied += n;
    bytes_ -= n;
    if (n < remaining) {
      head_written_ += n;
      break;
    }
    entries_.pop_front();
    head_written_ = 0;
  }
  return copied;
}

Outbox::WriteStatus Outbox::WriteTo(const StdioFd& out) {
  constexpr size_t kMaxIov = 64;
  while (!entries_.empty()) {
    iovec iov[kMaxIov];
    size_t count = 0;
    for (auto it = entries_.begin(); it != entries_.end() && count < kMaxIov; ++it, ++count) {
      const size_t skip = count == 0 ? head_written_ : 0;
      iov[count].iov_base = it->data.data() + skip;
      iov[count].iov_len = it->data.size() - skip;
    }
    const ssize_t n = WriteSome(out, iov, static_cast<int>(count));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return WriteStatus::kBlocked;
      return WriteStatus::kPeerGone;  // EPIPE and friends: nobody is reading any more
    }
    size_t left = static_cast<size_t>(n);
    bytes_ -= left;
    while (left > 0) {
      Entry& front = entries_.front();
      Detach(front);  // written, or partly written: either way no longer a slot
      const size_t remaining = front.data.size() - head_written_;
      if (left < remaining) {
        head_written_ += left;
        break;
      }
      left -= remaining;
      entries_.pop_front();
      head_written_ = 0;
    }
  }
  return WriteStatus::kDrained;
}

}  // namespace keel
