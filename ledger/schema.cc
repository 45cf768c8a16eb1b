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

// PostgreSQL (`--db postgresql://...`): its own steps, version N of its own in keel_schema.
// Step 1 is SQLite's steps 1-6 as one: the same tables and columns, with BIGINT for every
// integer (milliseconds since the epoch do not fit PostgreSQL's INTEGER) and an identity
// column for the task seq. Append only, as above.
const std::vector<std::string_view>& PostgresMigrations() {  // NOLINT(readability-function-size)
  static const std::vector<std::string_view> steps = {
      R"sql(
CREATE TABLE ledger(
  tool TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL
    CHECK(state IN ('in_progress', 'committed', 'failed', 'needs_reconciliation')),
  result TEXT,
  owner TEXT NOT NULL,
  lease_until_ms BIGINT NOT NULL DEFAULT 0,
  attempts BIGINT NOT NULL DEFAULT 0,
  executions BIGINT NOT NULL DEFAULT 0,
  operation_id TEXT,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL,
  expires_ms BIGINT NOT NULL DEFAULT 0,
  attempt_boot_id TEXT,
  attempt_pgid BIGINT NOT NULL DEFAULT 0,
  attempt_start_ticks BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY(tool, key)
);
CREATE INDEX ledger_by_expiry ON ledger(expires_ms);
CREATE TABLE accounts(account TEXT PRIMARY KEY, balance_cents BIGINT NOT NULL);
CREATE TABLE charges(
  charge_id TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  cents BIGINT NOT NULL,
  idempotency_key TEXT,
  created_ms BIGINT NOT NULL
);
CREATE TABLE inventory(
  tenant TEXT NOT NULL,
  sku TEXT NOT NULL,
  stock BIGINT NOT NULL,
  PRIMARY KEY(tenant, sku)
);
CREATE TABLE reservations(
  reservation_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  sku TEXT NOT NULL,
  quantity BIGINT NOT NULL,
  idempotency_key TEXT,
  created_ms BIGINT NOT NULL
);
CREATE TABLE tasks(
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id TEXT NOT NULL UNIQUE,
  tool TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK(status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message TEXT NOT NULL DEFAULT '',
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL,
  ttl_ms BIGINT,
  expires_ms BIGINT,
  poll_interval_ms BIGINT NOT NULL,
  request TEXT NOT NULL,
  idempotency_key TEXT,
  fingerprint TEXT,
  result TEXT,
  error TEXT,
  cancel_phase TEXT NOT NULL DEFAULT 'none'
    CHECK(cancel_phase IN ('none', 'requested', 'observed', 'finished_after_cancel')),
  late_outcome TEXT,
  owner TEXT NOT NULL,
  owner_pid BIGINT NOT NULL,
  lease_until_ms BIGINT NOT NULL,
  input_requests TEXT,
  input_answers TEXT
);
CREATE UNIQUE INDEX tasks_by_key ON tasks(tool, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX tasks_by_expiry ON tasks(expires_ms) WHERE expires_ms IS NOT NULL;
CREATE INDEX tasks_unfinished ON tasks(owner) WHERE status IN ('working', 'input_required');
CREATE TABLE settings(
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_ms BIGINT NOT NULL,
  updated_by TEXT NOT NULL
);
CREATE TABLE deploy_jobs(
  job_id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  version TEXT NOT NULL,
  restarts BIGINT NOT NULL DEFAULT 0,
  last_operation_id TEXT,
  last_restart_ms BIGINT
);
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
  created_ms BIGINT NOT NULL
);
)sql",
      // 2: the registry of live keel instances (ledger/instance_registry.h): heartbeats in
      // the server's clock, so liveness is never judged by another machine's clock or pid.
      R"sql(
CREATE TABLE keel_instances(
  owner TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid BIGINT NOT NULL,
  boot_id TEXT NOT NULL,
  started_ms BIGINT NOT NULL,
  heartbeat_ms BIGINT NOT NULL
);
CREATE INDEX tasks_cancel_requested ON tasks(owner) WHERE cancel_phase = 'requested';
)sql",
  };
  return steps;
}

// The session-level advisory lock migrations run under (with the schema's hash as second
// key): one keel migrates, the others wait and then find the work done ("keem").
constexpr int32_t kMigrationLock = 0x6b65656d;

int64_t PostgresVersion(Database& db) {
  Statement stmt = db.Prepare("SELECT version FROM keel_schema WHERE id = 1");
  return stmt.Step() ? stmt.Int64(0) : 0;
}

MigrateStatus MigratePostgres(Database& db, std::string* error) {
  const auto& steps = PostgresMigrations();
  const int64_t newest = static_cast<int64_t>(steps.size());
  const std::string lock_keys = std::to_string(kMigrationLock) + ", hashtext(current_schema()))";
  if (std::string e = db.Exec("SELECT pg_advisory_lock(" + lock_keys); !e.empty()) {
    *error = e;
    return MigrateStatus::kError;
  }
  auto result = [&]() {
    if (std::string e =
            db.Exec("CREATE TABLE IF NOT EXISTS keel_schema(id INTEGER PRIMARY KEY CHECK(id = 1), "
                    "version BIGINT NOT NULL); "
                    "INSERT INTO keel_schema VALUES(1, 0) ON CONFLICT DO NOTHING");
        !e.empty()) {
      *error = e;
      return MigrateStatus::kError;
    }
    const int64_t current = PostgresVersion(db);
    if (current > newest) {
      *error = "the database has schema version " + std::to_string(current) +
               ", newer than this keel (" + std::to_string(newest) + ")";
      return MigrateStatus::kNewerThanBinary;
    }
    for (int64_t version = current + 1; version <= newest; ++version) {
      WriteTransaction txn(db);
      if (std::string e = db.Exec(std::string(steps[version - 1])); !e.empty()) {
        *error = "migration " + std::to_string(version) + ": " + e;
        return MigrateStatus::kError;
      }
      db.Prepare("UPDATE keel_schema SET version = ?1 WHERE id = 1").Bind(1, version).Run();
      txn.Commit();
    }
    return MigrateStatus::kOk;
  };
  MigrateStatus status = MigrateStatus::kError;
  try {
    status = result();
  } catch (const SqliteError& e) {
    *error = e.what();
  }
  (void)db.Exec("SELECT pg_advisory_unlock(" + lock_keys);
  return status;
}

int64_t UserVersion(Database& db) {
  Statement stmt = db.Prepare("PRAGMA user_version");
  return stmt.Step() ? stmt.Int64(0) : 0;
}

}  // namespace

int SchemaVersion() { return static_cast<int>(Migrations().size()); }

int SchemaVersion(Database::Dialect dialect) {
  if (dialect == Database::Dialect::kPostgres) {
    return static_cast<int>(PostgresMigrations().size());
  }
  return SchemaVersion();
}

MigrateStatus Migrate(Database& db, std::string* error) {
  if (db.dialect() == Database::Dialect::kPostgres) return MigratePostgres(db, error);
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
