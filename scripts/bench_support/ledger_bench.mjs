// Driver for `scripts/bench --ledger`: the cost of keel's exactly-once mutations, measured
// from outside over stdio against the raw durable commit rate of the same engine on the
// same filesystem, in the same run: SQLite with keel's settings, and (--engine postgres or
// both) a throwaway PostgreSQL 15 with fsync and synchronous_commit on, started by the bench
// (scripts/pg_test_server --fsync) in a directory of its own under os.tmpdir(), on a Unix
// socket, and stopped at the end. On PostgreSQL each keel run and each raw half gets a
// schema of its own; the raw peer is scripts/bench_support/pg_commit_rate.c (libpq: BEGIN;
// SELECT by key; INSERT a ledger-shaped row; COMMIT), built and run like the SQLite one
// below. Goals at 16 in flight: SQLite >= 2 x its raw rate (group commit), PostgreSQL >=
// 0.7 x its raw rate; replays >= 20000/s on each. Like the other benches it prints
// figures and asserts nothing: goals are printed as PASS/MISS for information, and the
// exit status is 0 unless keel fails to run (spawn error, early exit, a stall, a malformed
// response) or the raw-rate program cannot be built or run.
//
// Everything lives in one fresh temp dir (os.tmpdir()): the raw program's database files
// and keel's (--db), so both measure the same filesystem; its type is printed (on tmpfs an
// fsync costs nothing and the figures say little about a disk).
//
// raw: scripts/bench_support/sqlite_commit_rate.c, compiled at run time (cc -O2 ...
//   -lsqlite3) into the temp dir: one connection, keel's pragmas (WAL, synchronous=FULL,
//   foreign_keys), a table shaped like keel's ledger, and single-row transactions
//   BEGIN IMMEDIATE; SELECT by key; INSERT (~300-byte result JSON); COMMIT. It runs in two
//   halves of --raw-commits/2, one before and one after keel's new-key runs, each on a
//   fresh file with --raw-warmup unrecorded commits first; the raw rate is the pooled one
//   (all recorded commits / the time of both halves), so drift of the disk during the run
//   lands on both sides of the ratio.
//
// new keys: per in-flight count K (--inflight, default 1,16) a FRESH keel (--workers K, at
//   least 2, unless --workers: a keyed write waits on the disk, not on a core, and group
//   commit can only put into one transaction the writes that hold a slot together; its own
//   database file) is initialized, gets --warmup
//   unrecorded calls, then --calls measured `charge_account` calls, each with a fresh
//   idempotencyKey (accounts acct-0..acct-63, 1 cent each), exactly K in flight: each
//   response releases one new request; requests released by one chunk of responses go out
//   in one write(). Each answer must be an executed charge (not an error, not a replay,
//   a charge_id); anything else is counted by its error type and printed. mutations/s =
//   calls / wall time of the measured phase. Each call is one savepoint (ledger row +
//   account + charge) of a BEGIN IMMEDIATE ... COMMIT that keel's group commit shares
//   between the calls that arrive together (ledger/commit_group.h): one call alone is one
//   durable commit like a raw one. ratio = keel mutations/s at 16 in flight (else the best
//   K) / raw commits/s.
//
// replays: a FRESH keel on the database the last new-key run left (a few thousand ledger
//   rows, so lookups walk a real B-tree), one keyed charge, then --replay-warmup
//   unrecorded and --replays measured calls with the same key and arguments, 16 in flight
//   (--replay-inflight). Every answer must carry result._meta["dev.keel/replayed"] === true
//   and the first call's charge_id (counted; mismatches printed). A replay of a finished
//   key is a plain read in keel: no write transaction, no fsync.
//
// For each keel phase: keel's CPU (utime+stime from /proc/<pid>/stat) over the measured
// phase per call, and its peak RSS (VmHWM) at the end of the phase; per-call latency is
// send -> response. The driver, keel and the disk share this machine's CPUs.
//
// --flush-delay-us N: a slower disk. Every fsync and fdatasync of keel, of the raw peer and
//   of the PostgreSQL server takes N microseconds longer (an LD_PRELOAD shim,
//   slow_flush.c, set in this process's environment before any of them starts). This VM's
//   flush costs about 150 us; most disks without a battery-backed cache take a millisecond
//   or more, and there the raw rate is one flush per commit while keel's group shares one.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { backgroundLoad } from './machine_load.mjs';
import { forEachArg, table } from './cli.mjs';
import { ensureSlowFlush } from './floor.mjs';
import {
  log, die, ServerFailed, keelDefaults, procStatusKB, startKeel, waitUntil, initialize,
  summary, fmt, backgroundLines, goalLines,
} from './coordinator_bench.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

