#include "ledger/mutation_ledger.h"

#include <algorithm>
#include <exception>
#include <utility>

#include <sqlite3.h>

#include "ledger/finished_rows.h"
#include "protocol/bounded_json.h"

namespace keel {

namespace {

// A writer holds the lock for about one fsync (WAL + FULL): worth checking back soon.
constexpr int64_t kBusyRetryAfterMs = 50;
// Our own process holds the claim and is still running the effect: poll, but not a whole
// lease apart.
constexpr int64_t kOwnClaimRetryCapMs = 1000;
// Complete/Release/MarkNeedsReconciliation record what already happened: losing that is
// worse than waiting for the lock a while.
constexpr std::chrono::milliseconds kOutcomeWait{5000};

constexpr std::string_view kSelectRow =
    "SELECT fingerprint, state, result, owner, lease_until_ms, attempts, executions, "
    "operation_id, created_ms, updated_ms, expires_ms, attempt_boot_id, attempt_pgid, "
    "attempt_start_ticks FROM ledger WHERE tool = ?1 AND key = ?2";

constexpr std::string_view kInsertRow =
    "INSERT INTO ledger(tool, key, fingerprint, state, result, owner, lease_until_ms, attempts, "
    "executions, operation_id, created_ms, updated_ms, expires_ms, attempt_boot_id, "
    "attempt_pgid, attempt_start_ticks) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, 1, ?8, ?9, ?9, ?10, ?11, ?12, ?13)";

LedgerState ParseState(std::string_view name) {
  if (name == "committed") return LedgerState::kCommitted;
  if (name == "failed") return LedgerState::kFailed;
  if (name == "needs_reconciliation") return LedgerState::kNeedsReconciliation;
  return LedgerState::kInProgress;  // the CHECK constraint admits nothing else
}

// Rebuilt from the stored text on every read: the caller owns a fresh copy (IDEM-4). The
// file may have been written by anyone: text that is not JSON, or nests deeper than anything
// keel reads (bounded_json.h), reads as null, never as a value that recurses when copied.
Json ParseResult(const Statement& row, int column) {
  if (row.IsNull(column)) return nullptr;
  return ParseBoundedJson(row.Text(column)).value;
}

std::optional<LedgerRecord> ReadRow(Database& db, const std::string& tool, const std::string& key) {
  Statement row = db.Prepare(kSelectRow);
  row.Bind(1, tool).Bind(2, key);
  if (!row.Step()) return std::nullopt;
  LedgerRecord record;
  record.tool = tool;
  record.key = key;
  record.fingerprint = row.Text(0);
  record.state = ParseState(row.Text(1));
  record.result = ParseResult(row, 2);
  record.owner = row.Text(3);
  record.lease_until_ms = row.Int64(4);
  record.attempts = row.Int64(5);
  record.executions = row.Int64(6);
  record.operation_id = row.Text(7);
  record.created_ms = row.Int64(8);
  record.updated_ms = row.Int64(9);
  record.expires_ms = row.Int64(10);
  if (!row.IsNull(11)) {
    record.attempt = LedgerAttempt{row.Text(11), row.Int64(12), row.Int64(13)};
  }
  return record;
}

void InsertRow(Database& db, const LedgerRecord& r, const std::optional<std::string>& result) {
  Statement insert = db.Prepare(kInsertRow);
  insert.Bind(1, r.tool).Bind(2, r.key).Bind(3, r.fingerprint).Bind(4, LedgerStateName(r.state));
  if (result) {
    insert.Bind(5, *result);
  } else {
    insert.BindNull(5);
  }
  insert.Bind(6, r.owner).Bind(7, r.lease_until_ms);
  if (r.operation_id.empty()) {
    insert.BindNull(8);
  } else {
    insert.Bind(8, r.operation_id);
  }
  insert.Bind(9, r.created_ms).Bind(10, r.expires_ms);
  if (r.attempt) {
    insert.Bind(11, r.attempt->boot_id).Bind(12, r.attempt->pgid).Bind(13, r.attempt->start_ticks);
  } else {
    insert.BindNull(11).Bind(12, int64_t{0}).Bind(13, int64_t{0});
  }
  insert.Run();
}

// The row InsertRow(r, result) wrote, as ReadRow would read it back (its result parsed from
// the text stored, so it equals every later replay), without a read: inside the group's
// transaction every statement costs the whole batch a round trip on PostgreSQL.
LedgerRecord AsInserted(LedgerRecord r, const std::optional<std::string>& result) {
  r.attempts = 1;
  r.executions = 1;
  r.updated_ms = r.created_ms;
  r.result = result ? ParseBoundedJson(*result).value : Json(nullptr);
  return r;
}

MutationLedger::Outcome Failure(MutationLedger::Status status, std::string error) {
  MutationLedger::Outcome out;
  out.status = status;
  out.error = std::move(error);
  return out;
}

MutationLedger::Outcome FromSqlite(const SqliteError& e) {
  if ((e.code & 0xff) == SQLITE_BUSY) {
    MutationLedger::Outcome out =
        Failure(MutationLedger::Status::kBusy,
                std::string("the ledger's write lock is held by another connection: ") + e.what());
    out.retry_after_ms = kBusyRetryAfterMs;
    return out;
  }
  return Failure(MutationLedger::Status::kError, std::string("ledger: ") + e.what());
}

}  // namespace

std::string_view LedgerStateName(LedgerState state) {
  switch (state) {
    case LedgerState::kInProgress:
      return "in_progress";
    case LedgerState::kCommitted:
      return "committed";
    case LedgerState::kFailed:
      return "failed";
    case LedgerState::kNeedsReconciliation:
      return "needs_reconciliation";
  }
  return "in_progress";
}

MutationLedger::MutationLedger(Database& db, Options options)
    : db_(db), options_(std::move(options)), own_group_(options_.writer) {}

int64_t MutationLedger::NowMs() const {
  if (options_.now_ms) return options_.now_ms();
  return db_.ClockMs();
}

std::optional<MutationLedger::Outcome> MutationLedger::AnswerFinished(
    const std::string& tool, const std::string& key, const std::string& fingerprint) {
  std::optional<LedgerRecord> row;
  if (options_.finished != nullptr) {
    row = options_.finished->Find(tool, key, NowMs());
  } else {
    row = ReadRow(db_, tool, key);
  }
  if (!row) return std::nullopt;  // absent: the write transaction decides
  return AnswerRow(*std::move(row), fingerprint);
}

std::optional<MutationLedger::Outcome> MutationLedger::AnswerRow(LedgerRecord row,
                                                                 const std::string& fingerprint) {
  if (row.state != LedgerState::kCommitted && row.state != LedgerState::kFailed) {
    return std::nullopt;  // unsettled: the write transaction decides
  }
  Outcome out;
  if (row.fingerprint != fingerprint) {
    out.status = Status::kMismatch;
    out.error = "idempotency key '" + row.key +
                "' was already used with different arguments "
                "for tool '" +
                row.tool + "'";
  } else {
    out.status = Status::kReplayed;
    out.result = row.result;
  }
  out.record = std::move(row);
  return out;
}

KillSwitchState MutationLedger::KillSwitchNow(Database& db) {
  KillSwitchMemo& memo = *options_.kill_switch;
  const CommitGroup* const current = &group();
  const uint64_t serial = current->transaction_serial();
  {
    std::lock_guard<std::mutex> lock(memo.mu);
    if (memo.group == current && memo.serial == serial) return memo.state;
  }
  KillSwitchState state = ReadKillSwitch(db);
  std::lock_guard<std::mutex> lock(memo.mu);
  memo.group = current;
  memo.serial = serial;
  memo.state = state;
  return state;
}

MutationLedger::Outcome MutationLedger::Presented(Database& db, const LedgerRecord& row,
                                                  const std::string& fingerprint, int64_t now) {
  Outcome out;
  LedgerState state = row.state;
  if (row.fingerprint != fingerprint) {
    // Checked before replay: a reused key must never hand back another intent's result.
    out.status = Status::kMismatch;
    out.error = "idempotency key '" + row.key +
                "' was already used with different arguments "
                "for tool '" +
                row.tool + "'";
  } else {
    switch (row.state) {
      case LedgerState::kCommitted:
      case LedgerState::kFailed:
        out.status = Status::kReplayed;
        break;
      case LedgerState::kNeedsReconciliation:
        out.status = Status::kNeedsReconciliation;
        break;
      case LedgerState::kInProgress:
        if (row.owner == options_.owner || row.lease_until_ms > now) {
          out.status = Status::kInProgress;
          out.retry_after_ms = std::max<int64_t>(1, row.lease_until_ms - now);
          if (row.owner == options_.owner) {
            out.retry_after_ms = std::min(out.retry_after_ms, kOwnClaimRetryCapMs);
          }
        } else {
          // The claimant died between claim and outcome: the effect may or may not have
          // happened, so it is never run again blindly.
          state = LedgerState::kNeedsReconciliation;
          out.status = Status::kNeedsReconciliation;
        }
        break;
    }
  }
  if (out.status == Status::kInProgress) {
    out.error = "idempotency key '" + row.key + "' is being executed by " + row.owner;
  } else if (out.status == Status::kNeedsReconciliation) {
    out.error = "idempotency key '" + row.key + "': an earlier execution (by " + row.owner +
                ") ended without a recorded outcome; reconcile by key";
  }

  {
    Statement update = db.Prepare(
        "UPDATE ledger SET attempts = attempts + 1, state = ?3, updated_ms = ?4 "
        "WHERE tool = ?1 AND key = ?2");
    update.Bind(1, row.tool).Bind(2, row.key).Bind(3, LedgerStateName(state));
    update.Bind(4, state == row.state ? row.updated_ms : now);
    update.Run();
  }
  out.record = *ReadRow(db, row.tool, row.key);
  if (out.status == Status::kReplayed) out.result = out.record.result;
  return out;
}

MutationLedger::Outcome MutationLedger::WithNewKey(
    const std::string& tool, const std::string& key, const std::string& fingerprint,
    std::chrono::milliseconds wait_budget,
    const std::function<CommitGroup::Keep(Database& db, int64_t now, Outcome* out)>& claim) {
  if (fingerprint.empty()) return Failure(Status::kError, "ledger: empty fingerprint");
  int64_t now = 0;
  bool created = false;            // this call's unit wrote the key's row (kept, not yet committed)
  bool answered_finished = false;  // the transaction found the key finished
  try {
    now = NowMs();
    if (std::optional<Outcome> finished = AnswerFinished(tool, key, fingerprint)) {
      return *std::move(finished);
    }
    Outcome out;
    group().Run(db_, wait_budget, [&](Database& db) {
      if (std::optional<LedgerRecord> row = ReadRow(db, tool, key)) {
        if (std::optional<Outcome> finished = AnswerRow(*row, fingerprint)) {
          // A replay or a mismatch writes nothing. Kept (not undone) all the same: the row
          // may be an earlier unit's of this very transaction, and if that does not commit,
          // this answer must fail with it.
          out = *std::move(finished);
          answered_finished = true;
          return CommitGroup::Keep::kKeep;
        }
        out = Presented(db, *row, fingerprint, now);
        return CommitGroup::Keep::kKeep;
      }
      const CommitGroup::Keep keep = claim(db, now, &out);
      created = keep == CommitGroup::Keep::kKeep && out.status == Status::kExecuted;
      return keep;
    });
    // Committed: a finished row read in the transaction may now be served from memory.
    if (answered_finished && options_.finished != nullptr) options_.finished->Remember(out.record);
    return out;
  } catch (const SqliteError& e) {
    if (!created || (e.code & 0xff) != SQLITE_IOERR) return FromSqlite(e);
    return FoundOut(tool, key, fingerprint, now, e);
  }
}

MutationLedger::Outcome MutationLedger::FoundOut(const std::string& tool, const std::string& key,
                                                 const std::string& fingerprint, int64_t now,
                                                 const SqliteError& lost) {
  std::optional<LedgerRecord> row;
  try {
    row = ReadRow(db_, tool, key);
  } catch (const SqliteError& again) {
    return Failure(Status::kError, std::string("ledger: the COMMIT of key '") + key +
                                       "' lost its answer (" + lost.what() +
                                       ") and the key cannot be read back (" + again.what() +
                                       "): its outcome is unknown");
  }
  if (row && row->owner == options_.owner && row->created_ms == now &&
      row->fingerprint == fingerprint) {
    Outcome out;
    out.status = Status::kExecuted;
    out.record = std::move(*row);
    out.result = out.record.result;
    return out;
  }
  return Failure(Status::kError, std::string("ledger: the write of key '") + key +
                                     "' did not commit (" + lost.what() +
                                     "); nothing of it happened, and a retry runs it");
}

MutationLedger::Outcome MutationLedger::RunInDatabase(
    const std::string& tool, const std::string& key, const std::string& fingerprint,
    std::chrono::milliseconds wait_budget, const std::function<EffectOutcome(Database&)>& effect) {
  using Keep = CommitGroup::Keep;
  return WithNewKey(
      tool, key, fingerprint, wait_budget, [&](Database& db, int64_t now, Outcome* out) {
        if (options_.kill_switch != nullptr) {
          KillSwitchState state = KillSwitchNow(db);
          if (state.blocked) {
            out->status = Status::kBlocked;
            out->error = "writes are blocked by the kill switch";
            out->kill_switch = std::move(state);
            return Keep::kUndo;
          }
        }
        EffectOutcome done;
        try {
          done = effect(db);
        } catch (const std::exception& e) {
          *out = Failure(Status::kError, std::string("the effect failed: ") + e.what());
          return Keep::kUndo;
        } catch (...) {
          *out = Failure(Status::kError, "the effect failed");
          return Keep::kUndo;
        }
        if (!db.InTransaction()) {
          // Some SQLite errors roll the transaction back on their own; the effect's writes are
          // gone, so the key must not be recorded as executed.
          *out = Failure(Status::kError, "the effect's transaction was rolled back");
          return Keep::kUndo;
        }
        if (done.transient) {
          // Rolled back to its savepoint: no row, no effect; a retry runs again.
          out->status = Status::kExecuted;
          out->result = std::move(done.result);
          return Keep::kUndo;
        }

        LedgerRecord record;
        record.tool = tool;
        record.key = key;
        record.fingerprint = fingerprint;
        record.state = done.failed ? LedgerState::kFailed : LedgerState::kCommitted;
        record.owner = options_.owner;
        record.operation_id = done.operation_id;
        record.created_ms = now;
        record.expires_ms = now + options_.ttl_ms;
        const std::string text = done.result.dump(-1, ' ', false, Json::error_handler_t::replace);
        InsertRow(db, record, text);

        out->record = AsInserted(std::move(record), text);
        out->status = Status::kExecuted;
        out->result = out->record.result;  // as stored, so it equals every later replay
        return Keep::kKeep;
      });
}

MutationLedger::Outcome MutationLedger::Claim(const std::string& tool, const std::string& key,
                                              const std::string& fingerprint,
                                              std::chrono::milliseconds wait_budget,
                                              std::optional<int64_t> lease_ms,
                                              const std::optional<LedgerAttempt>& attempt) {
  return WithNewKey(tool, key, fingerprint, wait_budget,
                    [&](Database& db, int64_t now, Outcome* out) {
                      LedgerRecord record;
                      record.tool = tool;
                      record.key = key;
                      record.fingerprint = fingerprint;
                      record.state = LedgerState::kInProgress;
                      record.owner = options_.owner;
                      record.lease_until_ms = now + lease_ms.value_or(options_.lease_ms);
                      record.created_ms = now;
                      record.attempt = attempt;
                      // executions counts the effect as started: the caller runs it once this
                      // commits.
                      InsertRow(db, record, std::nullopt);
                      out->record = AsInserted(std::move(record), std::nullopt);
                      out->status = Status::kExecuted;
                      return CommitGroup::Keep::kKeep;
                    });
}

bool MutationLedger::WriteOwnRow(std::string_view sql,
                                 const std::function<void(Statement&, int64_t now)>& bind) {
  try {
    const int64_t now = NowMs();
    int64_t changed = 0;
    group().Run(db_, kOutcomeWait, [&](Database& db) {
      Statement stmt = db.Prepare(sql);
      bind(stmt, now);
      stmt.Run();
      changed = db.Changes();
      return CommitGroup::Keep::kKeep;
    });
    return changed == 1;
  } catch (const SqliteError&) {
    // The claim stays as it was; a live lease expires into needs_reconciliation.
    return false;
  }
}

bool MutationLedger::Complete(const std::string& tool, const std::string& key, const Json& result,
                              bool failed, const std::string& operation_id) {
  const std::string text = result.dump(-1, ' ', false, Json::error_handler_t::replace);
  return WriteOwnRow(
      "UPDATE ledger SET state = ?4, result = ?5, operation_id = COALESCE(?6, operation_id), "
      "lease_until_ms = 0, updated_ms = ?7, expires_ms = ?8 "
      "WHERE tool = ?1 AND key = ?2 AND owner = ?3 "
      "AND state IN ('in_progress', 'needs_reconciliation')",
      [&](Statement& s, int64_t now) {
        s.Bind(1, tool).Bind(2, key).Bind(3, options_.owner);
        s.Bind(4, LedgerStateName(failed ? LedgerState::kFailed : LedgerState::kCommitted));
        s.Bind(5, text);
        if (operation_id.empty()) {
          s.BindNull(6);
        } else {
          s.Bind(6, operation_id);
        }
        s.Bind(7, now).Bind(8, now + options_.ttl_ms);
      });
}

bool MutationLedger::Release(const std::string& tool, const std::string& key) {
  return WriteOwnRow(
      "DELETE FROM ledger WHERE tool = ?1 AND key = ?2 AND owner = ?3 "
      "AND state IN ('in_progress', 'needs_reconciliation')",
      [&](Statement& s, int64_t) { s.Bind(1, tool).Bind(2, key).Bind(3, options_.owner); });
}

bool MutationLedger::MarkNeedsReconciliation(const std::string& tool, const std::string& key) {
  return WriteOwnRow(
      "UPDATE ledger SET state = 'needs_reconciliation', updated_ms = ?4 "
      "WHERE tool = ?1 AND key = ?2 AND owner = ?3 AND state = 'in_progress'",
      [&](Statement& s, int64_t now) {
        s.Bind(1, tool).Bind(2, key).Bind(3, options_.owner).Bind(4, now);
      });
}

bool MutationLedger::RecordAttempt(const std::string& tool, const std::string& key,
                                   const LedgerAttempt& attempt) {
  return WriteOwnRow(
      "UPDATE ledger SET attempt_boot_id = ?4, attempt_pgid = ?5, attempt_start_ticks = ?6 "
      "WHERE tool = ?1 AND key = ?2 AND owner = ?3 AND state = 'in_progress'",
      [&](Statement& s, int64_t) {
        s.Bind(1, tool).Bind(2, key).Bind(3, options_.owner).Bind(4, attempt.boot_id);
        s.Bind(5, attempt.pgid).Bind(6, attempt.start_ticks);
      });
}

bool MutationLedger::Adopt(const std::string& tool, const std::string& key,
                           const std::string& from_owner, bool owner_gone) {
  return WriteOwnRow(
      "UPDATE ledger SET owner = ?3, state = 'needs_reconciliation', lease_until_ms = 0, "
      "updated_ms = ?4 WHERE tool = ?1 AND key = ?2 AND owner = ?5 AND "
      "(state = 'needs_reconciliation' OR "
      "(state = 'in_progress' AND (lease_until_ms <= ?4 OR ?6)))",
      [&](Statement& s, int64_t now) {
        s.Bind(1, tool).Bind(2, key).Bind(3, options_.owner).Bind(4, now).Bind(5, from_owner);
        s.Bind(6, static_cast<int64_t>(owner_gone ? 1 : 0));
      });
}

// The two reads below let SqliteError through: an empty answer would say "nothing
// unsettled" or "no call with that key ran" about a file that could not be read.
std::vector<LedgerRecord> MutationLedger::Unsettled(const std::string& tool, size_t limit) {
  std::vector<std::string> found;
  {
    Statement keys = db_.Prepare(
        "SELECT key FROM ledger WHERE tool = ?1 AND state IN ('in_progress', "
        "'needs_reconciliation') ORDER BY created_ms LIMIT ?2");
    keys.Bind(1, tool).Bind(2, static_cast<int64_t>(limit));
    while (keys.Step()) found.push_back(keys.Text(0));
  }
  std::vector<LedgerRecord> rows;
  for (const std::string& key : found) {
    if (auto row = ReadRow(db_, tool, key)) rows.push_back(std::move(*row));
  }
  return rows;
}

std::optional<LedgerRecord> MutationLedger::Lookup(const std::string& tool,
                                                   const std::string& key) {
  return ReadRow(db_, tool, key);
}

size_t MutationLedger::ReapExpired() {
  try {
    const int64_t now = NowMs();
    int64_t deleted = 0;
    group().Run(db_, kOutcomeWait, [&](Database& db) {
      Statement reap = db.Prepare(
          "DELETE FROM ledger WHERE state IN ('committed', 'failed') AND expires_ms <= ?1");
      reap.Bind(1, now).Run();
      deleted = db.Changes();
      return CommitGroup::Keep::kKeep;
    });
    return static_cast<size_t>(deleted);
  } catch (const SqliteError&) {
    return 0;  // the next sweep tries again
  }
}

}  // namespace keel
