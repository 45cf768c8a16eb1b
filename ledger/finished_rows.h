// FinishedRows: a bounded cache, shared by one process's ledgers, of finished ledger rows
// (committed or failed), so that a replay is answered without a round trip to the database.
// On PostgreSQL a replay is otherwise one query to another process, which caps replays well
// below the 20000/s a retry storm needs (`scripts/bench --ledger`).
//
// Why it is safe: a finished row never changes (mutation_ledger.h, invariant 1) until it
// expires (invariant 5), and an entry is served only before its expires_ms by the clock the
// ledger judges rows by (the database's). A row whose stored result cannot be read is never
// kept: its error is decided by a read each time. Find returns a copy: no caller can change
// what the next one reads.
// What it costs: at most `max_bytes` of rows (their result's JSON text and keys), the least
// recently used dropped first.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "ledger/mutation_ledger.h"

namespace keel {

class FinishedRows {
 public:
  static constexpr size_t kDefaultMaxBytes = size_t{8} << 20;

  explicit FinishedRows(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}
  FinishedRows(const FinishedRows&) = delete;
  FinishedRows& operator=(const FinishedRows&) = delete;

  // The row of (tool, key) if kept and not expired at `now_ms`.
  std::optional<LedgerRecord> Find(const std::string& tool, const std::string& key, int64_t now_ms);
  // Keeps `row` if it is finished and its result readable (anything else is ignored).
  void Remember(const LedgerRecord& row);

  size_t size() const;
  size_t bytes() const;

 private:
  struct Entry {
    std::string id;  // tool, NUL, key
    LedgerRecord row;
    size_t bytes = 0;
  };

  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first; guarded by mu_, as the two below
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  size_t bytes_ = 0;
  const size_t max_bytes_;
};

}  // namespace keel
