#include "ledger/commit_group.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>

#include <sqlite3.h>

namespace keel {

namespace {

constexpr std::chrono::milliseconds kMaxBudget = std::chrono::hours(1);

// The transaction this unit was in is gone: whatever it kept was not committed.
SqliteError Lost(const std::string& why) {
  return SqliteError(SQLITE_ABORT, "the ledger's shared transaction was rolled back (" + why +
                                       "); nothing of this write was committed");
}

bool InTransaction(Database& db) { return db.InTransaction(); }

}  // namespace

CommitGroup::Keep CommitGroup::Run(Database& own, std::chrono::milliseconds budget,
                                   const Body& body) {
  Unit unit;
  unit.body = &body;
  unit.deadline = Clock::now() + std::clamp(budget, std::chrono::milliseconds(0), kMaxBudget);
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&unit);
  while (!unit.done) {
    if (!leading_) {
      leading_ = true;
      std::vector<Unit*> batch;
      while (!queue_.empty() && batch.size() < kMaxUnits) {
        batch.push_back(queue_.front());
        queue_.pop_front();
        batch.back()->queued = false;
      }
      lock.unlock();
      const std::vector<Unit*> again = Write(connection_ ? *connection_ : own, batch);
      lock.lock();
      for (auto it = again.rbegin(); it != again.rend(); ++it) {
        (*it)->queued = true;
        queue_.push_front(*it);
      }
      leading_ = false;
      for (Unit* u : batch) {
        if (u->queued) continue;  // queued again
        u->done = true;
        if (u != &unit) u->wake.notify_one();
      }
      if (!queue_.empty()) queue_.front()->wake.notify_one();  // the next leader
      continue;
    }
    if (!unit.queued) {
      unit.wake.wait(lock);  // in a leader's batch: it finishes whatever the deadline says
      continue;
    }
    if (Clock::now() >= unit.deadline) {
      queue_.erase(std::find(queue_.begin(), queue_.end(), &unit));
      // It was perhaps the one woken to lead: pass that on.
      if (!leading_ && !queue_.empty()) queue_.front()->wake.notify_one();
      throw SqliteError(SQLITE_BUSY, "the ledger's write lock was not free within the wait budget");
    }
    unit.wake.wait_until(lock, unit.deadline);
  }
  lock.unlock();
  if (unit.error) std::rethrow_exception(unit.error);
  return unit.keep;
}

std::vector<CommitGroup::Unit*> CommitGroup::Write(Database& db, std::vector<Unit*> batch) {
  std::vector<Unit*> again;
  // The lock could not be had before the earliest deadline: those past it fail, the rest wait
  // for the next transaction.
  auto expire = [&](const SqliteError& busy) {
    const auto now = Clock::now();
    for (Unit* u : batch) {
      if (now >= u->deadline) {
        u->error = std::make_exception_ptr(busy);
      } else {
        again.push_back(u);
      }
    }
    return again;
  };
  auto earliest = batch.front()->deadline;
  for (const Unit* u : batch) earliest = std::min(earliest, u->deadline);
  auto remaining = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(earliest - Clock::now()),
                    std::chrono::milliseconds(0));
  };

  WriterGate::Hold hold;
  if (gate_ != nullptr && !gate_->Enter(remaining(), &hold)) {
    return expire(SqliteError(SQLITE_BUSY, "another writer of this process held the ledger"));
  }
  try {
    db.SetBusyTimeout(remaining());
    db.BeginImmediate();
    begun_.fetch_add(1, std::memory_order_acq_rel);
  } catch (const SqliteError& e) {
    if ((e.code & 0xff) == SQLITE_BUSY) return expire(e);
    for (Unit* u : batch) u->error = std::make_exception_ptr(e);
    return again;
  }

  // Units after one that lost the transaction have not run: they go on in the next one.
  const size_t ran = RunUnits(db, batch, 0);
  again.assign(batch.begin() + static_cast<std::ptrdiff_t>(ran), batch.end());
  batch.resize(ran);
  if (!InTransaction(db)) {
    // The transaction is gone, and what the units before kept with it.
    for (Unit* u : batch) {
      if (!u->error && u->keep == Keep::kKeep) {
        u->error = std::make_exception_ptr(Lost("a write in the same transaction failed"));
      }
    }
    return again;
  }
  try {
    db.Commit();
  } catch (const SqliteError& e) {
    db.Rollback();
    for (Unit* u : batch) {
      if (!u->error && u->keep == Keep::kKeep) u->error = std::make_exception_ptr(e);
    }
    return again;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++transactions_;
  units_ += batch.size();
  return again;
}

size_t CommitGroup::RunUnits(Database& db, const std::vector<Unit*>& batch, size_t next) {
  static constexpr std::string_view kOpen = "SAVEPOINT keel_unit";
  static constexpr std::string_view kUndo = "ROLLBACK TO SAVEPOINT keel_unit";
  static constexpr std::string_view kClose = "RELEASE SAVEPOINT keel_unit";
  bool open = false;  // batch[next]'s savepoint was opened with the one before's close
  for (; next < batch.size(); ++next) {
    Unit* u = batch[next];
    if (!open) {
      try {
        db.Prepare(kOpen).Run();
      } catch (const SqliteError& e) {
        u->error = std::make_exception_ptr(e);  // not run; the ones before may still commit
        u->keep = Keep::kUndo;
        if (!InTransaction(db)) return next + 1;
        continue;
      }
    }
    open = false;
    try {
      u->keep = (*u->body)(db);
    } catch (...) {
      u->error = std::current_exception();
      u->keep = Keep::kUndo;
    }
    if (!InTransaction(db)) {
      // SQLite rolled everything back on its own (or the body ended the transaction).
      if (!u->error && u->keep == Keep::kKeep) {
        u->error = std::make_exception_ptr(Lost("SQLite rolled it back during this write"));
      }
      return next + 1;
    }
    // This unit's end and the next one's savepoint in one script (one round trip on
    // PostgreSQL). If any of it fails, this unit is taken as lost with the transaction.
    std::string_view script[3];
    size_t statements = 0;
    if (u->error || u->keep == Keep::kUndo) script[statements++] = kUndo;
    script[statements++] = kClose;
    const bool more = next + 1 < batch.size();
    if (more) script[statements++] = kOpen;
    try {
      db.RunScript(std::span<const std::string_view>(script, statements));
      open = more;
    } catch (const SqliteError& e) {
      if (!u->error && u->keep == Keep::kKeep) u->error = std::make_exception_ptr(Lost(e.what()));
      db.Rollback();
      return next + 1;
    }
  }
  return next;
}

uint64_t CommitGroup::transactions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return transactions_;
}

uint64_t CommitGroup::units() const {
  std::lock_guard<std::mutex> lock(mu_);
  return units_;
}

size_t CommitGroup::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace keel