export const USAGE = `usage: scripts/bench --ledger [--engine sqlite|postgres|both] [--calls N] [--warmup N]
                              [--inflight 1,16,64] [--replays N]
                              [--replay-warmup N] [--replay-inflight K] [--raw-commits N]
                              [--raw-warmup N] [--workers W] [--flush-delay-us N]
                              [--keel PATH] [--json]
  --ledger            exactly-once mutations through keel vs the engine's raw durable commit rate
                      (method: scripts/bench_support/ledger_bench.mjs)
    --engine E        sqlite (WAL, synchronous=FULL), postgres (a throwaway PostgreSQL 15 with
                      fsync and synchronous_commit on) or both (default: both when PostgreSQL's
                      server binaries are installed, else sqlite)
    --calls N         measured new-key charge_account calls per in-flight count (default 2000)
    --warmup N        unrecorded new-key calls first, same keel (default 100)
    --inflight L      comma-separated in-flight counts, a fresh keel each (default 1,16,64)
    --replays N       measured same-key calls (default 20000)
    --replay-warmup N unrecorded same-key calls first (default 1000)
    --replay-inflight K  in flight during the replays (default 16)
    --raw-commits N   raw commits measured, in two halves around keel's runs (default 2000)
    --raw-warmup N    unrecorded raw commits before each half (default 50)
    --workers W       keel --workers (default: each phase's in-flight count, at least 2)
    --flush-delay-us N  simulate a slower disk: every fsync/fdatasync of keel, the raw peer
                      and the PostgreSQL server takes N us longer (LD_PRELOAD slow_flush.c;
                      default 0: the real disk only)
  --keel PATH         keel binary (default $KEEL_BINARY or build/keel)
  --json              print the results as JSON on stdout instead of the summary
Progress goes to stderr. Exit 0 unless keel fails to run.`;

const CLK_TCK = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; }
})();

