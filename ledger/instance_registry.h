// InstanceRegistry: the keel processes that serve from one PostgreSQL database, and whether
// one of them is still alive (DIST-2). Keels on several machines cannot ask each other's
// kernel whether a pid runs, and must not compare their own clocks; so each keel that
// serves registers itself (owner name, host, pid, boot id) and renews a heartbeat, and both
// the heartbeat and every judgement of it use the server's clock (Database::ClockMs).
//
// An instance is gone when it has no row (it deregistered when it exited, or was pruned)
// or its last heartbeat is more than `gone_after_ms` old by the server's clock. A keel
// whose heartbeats could not be written for that long (a partition from the database)
// counts as gone to the others even if it still runs; what the others then do with its
// claims is safe anyway: a claim is adopted as needs_reconciliation and looked up, never
// run again blindly, and a process the claim started on another machine "may still run"
// (process_attempt.h, AttemptGoneHere).
//
// Used only with PostgreSQL: a SQLite file is on one machine, where "does the pid run"
// answers the question (remote_write.h, task_recovery.h).
//
// Thread-safety: none; one registry per connection, on the connection's thread.
// Errors: every member throws SqliteError when the database cannot be read or written;
// callers decide what that means (for Gone: "not known to be gone").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ledger/database.h"

namespace keel {

struct InstanceInfo {
  std::string owner;  // "keel-<pid>-<random>", as in the ledger and the task store
  std::string host;   // the machine's host name
  int64_t pid = 0;
  std::string boot_id;       // the machine's boot id ("" unreadable)
  int64_t started_ms = 0;    // server clock
  int64_t heartbeat_ms = 0;  // server clock
};

class InstanceRegistry {
 public:
  // A heartbeat every 2 s; an instance silent for 15 s is gone: several missed beats, so a
  // slow moment is not a death, and short next to the 60 s a claim's lease lasts.
  static constexpr int64_t kHeartbeatEveryMs = 2000;
  static constexpr int64_t kGoneAfterMs = 15000;
  // Rows of instances silent this long are deleted by Prune (their claims and tasks were
  // long since adopted; a missing row also means gone).
  static constexpr int64_t kForgetAfterMs = 24LL * 3600 * 1000;

  explicit InstanceRegistry(Database& db) : db_(db) {}

  // Registers (or re-registers) `self` with a heartbeat of now; started_ms and
  // heartbeat_ms in `self` are ignored.
  void Register(const InstanceInfo& self);
  // Renews the heartbeat of `self`; a row that is missing (pruned while this keel could not
  // reach the database) is written again.
  void Heartbeat(const InstanceInfo& self);
  // Removes `owner` (a clean exit: its claims and tasks are free to adopt at once).
  void Deregister(const std::string& owner);
  // True when `owner` has no row or has been silent longer than `gone_after_ms`.
  bool Gone(const std::string& owner, int64_t gone_after_ms = kGoneAfterMs);
  // Every registered instance, oldest first (`keel admin status`).
  std::vector<InstanceInfo> List();
  // Deletes rows silent longer than `older_than_ms`; how many.
  size_t Prune(int64_t older_than_ms = kForgetAfterMs);

 private:
  Database& db_;
};

}  // namespace keel
