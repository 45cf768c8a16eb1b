// The deployment: one database, two keel processes (A with 4 workers, B with 2; only A with
// --single) with different faults on the simulated deployment backend (faults.mjs), a
// policy with short clocks so timeouts happen within seconds. With --postgres: a throwaway
// PostgreSQL (scripts/pg_test_server, a schema `soak`) instead of the SQLite file, and a third
// keel C (2 workers, B's faults), as three machines would share one database.
//
// deploy(opts) -> w, the world every part of the soak shares: {opts, dir, db, pg (with
// --postgres: {dir, url, stop()}), tag (names made by this run start with it), faultsA,
// faultsB, A, B (null with --single), C (with --postgres), keels, route(rng) (A, or B 40 % of
// the time; with C: B and C 20 % each), calls (counters per scenario family)}.
// initialize(k): initialize and notifications/initialized; throws unless tasks are offered.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { backendFaults } from './faults.mjs';
import { short } from './findings.mjs';
import { Keel, answer } from './keel_conn.mjs';
import { REPO } from '../../tests/support/keel_process.mjs';

// A throwaway PostgreSQL in a directory of its own (the server runs as `nobody` under root
// and must own it), with a schema for the run.
function startPostgres() {
  const dir = mkdtempSync(join(tmpdir(), 'keel-soak-pg-'));
  const script = join(REPO, 'scripts', 'pg_test_server');
  const r = spawnSync(script, ['start', dir], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    console.error(`soak: cannot start PostgreSQL: ${r.stderr}`);
    process.exit(2);
  }
  const url = r.stdout.trim();
  const schema = spawnSync('psql', [url, '-qc', 'CREATE SCHEMA soak'], { encoding: 'utf8' });
  if (schema.status !== 0) {
    console.error(`soak: psql CREATE SCHEMA: ${schema.stderr}`);
    spawnSync(script, ['stop', dir]);
    process.exit(2);
  }
  let stopped = false;
  const stop = () => {
    if (!stopped) spawnSync(script, ['stop', dir]);
    stopped = true;
  };
  process.once('exit', stop);
  return { dir, url, db: `${url}&options=-csearch_path%3Dsoak`, stop };
}

function policyFile(opts, dir, name, extraTools) {
  const path = join(dir, `policy-${name}.json`);
  // keel checks that the clocks, retries and breaker settings fit together (docs/policy.md).
  const once = (attemptMs, extra = {}) => ({ retry: { max_attempts: 1 }, breaker: { slow_call_ms: attemptMs, ...extra } });
  const clockOnly = { timeouts: { idle_ms: 1000, max_ms: 3000, attempt_ms: 2900 }, ...once(2900, { mode: 'disabled' }) };
  writeFileSync(path, JSON.stringify({
    version: `soak-${name}`,
    // idle 1 s, max 3 s: sleeps past 1 s meet the idle clock, progress past 3 s the max one.
    defaults: {
      timeouts: { idle_ms: 1000, max_ms: 3000, attempt_ms: 900 },
      retry: { max_attempts: 3, base_ms: 100, cap_ms: 300, retry_after_cap_ms: 500, min_useful_attempt_ms: 100 },
      breaker: { slow_call_ms: 900 },
    },
    tools: {
      // One attempt each, and no breaker: their timeouts are the point here.
      sleep: clockOnly, task_sleep: clockOnly, progress: clockOnly,
      // Blocks until released (held slots, jams): ends on release or cancel, never on a clock.
      latch_wait: { timeouts: { idle_ms: 0, max_ms: 20000, attempt_ms: 19000 },
        ...once(19000, { mode: 'disabled', half_open_max_wait_ms: 20000, probe_timeout_ms: 20000 }) },
      // A keyed write queued behind a jam meets its 2 s maximum clock without having run.
      charge_account: { timeouts: { idle_ms: 0, max_ms: 2000, attempt_ms: 900 }, retry: { max_attempts: 2 } },
      reserve_inventory: { timeouts: { idle_ms: 0, max_ms: 2000, attempt_ms: 900 }, retry: { max_attempts: 2 } },
      // A short cycle, so an outage opens it, and it half-opens and closes, within the run.
      get_deployment_job: { breaker: { minimum_calls: 8, open_ms: 4000, window_ms: 20000 } },
      // Most flaky calls fail once or twice before they succeed: at the default 50 % the
      // breaker would stay open and keel would hardly ever retry.
      ...Object.fromEntries(['flaky_read', 'flaky_idempotent', 'flaky_write'].map((t) =>
        [t, { breaker: { failure_rate_percent: 90, open_ms: 2000, window_ms: 20000 } }])),
      ...extraTools,
    },
  }));
  const check = spawnSync(opts.keel, ['policy', 'check', path], { encoding: 'utf8' });
  if (check.status !== 0) {
    console.error(`soak: keel refuses the soak's policy ${path}:\n${check.stdout}${check.stderr}`);
    process.exit(2);
  }
  return path;
}

export function deploy(opts) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-soak-'));
  const pg = opts.postgres ? startPostgres() : null;
  const db = pg ? pg.db : join(dir, 'keel.db');
  const tag = `s${opts.seed}`;
  const { faultsA, faultsB } = backendFaults(opts);
  const common = ['--test-tools', '--db', db, '--task-poll-interval', '50', '--log-level', 'warn'];
  const files = (n) => ({ trace: join(dir, `trace-${n}.jsonl`), log: join(dir, `keel-${n}.log`) });
  const A = new Keel('A', opts.keel, [...common, '--workers', '4', '--trace-file', files('A').trace, '--log-file', files('A').log,
    // A's restart answers are all lost by construction: its breaker would only cut the fault off.
    '--policy', policyFile(opts, dir, 'A', { restart_deployment_job: { breaker: { mode: 'disabled' } } }),
    ...faultsA.flatMap((f) => ['--fault', f])], files('A'));
  const B = opts.single ? null : new Keel('B', opts.keel, [...common, '--workers', '2', '--trace-file', files('B').trace,
    '--log-file', files('B').log, '--policy', policyFile(opts, dir, 'B', {}), ...faultsB.flatMap((f) => ['--fault', f])], files('B'));
  const C = pg ? new Keel('C', opts.keel, [...common, '--workers', '2', '--trace-file', files('C').trace,
    '--log-file', files('C').log, '--policy', policyFile(opts, dir, 'C', {}), ...faultsB.flatMap((f) => ['--fault', f])], files('C')) : null;
  const keels = [A, B, C].filter(Boolean);
  const route = C
    ? (rng) => { const x = rng.int(0, 99); return x < 60 ? A : x < 80 ? B : C; }
    : (rng) => (B && rng.chance(0.4) ? B : A);
  const calls = { echo: 0, intent: 0, restart: 0, unkeyed: 0, flaky: 0, latch: 0, task: 0 };
  return { opts, dir, db, pg, tag, faultsA, faultsB, A, B, C, keels, route, calls };
}

export async function initialize(k) {
  const rec = k.request('initialize', {
    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'keel-soak', version: '1' },
  });
  const r = await answer(rec, 15000);
  if (!r?.result?.capabilities?.tasks) throw new Error(`${k.name}: initialize failed: ${short(r)}\n${k.stderrTail}`);
  k.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
}
