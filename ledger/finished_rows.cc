#include "ledger/finished_rows.h"

#include <utility>

namespace keel {
namespace {

std::string IdOf(const std::string& tool, const std::string& key) {
  std::string id = tool;
  id.push_back('\0');
  id += key;
  return id;
}

}  // namespace

std::optional<LedgerRecord> FinishedRows::Find(const std::string& tool, const std::string& key,
                                               int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = index_.find(IdOf(tool, key));
  if (it == index_.end()) return std::nullopt;
  const LedgerRecord& row = it->second->row;
  if (row.expires_ms != 0 && row.expires_ms <= now_ms) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
    return std::nullopt;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  return row;
}

void FinishedRows::Remember(const LedgerRecord& row) {
  if ((row.state != LedgerState::kCommitted && row.state != LedgerState::kFailed) ||
      !row.result.is_object()) {
    return;
  }
  Entry entry;
  entry.id = IdOf(row.tool, row.key);
  entry.bytes =
      entry.id.size() * 2 + row.fingerprint.size() + row.owner.size() + row.operation_id.size() +
      row.result.dump(-1, ' ', false, Json::error_handler_t::replace).size() + sizeof(Entry);
  if (entry.bytes > max_bytes_) return;
  entry.row = row;
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.count(entry.id) != 0) return;  // kept already (it cannot have changed)
  bytes_ += entry.bytes;
  lru_.push_front(std::move(entry));
  index_.emplace(lru_.front().id, lru_.begin());
  while (bytes_ > max_bytes_) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().id);
    lru_.pop_back();
  }
}

size_t FinishedRows::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

size_t FinishedRows::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace keel