function parseArgs(argv) {
  const o = {
    calls: 2000,
    warmup: 100,
    inflight: [1, 16, 64],
    engine: null,
    replays: 20000,
    replayWarmup: 1000,
    replayInflight: 16,
    rawCommits: 2000,
    rawWarmup: 50,
    workers: null,
    flushDelayUs: 0,
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    json: false,
  };
  forEachArg(argv, USAGE, die, (a, val, int) => {
    switch (a) {
      case '--ledger': break;
      case '--cancel': case '--flood': die('--ledger, --cancel and --flood are separate runs; pick one'); break;
      case '--engine': {
        const e = val();
        if (!['sqlite', 'postgres', 'both'].includes(e)) die(`--engine: sqlite, postgres or both, not ${e}`);
        o.engine = e;
        break;
      }
      case '--calls': o.calls = int(val(), 1); break;
      case '--warmup': o.warmup = int(val()); break;
      case '--inflight': o.inflight = val().split(',').map((s) => int(s, 1)); break;
      case '--replays': o.replays = int(val(), 1); break;
      case '--replay-warmup': o.replayWarmup = int(val()); break;
      case '--replay-inflight': o.replayInflight = int(val(), 1); break;
      case '--raw-commits': o.rawCommits = int(val(), 2); break;
      case '--raw-warmup': o.rawWarmup = int(val()); break;
      case '--workers': o.workers = int(val(), 1); break;
      case '--flush-delay-us': o.flushDelayUs = int(val()); break;
      case '--keel': o.keel = resolve(val()); break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  if (!existsSync(o.keel)) die(`no keel binary at ${o.keel} (run scripts/build)`, 1);
  if (o.engine === null) {
    o.engine = postgresInstalled() ? 'both' : 'sqlite';
    if (o.engine === 'sqlite') log('PostgreSQL server binaries not found (postgresql-15): SQLite only');
  }
  return o;
}

// utime+stime of a live process in seconds (fields 14 and 15 of /proc/<pid>/stat, counted
// after the ')' that ends the command name).
function cpuSeconds(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function fsType(dir) {
  try { return execFileSync('findmnt', ['-no', 'FSTYPE', '-T', dir]).toString().trim(); } catch { /* fall through */ }
  try { return execFileSync('stat', ['-f', '-c', '%T', dir]).toString().trim(); } catch { return 'unknown'; }
}

// ---------------------------------------------------------------------------------------
// raw

function buildRaw(dir) {
  const src = join(here, 'sqlite_commit_rate.c');
  const bin = join(dir, 'sqlite_commit_rate');
  try {
    execFileSync('cc', ['-O2', '-o', bin, src, '-lsqlite3'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    throw new ServerFailed(`cannot build ${src} (cc ... -lsqlite3; scripts/setup installs libsqlite3-dev): ` +
      `${e.stderr ? e.stderr.toString().trim() : e.message}`);
  }
  return bin;
}

function runRaw(bin, db, commits, warmup) {
  let out;
  try {
    out = execFileSync(bin, [db, String(commits), String(warmup)], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (e) {
    throw new ServerFailed(`sqlite_commit_rate failed: ${e.stderr ? e.stderr.toString().trim() : e.message}`);
  }
  return JSON.parse(out);
}

function postgresInstalled() {
  try {
    return readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/pg_ctl`));
  } catch {
    return false;
  }
}

function buildPgRaw(dir) {
  const src = join(here, 'pg_commit_rate.c');
  const bin = join(dir, 'pg_commit_rate');
  let flags;
  try {
    flags = execFileSync('pkg-config', ['--cflags', '--libs', 'libpq']).toString().trim().split(/\s+/);
    execFileSync('cc', ['-O2', '-o', bin, src, ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    throw new ServerFailed(`cannot build ${src} (cc ... $(pkg-config --libs libpq); scripts/setup installs libpq-dev): ` +
      `${e.stderr ? e.stderr.toString().trim() : e.message}`);
  }
  return bin;
}

// A throwaway PostgreSQL with fsync on (scripts/pg_test_server), in a directory of its own
// (the server runs as `nobody` under root and needs to own it).
function startPostgres() {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-pg-'));
  const r = spawnSync(join(repo, 'scripts', 'pg_test_server'), ['start', dir, '--fsync'], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new ServerFailed(`cannot start PostgreSQL: ${r.stderr.trim()}`);
  }
  const url = r.stdout.trim();
  return {
    dir, url,
    schema(name) {
      const q = spawnSync('psql', [url, '-qc', `CREATE SCHEMA ${name}`], { encoding: 'utf8' });
      if (q.status !== 0) throw new ServerFailed(`psql CREATE SCHEMA ${name}: ${q.stderr.trim()}`);
      return `${url}&options=-csearch_path%3D${name}`;
    },
    stop() { spawnSync(join(repo, 'scripts', 'pg_test_server'), ['stop', dir]); },
  };
}

// What differs between the engines: the raw peer, keel's --db per run, the goal.
function sqliteEngine(dir) {
  const bin = buildRaw(dir);
  return {
    name: 'sqlite', title: 'SQLite',
    raw: (i, commits, warmup) => runRaw(bin, join(dir, `raw-${i}.db`), commits, warmup),
    keelDb: (K) => join(dir, `keel-k${K}.db`),
    goalRatio: 2,
    goalText: 'group commit: new-key mutations/s >= 2 x raw commits/s',
    rawText: 'one connection, BEGIN IMMEDIATE; SELECT by key; INSERT ledger-shaped row; COMMIT (sqlite_commit_rate.c)',
    settings: (h) => `SQLite ${h.sqlite_version}, journal_mode=${h.journal_mode}, synchronous=${h.synchronous} (FULL)`,
    stop() {},
  };
}

function postgresEngine(dir) {
  const bin = buildPgRaw(dir);
  const pg = startPostgres();
  return {
    name: 'postgres', title: 'PostgreSQL',
    raw: (i, commits, warmup) => {
      let out;
      try {
        out = execFileSync(bin, [pg.schema(`raw${i}`), String(commits), String(warmup)], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
      } catch (e) {
        throw new ServerFailed(`pg_commit_rate failed: ${e.stderr ? e.stderr.toString().trim() : e.message}`);
      }
      return JSON.parse(out);
    },
    keelDb: (K) => pg.schema(`keel_k${K}`),
    goalRatio: 0.7,
    goalText: 'new-key mutations/s >= 0.7 x raw commits/s',
    rawText: 'one connection, BEGIN; SELECT by key; INSERT ledger-shaped row; COMMIT (pg_commit_rate.c)',
    settings: (h) => `PostgreSQL ${h.server_version} on a Unix socket, synchronous_commit=${h.synchronous_commit}, fsync=${h.fsync}`,
    stop() { pg.stop(); },
  };
}

// ---------------------------------------------------------------------------------------
// keel

const chargeReq = (id, account, key) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"charge_account","arguments":` +
  `{"account":"${account}","cents":1,"idempotencyKey":"${key}"}}}\n`;

// Sends ids first..first+n-1 (request text from `req(id)`), exactly K in flight; calls
// `check(id, msg)` for each response. Resolves with per-call latencies (ms) and wall ms.
async function drive(k, first, n, K, req, check) {
  const sent = new Float64Array(n);
  const lat = new Float64Array(n);
  let next = 0, done = 0, out = '', flushQueued = false;
  const flush = () => {
    flushQueued = false;
    if (out) { k.child.stdin.write(out); out = ''; }
  };
  const release = () => {
    const t = performance.now();
    while (next < n && next - done < K) {
      sent[next] = t;
      out += req(first + next);
      next++;
    }
    if (out && !flushQueued) { flushQueued = true; queueMicrotask(flush); }
  };
  k.onLine = (line) => {
    const t = performance.now();
    let m;
    try { m = JSON.parse(line); } catch { k.fail(`malformed line from keel: ${line.slice(0, 300)}`); return; }
    const j = typeof m.id === 'number' ? m.id - first : -1;
    if (j < 0 || j >= n || lat[j] !== 0) {
      if (m.id === undefined && typeof m.method === 'string') return; // a notification
      k.fail(`unexpected line from keel: ${line.slice(0, 300)}`);
      return;
    }
    lat[j] = t - sent[j] || 1e-9;
    done++;
    check(first + j, m);
    release();
    if (done === n && k.kick) k.kick();
  };
  const t0 = performance.now();
  release();
  await waitUntil(k, () => done === n, () => done, `${n} calls, ${K} in flight`);
  return { ms: performance.now() - t0, latencies: Array.from(lat) };
}

function errorType(m) {
  if (m.error) return `jsonrpc ${m.error.code}`;
  const r = m.result;
  if (!r) return 'no result';
  if (r.isError) return r.structuredContent?.error?.type ?? 'isError';
  return null;
}

function keelArgs(o, db, K) {
  const args = ['--db', db];
  const workers = o.workers ?? (K != null ? Math.max(2, K) : null);
  if (workers != null) args.push('--workers', String(workers));
  return args;
}

async function withKeel(o, db, K, body) {
  const k = startKeel(o.keel, keelArgs(o, db, K));
  try {
    await initialize(k);
    const r = await body(k);
    const ex = await k.close();
    r.exit_code = ex.code;
    r.exit_signal = ex.signal;
    return r;
  } catch (e) {
    if (e instanceof ServerFailed) {
      if (k.exited === null) await Promise.race([k.exitP, new Promise((r) => setTimeout(r, 300).unref())]);
      e.message = k.describe(e);
    }
    throw e;
  } finally {
    k.cleanup();
  }
}

function phaseFigures(k, n, ms, latencies, cpu0, driver0) {
  const cpu = cpuSeconds(k.pid) - cpu0;
  const d = process.cpuUsage(driver0);
  const driverCpu = (d.user + d.system) / 1e6;
  const l = summary(latencies);
  return {
    calls: n,
    seconds: ms / 1000,
    per_s: n / (ms / 1000),
    latency_ms: { p50: l.p50, p90: l.p90, p99: l.p99, max: l.max },
    keel_cpu_s: cpu,
    keel_cpu_us_per_call: (cpu / n) * 1e6,
    keel_cpu_cores: cpu / (ms / 1000),
    keel_peak_rss_mb: procStatusKB(k.pid).hwm / 1024,
    driver_cpu_us_per_call: (driverCpu / n) * 1e6,
    driver_cpu_cores: driverCpu / (ms / 1000),
  };
}

async function runNewKeys(o, db, K) {
  return withKeel(o, db, K, async (k) => {
    const errors = {};
    let executed = 0, replayed = 0, firstBad = null;
    const check = (id, m) => {
      const type = errorType(m);
      if (type) { errors[type] = (errors[type] ?? 0) + 1; firstBad ??= JSON.stringify(m).slice(0, 300); return; }
      if (m.result._meta?.['dev.keel/replayed'] === true) { replayed++; firstBad ??= JSON.stringify(m).slice(0, 300); return; }
      if (typeof m.result.structuredContent?.charge_id !== 'string') {
        errors['no charge_id'] = (errors['no charge_id'] ?? 0) + 1; firstBad ??= JSON.stringify(m).slice(0, 300); return;
      }
      executed++;
    };
    const req = (id) => chargeReq(id, `acct-${id % 64}`, `new-k${K}-${id}`);
    if (o.warmup) await drive(k, 1, o.warmup, K, req, () => {});
    const first = o.warmup + 1;
    const cpu0 = cpuSeconds(k.pid), driver0 = process.cpuUsage();
    const { ms, latencies } = await drive(k, first, o.calls, K, req, check);
    return { K, db, ...phaseFigures(k, o.calls, ms, latencies, cpu0, driver0), executed, replayed, errors, first_bad: firstBad };
  });
}

async function runReplays(o, db) {
  return withKeel(o, db, null, async (k) => {  // replays are reads: keel's default workers
    const KEY = 'replay-key-1';
    const req = (id) => chargeReq(id, 'acct-replay', KEY);
    let original = null;
    await drive(k, 1, 1, 1, req, (id, m) => { original = m; });
    const bad0 = errorType(original);
    const chargeId = original.result?.structuredContent?.charge_id;
    if (bad0 || typeof chargeId !== 'string') {
      throw new ServerFailed(`the first keyed charge did not execute: ${JSON.stringify(original).slice(0, 300)}`);
    }
    let replays = 0, notReplayed = 0, otherCharge = 0, firstBad = null;
    const errors = {};
    const check = (id, m) => {
      const type = errorType(m);
      if (type) { errors[type] = (errors[type] ?? 0) + 1; firstBad ??= JSON.stringify(m).slice(0, 300); return; }
      const isReplay = m.result._meta?.['dev.keel/replayed'] === true;
      const same = m.result.structuredContent?.charge_id === chargeId;
      if (!isReplay) notReplayed++;
      if (!same) otherCharge++;
      if (isReplay && same) replays++; else firstBad ??= JSON.stringify(m).slice(0, 300);
    };
    const K = o.replayInflight;
    if (o.replayWarmup) await drive(k, 2, o.replayWarmup, K, req, () => {});
    const first = 2 + o.replayWarmup;
    const cpu0 = cpuSeconds(k.pid), driver0 = process.cpuUsage();
    const { ms, latencies } = await drive(k, first, o.replays, K, req, check);
    return {
      K, db, charge_id: chargeId, ...phaseFigures(k, o.replays, ms, latencies, cpu0, driver0),
      replays_ok: replays, not_replayed: notReplayed, other_charge_id: otherCharge, errors, first_bad: firstBad,
    };
  });
}

// ---------------------------------------------------------------------------------------

function report(r) {
  const lines = [];
  const workers = r.workers;
  lines.push(`== ${r.engine_title}: keel exactly-once mutations vs its raw durable commit rate; ${r.cpus} CPU core(s)`);
  lines.push(`shared by the driver, keel${r.engine === 'postgres' ? ', the server' : ''} and the disk. Temp dir ${r.dir} on ${r.fs_type};`);
  lines.push(`${r.settings}. keel workers: ${workers}.`);
  if (r.flush_delay_us > 0) {
    lines.push(`SIMULATED SLOWER DISK: every fsync/fdatasync of ${r.engine === 'postgres' ? 'keel, the raw peer and the server' : 'keel and the raw peer'} ` +
      `takes ${r.flush_delay_us} us longer (--flush-delay-us, slow_flush.c).`);
  }
  if (r.fs_type === 'tmpfs' || r.fs_type === 'ramfs') {
    lines.push('NOTE: the temp dir is in memory: fsync is free here, so these figures do not reflect a disk.');
  }
  lines.push(...backgroundLines(r.background_load));
  lines.push('');
  lines.push(`raw: ${r.raw_text}`);
  const rh = ['raw', 'commits', 'commits/s', 'p50 us', 'p90 us', 'p99 us', 'max us'];
  const rrows = r.raw.halves.map((h, i) => [i === 0 ? 'before keel' : 'after keel', String(h.commits), fmt(h.commits_per_s),
    fmt(h.p50_us), fmt(h.p90_us), fmt(h.p99_us), fmt(h.max_us)]);
  rrows.push(['pooled', String(r.raw.commits), fmt(r.raw.commits_per_s), '', '', '', '']);
  lines.push(...table(rh, rrows));
  lines.push('');
  lines.push('keel: charge_account over stdio, a fresh keel per row; CPU (keel\'s and this driver\'s) over the measured');
  lines.push('phase; peak RSS is keel\'s VmHWM at its end; latency is send -> response.');
  const kh = ['phase', 'in flight', 'calls', 'calls/s', 'p50 ms', 'p99 ms', 'max ms', 'keel CPU us/call', 'keel CPU cores',
    'peak RSS MB', 'driver CPU us/call', 'ok', 'other'];
  const krows = r.new_keys.map((x) => ['new key', String(x.K), String(x.calls), fmt(x.per_s), fmt(x.latency_ms.p50, 2),
    fmt(x.latency_ms.p99, 2), fmt(x.latency_ms.max, 1), fmt(x.keel_cpu_us_per_call), fmt(x.keel_cpu_cores, 2),
    fmt(x.keel_peak_rss_mb, 1), fmt(x.driver_cpu_us_per_call), String(x.executed), otherText(x.errors, x.replayed ? { replayed: x.replayed } : {})]);
  const p = r.replays;
  krows.push(['replay', String(p.K), String(p.calls), fmt(p.per_s), fmt(p.latency_ms.p50, 3), fmt(p.latency_ms.p99, 3),
    fmt(p.latency_ms.max, 1), fmt(p.keel_cpu_us_per_call, 1), fmt(p.keel_cpu_cores, 2), fmt(p.keel_peak_rss_mb, 1),
    fmt(p.driver_cpu_us_per_call, 1), String(p.replays_ok), otherText(p.errors, { not_replayed: p.not_replayed, other_charge_id: p.other_charge_id })]);
  lines.push(...table(kh, krows));
  lines.push('');
  const rawP50ms = summary(r.raw.halves.map((h) => h.p50_us / 1000)).p50; // the lower half's
  for (const x of r.new_keys) {
    let s = `new key, ${x.K} in flight: ${fmt(x.per_s / r.raw.commits_per_s, 2)} x the raw rate`;
    // One call at a time: its latency is one commit plus keel's and the pipe's share.
    if (x.K === 1) s += `; p50 call ${fmt(x.latency_ms.p50, 2)} ms vs raw p50 commit ${fmt(rawP50ms, 2)} ms`;
    lines.push(s);
  }
  lines.push(`replay: every answer replayed with charge ${p.charge_id}: ${p.replays_ok === p.calls ? 'yes' : 'NO'} ` +
    `(${p.replays_ok} of ${p.calls})`);
  for (const x of r.new_keys) if (x.first_bad) lines.push(`new key, ${x.K} in flight, first unexpected answer: ${x.first_bad}`);
  if (p.first_bad) lines.push(`replay, first unexpected answer: ${p.first_bad}`);
  lines.push('');
  const best = r.new_keys.find((x) => x.K === 16) ?? r.new_keys.reduce((a, b) => (b.per_s > a.per_s ? b : a));
  const ratio = best.per_s / r.raw.commits_per_s;
  const allOk = r.new_keys.every((x) => x.executed === x.calls);
  const goals = [
    { goal: `${r.engine_title}: ${r.goal_text} (at ${best.K} in flight)`,
      value: `${fmt(ratio, 2)} (${fmt(best.per_s)}/s vs ${fmt(r.raw.commits_per_s)}/s)`, pass: ratio >= r.goal_ratio },
    { goal: `${r.engine_title}: replays/s >= 20000`, value: `${fmt(p.per_s)}/s`, pass: p.per_s >= 20000 },
    { goal: 'every new-key call executed once', value: allOk ? 'yes' : 'NO', pass: allOk },
    { goal: 'every replay marked replayed, same charge_id', value: p.replays_ok === p.calls ? 'yes' : 'NO', pass: p.replays_ok === p.calls },
  ];
  lines.push(...goalLines(goals));
  return { text: lines.join('\n') + '\n', goals, ratio };
}

function otherText(errors, extra) {
  const parts = Object.entries({ ...errors, ...extra }).filter(([, v]) => v).map(([t, v]) => `${t}:${v}`);
  return parts.length ? parts.join(' ') : '0';
}

async function runEngine(o, engine, dir) {
  const before = await backgroundLoad();
  const defaults = keelDefaults(o.keel);
  const workers = o.workers ?? `new keys: the in-flight count (at least 2); replays: keel default (${defaults.workers === 0 ? `hardware threads, at least 2: ${Math.max(2, cpus().length)}` : defaults.workers})`;
  const half1 = Math.ceil(o.rawCommits / 2), half2 = o.rawCommits - half1;
  log(`${engine.title} raw: ${half1} commits ...`);
  const halves = [engine.raw(1, half1, o.rawWarmup)];
  log(`  ${fmt(halves[0].commits_per_s)} commits/s, p50 ${fmt(halves[0].p50_us)} us`);
  const newKeys = [];
  let lastDb = null;
  for (const K of o.inflight) {
    lastDb = engine.keelDb(K);
    log(`${engine.title} keel new keys, ${K} in flight: ${o.warmup} warm-up + ${o.calls} calls ...`);
    const x = await runNewKeys(o, lastDb, K);
    log(`  ${fmt(x.per_s)} mutations/s, p50 ${fmt(x.latency_ms.p50, 2)} ms`);
    newKeys.push(x);
  }
  log(`${engine.title} raw: ${half2} commits ...`);
  halves.push(engine.raw(2, half2, o.rawWarmup));
  log(`  ${fmt(halves[1].commits_per_s)} commits/s, p50 ${fmt(halves[1].p50_us)} us`);
  log(`${engine.title} keel replays, ${o.replayInflight} in flight: ${o.replayWarmup} warm-up + ${o.replays} calls ...`);
  const replays = await runReplays(o, lastDb);
  log(`  ${fmt(replays.per_s)} replays/s`);
  const rawSeconds = halves.reduce((a, h) => a + h.seconds, 0);
  return {
    mode: 'ledger',
    engine: engine.name,
    engine_title: engine.title,
    settings: engine.settings(halves[0]),
    raw_text: engine.rawText,
    goal_text: engine.goalText,
    goal_ratio: engine.goalRatio,
    cpus: cpus().length,
    clk_tck: CLK_TCK,
    dir,
    fs_type: fsType(dir),
    workers,
    flush_delay_us: o.flushDelayUs,
    raw: { commits: o.rawCommits, seconds: rawSeconds, commits_per_s: o.rawCommits / rawSeconds, halves },
    new_keys: newKeys,
    replays,
    background_load: {
      before_cores: before, after_cores: await backgroundLoad(), loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
    },
  };
}

export async function main(argv) {
  const o = parseArgs(argv);
  const t = performance.now();
  if (o.flushDelayUs > 0) {
    // Children inherit it: the raw programs, keel (cleanEnv keeps all but KEEL_*) and
    // scripts/pg_test_server's server (runuser keeps the environment).
    const shim = ensureSlowFlush(log);
    process.env.LD_PRELOAD = process.env.LD_PRELOAD ? `${shim}:${process.env.LD_PRELOAD}` : shim;
    process.env.BENCH_FLUSH_DELAY_US = String(o.flushDelayUs);
  }
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-ledger-'));
  const names = o.engine === 'both' ? ['sqlite', 'postgres'] : [o.engine];
  const results = [];
  let engine = null;
  const stop = () => { if (engine) engine.stop(); engine = null; };
  process.once('SIGINT', () => { stop(); process.exit(130); });
  try {
    for (const name of names) {
      engine = name === 'sqlite' ? sqliteEngine(dir) : postgresEngine(dir);
      results.push(await runEngine(o, engine, dir));
      stop();
    }
  } catch (e) {
    stop();
    rmSync(dir, { recursive: true, force: true });
    if (e instanceof ServerFailed) die(`keel failed to run: ${e.message}`, 1);
    throw e;
  }
  rmSync(dir, { recursive: true, force: true });
  const reports = results.map((r) => ({ r, ...report(r) }));
  if (o.json) {
    const out = reports.map(({ r, goals, ratio }) => ({ ...r, ratio, goals }));
    process.stdout.write(JSON.stringify(out.length === 1 ? out[0] : { engines: out }, null, 2) + '\n');
  } else {
    process.stdout.write(reports.map((x) => x.text).join('\n'));
    if (reports.length > 1) {
      process.stdout.write('\nside by side (new-key mutations/s; ratio to the same engine\'s raw commits/s)\n');
      const head = ['engine', 'raw commits/s', ...o.inflight.map((K) => `keel @${K}`), ...o.inflight.map((K) => `ratio @${K}`), 'replays/s'];
      const rows = reports.map(({ r }) => [r.engine_title, fmt(r.raw.commits_per_s),
        ...r.new_keys.map((x) => fmt(x.per_s)), ...r.new_keys.map((x) => fmt(x.per_s / r.raw.commits_per_s, 2)),
        fmt(r.replays.per_s)]);
      process.stdout.write(table(head, rows).join('\n') + '\n');
    }
  }
  log(`done in ${fmt((performance.now() - t) / 1000, 1)} s`);
}
