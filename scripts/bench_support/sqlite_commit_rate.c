/* The raw durable commit rate for `scripts/bench --ledger`: what SQLite alone does with
 * keel's settings on this filesystem, one connection, no MCP, no JSON-RPC, no threads.
 *
 *   sqlite_commit_rate DB_PATH COMMITS WARMUP
 *
 * Opens (creates) DB_PATH with keel's pragmas (journal_mode=WAL, synchronous=FULL,
 * foreign_keys=ON, busy timeout 5000 ms; see ledger/database.cc), creates a table shaped
 * like keel's ledger (schema v1 in ledger/schema.cc: the same columns, WITHOUT ROWID, the
 * expiry index) and runs WARMUP unrecorded, then COMMITS recorded transactions of
 *     BEGIN IMMEDIATE; SELECT ... WHERE tool = ? AND key = ?; INSERT (a fresh key, a
 *     64-hex fingerprint, a ~300-byte result JSON); COMMIT
 * with prepared statements (keel caches its statements too). Each transaction is timed
 * from BEGIN to the end of COMMIT (CLOCK_MONOTONIC). Prints one JSON line on stdout:
 *     {"commits":N,"seconds":S,"commits_per_s":R,"p50_us":..,"p90_us":..,"p99_us":..,
 *      "max_us":..,"sqlite_version":"3.x.y","journal_mode":"wal","synchronous":2}
 * Exit 1 on any SQLite error (message on stderr).
 *
 * keel's mutation does more inside its transaction (the account row, the charge row, a
 * re-read of the ledger row): this is the floor that every durable commit pays, above all
 * the WAL fsync that synchronous=FULL makes every COMMIT wait for.
 *
 * Built by scripts/bench --ledger: cc -O2 -o TMP/sqlite_commit_rate sqlite_commit_rate.c -lsqlite3
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static sqlite3 *db;

static void die(const char *what) {
  fprintf(stderr, "sqlite_commit_rate: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
  exit(1);
}

static void exec(const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "sqlite_commit_rate: %s: %s\n", sql, err ? err : "?");
    exit(1);
  }
}

static sqlite3_stmt *prepare(const char *sql) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) die(sql);
  return s;
}

static void run(sqlite3_stmt *s, const char *what) {
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
  }
  if (rc != SQLITE_DONE) die(what);
  sqlite3_reset(s);
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *sorted, long n, double p) {
  long i = (long)((p / 100.0) * n + 0.999999) - 1;
  if (i < 0) i = 0;
  if (i >= n) i = n - 1;
  return sorted[i];
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: sqlite_commit_rate DB_PATH COMMITS WARMUP\n");
    return 2;
  }
  const long commits = atol(argv[2]), warmup = atol(argv[3]);
  if (commits < 1 || warmup < 0) {
    fprintf(stderr, "sqlite_commit_rate: COMMITS must be >= 1, WARMUP >= 0\n");
    return 2;
  }
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      NULL) != SQLITE_OK)
    die("open");
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, 5000);
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=FULL");
  exec("PRAGMA foreign_keys=ON");
  exec("CREATE TABLE IF NOT EXISTS ledger(tool TEXT NOT NULL, key TEXT NOT NULL, "
       "fingerprint TEXT NOT NULL, state TEXT NOT NULL, result TEXT, owner TEXT NOT NULL, "
       "lease_until_ms INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, "
       "executions INTEGER NOT NULL DEFAULT 0, operation_id TEXT, created_ms INTEGER NOT NULL, "
       "updated_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL DEFAULT 0, "
       "PRIMARY KEY(tool, key)) WITHOUT ROWID");
  exec("CREATE INDEX IF NOT EXISTS ledger_by_expiry ON ledger(expires_ms)");

  sqlite3_stmt *begin = prepare("BEGIN IMMEDIATE");
  sqlite3_stmt *commit = prepare("COMMIT");
  sqlite3_stmt *select = prepare(
      "SELECT fingerprint, state, result, owner, lease_until_ms, attempts, executions, "
      "operation_id, created_ms, updated_ms, expires_ms FROM ledger WHERE tool = ?1 AND key = ?2");
  sqlite3_stmt *insert = prepare(
      "INSERT INTO ledger(tool, key, fingerprint, state, result, owner, lease_until_ms, "
      "attempts, executions, operation_id, created_ms, updated_ms, expires_ms) "
      "VALUES(?1, ?2, ?3, 'committed', ?4, 'bench:1', 0, 1, 1, ?5, ?6, ?6, ?7)");

  double *us = malloc(sizeof(double) * (size_t)commits);
  if (!us) return 1;
  char key[64], fp[65], op[40], result[512];
  double t_first = 0;
  for (long i = 0; i < warmup + commits; i++) {
    snprintf(key, sizeof key, "raw-%ld", i);
    snprintf(fp, sizeof fp, "%016lx%016lx%016lx%016lx", (unsigned long)i * 2654435761UL,
             (unsigned long)i ^ 0x9e3779b97f4a7c15UL, (unsigned long)i * 40503UL, (unsigned long)i);
    snprintf(op, sizeof op, "ch_%016lx", (unsigned long)i * 0x9e3779b97f4a7c15UL);
    /* ~300 bytes, the shape of a charge_account result. */
    snprintf(result, sizeof result,
             "{\"content\":[{\"type\":\"text\",\"text\":\"Charged 1 cents to acct-%ld (charge %s); "
             "balance 99999 cents.\"}],\"structuredContent\":{\"account\":\"acct-%ld\","
             "\"balance_cents\":99999,\"cents\":1,\"charge_id\":\"%s\","
             "\"executed_at\":\"2025-01-01T00:00:00.000Z\"}}",
             i % 64, op, i % 64, op);
    const double t0 = now_us();
    if (i == warmup) t_first = t0;
    run(begin, "BEGIN IMMEDIATE");
    sqlite3_bind_text(select, 1, "charge_account", -1, SQLITE_STATIC);
    sqlite3_bind_text(select, 2, key, -1, SQLITE_TRANSIENT);
    run(select, "SELECT");
    sqlite3_bind_text(insert, 1, "charge_account", -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 2, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 3, fp, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 4, result, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 5, op, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert, 6, 1700000000000LL + i);
    sqlite3_bind_int64(insert, 7, 1700086400000LL + i);
    run(insert, "INSERT");
    run(commit, "COMMIT");
    if (i >= warmup) us[i - warmup] = now_us() - t0;
  }
  const double seconds = (now_us() - t_first) / 1e6;

  sqlite3_stmt *q = prepare("PRAGMA journal_mode");
  const char *mode = sqlite3_step(q) == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) : "?";
  char mode_copy[16];
  snprintf(mode_copy, sizeof mode_copy, "%s", mode ? mode : "?");
  sqlite3_finalize(q);
  q = prepare("PRAGMA synchronous");
  const int sync = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
  sqlite3_finalize(q);

  qsort(us, (size_t)commits, sizeof(double), cmp);
  printf("{\"commits\":%ld,\"seconds\":%.6f,\"commits_per_s\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
         "\"p99_us\":%.1f,\"max_us\":%.1f,\"sqlite_version\":\"%s\",\"journal_mode\":\"%s\","
         "\"synchronous\":%d}\n",
         commits, seconds, commits / seconds, pct(us, commits, 50), pct(us, commits, 90),
         pct(us, commits, 99), us[commits - 1], sqlite3_libversion(), mode_copy, sync);
  sqlite3_finalize(begin);
  sqlite3_finalize(commit);
  sqlite3_finalize(select);
  sqlite3_finalize(insert);
  sqlite3_close(db);
  free(us);
  return 0;
}
