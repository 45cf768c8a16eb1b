/* The raw durable commit rate of PostgreSQL for `scripts/bench --ledger --engine postgres`:
 * what the server alone does, one connection, no MCP, no JSON-RPC, no threads.
 *
 *   pg_commit_rate URL COMMITS WARMUP
 *
 * Connects to URL (a libpq URI; its search_path names a schema of the run's own), creates a
 * table shaped like keel's PostgreSQL ledger (ledger/schema.cc, PostgresMigrations: the same
 * columns, BIGINT times, the expiry index) and runs WARMUP unrecorded, then COMMITS recorded
 * transactions of
 *     BEGIN; SELECT ... WHERE tool = $1 AND key = $2; INSERT (a fresh key, a 64-hex
 *     fingerprint, a ~300-byte result JSON); COMMIT
 * with prepared statements (keel prepares its statements too), synchronous_commit as the
 * server has it (on: every COMMIT waits for its WAL flush). Each transaction is timed from
 * BEGIN to the end of COMMIT (CLOCK_MONOTONIC). Prints one JSON line on stdout:
 *     {"commits":N,"seconds":S,"commits_per_s":R,"p50_us":..,"p90_us":..,"p99_us":..,
 *      "max_us":..,"server_version":"15.x","synchronous_commit":"on","fsync":"on"}
 * Exit 1 on any error (message on stderr).
 *
 * Built by scripts/bench --ledger: cc -O2 -o TMP/pg_commit_rate pg_commit_rate.c
 *   $(pkg-config --cflags --libs libpq)
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static PGconn *conn;

static void check(PGresult *r, const char *what) {
  const ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    fprintf(stderr, "pg_commit_rate: %s: %s\n", what, PQerrorMessage(conn));
    exit(1);
  }
  PQclear(r);
}

static void exec(const char *sql) { check(PQexec(conn, sql), sql); }

static void show(const char *name, char *out, size_t size) {
  char sql[128];
  snprintf(sql, sizeof sql, "SHOW %s", name);
  PGresult *r = PQexec(conn, sql);
  snprintf(out, size, "%s", PQresultStatus(r) == PGRES_TUPLES_OK ? PQgetvalue(r, 0, 0) : "?");
  PQclear(r);
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
    fprintf(stderr, "usage: pg_commit_rate URL COMMITS WARMUP\n");
    return 2;
  }
  const long commits = atol(argv[2]), warmup = atol(argv[3]);
  if (commits < 1 || warmup < 0) {
    fprintf(stderr, "pg_commit_rate: COMMITS must be >= 1, WARMUP >= 0\n");
    return 2;
  }
  conn = PQconnectdb(argv[1]);
  if (PQstatus(conn) != CONNECTION_OK) {
    fprintf(stderr, "pg_commit_rate: connect: %s\n", PQerrorMessage(conn));
    return 1;
  }
  exec("CREATE TABLE IF NOT EXISTS raw_ledger(tool TEXT NOT NULL, key TEXT NOT NULL, "
       "fingerprint TEXT NOT NULL, state TEXT NOT NULL, result TEXT, owner TEXT NOT NULL, "
       "lease_until_ms BIGINT NOT NULL DEFAULT 0, attempts BIGINT NOT NULL DEFAULT 0, "
       "executions BIGINT NOT NULL DEFAULT 0, operation_id TEXT, created_ms BIGINT NOT NULL, "
       "updated_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL DEFAULT 0, "
       "PRIMARY KEY(tool, key))");
  exec("CREATE INDEX IF NOT EXISTS raw_ledger_by_expiry ON raw_ledger(expires_ms)");
  check(PQprepare(conn, "sel",
                  "SELECT fingerprint, state, result, owner, lease_until_ms, attempts, executions, "
                  "operation_id, created_ms, updated_ms, expires_ms FROM raw_ledger "
                  "WHERE tool = $1 AND key = $2",
                  2, NULL),
        "prepare SELECT");
  check(PQprepare(conn, "ins",
                  "INSERT INTO raw_ledger(tool, key, fingerprint, state, result, owner, "
                  "lease_until_ms, attempts, executions, operation_id, created_ms, updated_ms, "
                  "expires_ms) VALUES($1, $2, $3, 'committed', $4, 'bench:1', 0, 1, 1, $5, $6, $6, "
                  "$7)",
                  7, NULL),
        "prepare INSERT");

  double *us = malloc(sizeof(double) * (size_t)commits);
  if (!us) return 1;
  char key[64], fp[65], op[40], result[512], created[32], expires[32];
  double t_first = 0;
  for (long i = 0; i < warmup + commits; i++) {
    snprintf(key, sizeof key, "raw-%ld", i);
    snprintf(fp, sizeof fp, "%016lx%016lx%016lx%016lx", (unsigned long)i * 2654435761UL,
             (unsigned long)i ^ 0x9e3779b97f4a7c15UL, (unsigned long)i * 40503UL, (unsigned long)i);
    snprintf(op, sizeof op, "ch_%016lx", (unsigned long)i * 0x9e3779b97f4a7c15UL);
    snprintf(result, sizeof result,
             "{\"content\":[{\"type\":\"text\",\"text\":\"Charged 1 cents to acct-%ld (charge %s); "
             "balance 99999 cents.\"}],\"structuredContent\":{\"account\":\"acct-%ld\","
             "\"balance_cents\":99999,\"cents\":1,\"charge_id\":\"%s\","
             "\"executed_at\":\"2025-01-01T00:00:00.000Z\"}}",
             i % 64, op, i % 64, op);
    snprintf(created, sizeof created, "%lld", 1700000000000LL + i);
    snprintf(expires, sizeof expires, "%lld", 1700086400000LL + i);
    const double t0 = now_us();
    if (i == warmup) t_first = t0;
    exec("BEGIN");
    const char *sel[2] = {"charge_account", key};
    check(PQexecPrepared(conn, "sel", 2, sel, NULL, NULL, 0), "SELECT");
    const char *ins[7] = {"charge_account", key, fp, result, op, created, expires};
    check(PQexecPrepared(conn, "ins", 7, ins, NULL, NULL, 0), "INSERT");
    exec("COMMIT");
    if (i >= warmup) us[i - warmup] = now_us() - t0;
  }
  const double seconds = (now_us() - t_first) / 1e6;
  char version[32], sync[16], fsync[16];
  show("server_version", version, sizeof version);
  show("synchronous_commit", sync, sizeof sync);
  show("fsync", fsync, sizeof fsync);
  qsort(us, (size_t)commits, sizeof(double), cmp);
  printf("{\"commits\":%ld,\"seconds\":%.6f,\"commits_per_s\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
         "\"p99_us\":%.1f,\"max_us\":%.1f,\"server_version\":\"%s\",\"synchronous_commit\":\"%s\","
         "\"fsync\":\"%s\"}\n",
         commits, seconds, commits / seconds, pct(us, commits, 50), pct(us, commits, 90),
         pct(us, commits, 99), us[commits - 1], version, sync, fsync);
  PQfinish(conn);
  free(us);
  return 0;
}
