#include "ledger/schema.h"

#include <string_view>
#include <vector>

namespace keel {

namespace {

// Migration N (1-based) brings user_version from N-1 to N. Append only: a released step is
// never edited, because files out there already ran it.
// A table (one SQL literal per step), long by nature: the size rule for functions does not
// apply to it.
const std::vector<std::string_view>& Migrations() {  // NOLINT(readability-function-size): a table
  static const std::vector<std::string_view> steps = {
      // 1: the mutation ledger and the in-database demo backends.
      R"sql(
CREATE TABLE ledger(
  tool TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL
    CHECK(state IN ('in_progress', 'committed', 'failed', 'needs_reconciliation')),
  result TEXT,
  owner TEXT NOT NULL,
  lease_until_ms INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  executions INTEGER NOT NULL DEFAULT 0,
  operation_id TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(tool, key)
) WITHOUT ROWID;
-- The reaper deletes terminal rows by expiry.
CREATE INDEX ledger_by_expiry ON ledger(expires_ms);

CREATE TABLE accounts(account TEXT PRIMARY KEY, balance_cents INTEGER NOT NULL);
CREATE TABLE charges(
  charge_id TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  cents INTEGER NOT NULL,
  idempotency_key TEXT,
  created_ms INTEGER NOT NULL
);
CREATE TABLE inventory(
  tenant TEXT NOT NULL,
  sku TEXT NOT NULL,
  stock INTEGER NOT NULL,
  PRIMARY KEY(tenant, sku)
);
CREATE TABLE reservations(
  reservation_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  sku TEXT NOT NULL,
  quantity INTEGER NOT NULL,
  idempotency_key TEXT,
  created_ms INTEGER NOT NULL
);
)sql",
      // 2: durable MCP tasks (TaskStore).
      R"sql(
CREATE TABLE tasks(
  -- AUTOINCREMENT: a seq is never reused after its row is deleted, so list cursors
  -- (after_seq) stay valid across sweeps.
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL UNIQUE,
  tool TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK(status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  ttl_ms INTEGER,      -- NULL: unlimited
  expires_ms INTEGER,  -- created_ms + ttl_ms; NULL: never
  poll_interval_ms INTEGER NOT NULL,
  request TEXT NOT NULL,
  idempotency_key TEXT,
  fingerprint TEXT,
  result TEXT,
  error TEXT,
  cancel_phase TEXT NOT NULL DEFAULT 'none'
    CHECK(cancel_phase IN ('none', 'requested', 'observed', 'finished_after_cancel')),
  late_outcome TEXT,
  owner TEXT NOT NULL,
  owner_pid INTEGER NOT NULL,
  lease_until_ms INTEGER NOT NULL
);
-- At most one task per (tool, key); keyless tasks are unconstrained.
CREATE UNIQUE INDEX tasks_by_key ON tasks(tool, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- The sweeper and list() skip or delete by expiry; unlimited tasks never match.
CREATE INDEX tasks_by_expiry ON tasks(expires_ms) WHERE expires_ms IS NOT NULL;
-- Lease renewal and orphan recovery read only the unfinished tasks.
CREATE INDEX tasks_unfinished ON tasks(owner) WHERE status IN ('working', 'input_required');
)sql",
      // 3: operator settings that survive restarts (the kill switch for writes).
      R"sql(
CREATE TABLE settings(
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  updated_by TEXT NOT NULL
) WITHOUT ROWID;
)sql",
      // 4: the simulated deployment backend (server/tools/deployment_tools.h): its jobs, and
      // one operation per idempotency key (the backend's own guarantee).
      R"sql(
CREATE TABLE deploy_jobs(
  job_id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  version TEXT NOT NULL,
  restarts INTEGER NOT NULL DEFAULT 0,
  last_operation_id TEXT,
  last_restart_ms INTEGER
) WITHOUT ROWID;
INSERT INTO deploy_jobs(job_id, environment, version) VALUES
  ('web-api', 'production', '2026.11.3'),
  ('worker', 'production', '2026.11.3'),
  ('billing-sync', 'staging', '2026.11.4-rc1');
CREATE TABLE deploy_operations(
  operation_id TEXT PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  job_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  intent_id TEXT NOT NULL,
  approval_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_ms INTEGER NOT NULL
) WITHOUT ROWID;
)sql",
      // 5: the process run of a remote claim (IDEM-5): a claim whose command may
      // still run is not released by a lookup. NULL boot id: no run recorded.
      R"sql(
ALTER TABLE ledger ADD COLUMN attempt_boot_id TEXT;
ALTER TABLE ledger ADD COLUMN attempt_pgid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN attempt_start_ticks INTEGER NOT NULL DEFAULT 0;
)sql",
      // 6: a task parked in input_required (TaskStore::Park): what it asks, and the answers
      // given so far (kept for the re-run of its work). NULL: none.
      R"sql(
ALTER TABLE tasks ADD COLUMN input_requests TEXT;
ALTER TABLE tasks ADD COLUMN input_answers TEXT;
)sql",
  };
  return steps;
}

int64_t UserVersion(Database& db) {
  Statement stmt = db.Prepare("PRAGMA user_version");
  return stmt.Step() ? stmt.Int64(0) : 0;
}

}  // namespace

int SchemaVersion() { return static_cast<int>(Migrations().size()); }

MigrateStatus Migrate(Database& db, std::string* error) {
  try {
    if (UserVersion(db) > SchemaVersion()) {
      *error = "the database has schema version " + std::to_string(UserVersion(db)) +
               ", newer than this keel (" + std::to_string(SchemaVersion()) + ")";
      return MigrateStatus::kNewerThanBinary;
    }
    for (int version = 1; version <= SchemaVersion(); ++version) {
      WriteTransaction txn(db);
      // Read again under the write lock: another process may have migrated meanwhile.
      const int64_t current = UserVersion(db);
      if (current > SchemaVersion()) {
        *error = "the database was migrated past this keel's schema version meanwhile";
        return MigrateStatus::kNewerThanBinary;
      }
      if (current >= version) continue;
      const std::string_view step = Migrations()[version - 1];
      if (std::string e = db.Exec(std::string(step)); !e.empty()) {
        *error = "migration " + std::to_string(version) + ": " + e;
        return MigrateStatus::kError;
      }
      // user_version lives in the file header, so it commits (or rolls back) with the step.
      if (std::string e = db.Exec("PRAGMA user_version = " + std::to_string(version)); !e.empty()) {
        *error = "migration " + std::to_string(version) + ": " + e;
        return MigrateStatus::kError;
      }
      txn.Commit();
    }
  } catch (const SqliteError& e) {
    *error = e.what();
    return MigrateStatus::kError;
  }
  return MigrateStatus::kOk;
}

}  // namespace keel
