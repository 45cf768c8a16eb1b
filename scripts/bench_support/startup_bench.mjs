// Driver for `scripts/bench --startup`: time from spawning a server to its `initialize`
// response, the start-up an MCP host pays each time it launches keel. Like the other benches
// it prints figures and asserts nothing: goals are printed as PASS/MISS for information, and
// the exit status is 0 unless a server fails to run (spawn error, no initialize response
// within 10 s, an error response, a nonzero exit after stdin EOF).
//
// Kinds, each started by this Node driver with child_process.spawn in a temp dir, with the
// environment minus KEEL_* variables:
//   keel-fresh-db     keel --db <a new temp dir>/keel.db: the file does not exist, so keel
//                     creates it and runs every schema migration (with fsyncs) before it
//                     reads stdin. A new temp dir each run.
//   keel-existing-db  keel --db <one temp dir>/keel.db: the same file every run, created and
//                     migrated by one unrecorded keel run before the first, so keel only
//                     opens it (and does its start-up housekeeping: reaping, task recovery).
//   sdk               the official TypeScript SDK server (sdk_echo_server.mjs: McpServer +
//                     StdioServerTransport) on this Node, started the same way.
//   floor             the bench's trivial C server (floor.c): the cost of Node spawning a
//                     process and one round trip over its pipes, with no start-up work.
// One run: t0 = performance.now(); spawn(); the initialize request is written at once (the
// pipe holds it until the server reads); t1 = when the response line with id 0 arrives.
// "initialize ms" = t1 - t0, so it includes Node's spawn() call (libuv fork+exec, returns
// once the exec succeeded; printed apart as "spawn() ms"). Then the server's VmHWM is read
// (peak RSS by the time it answered), stdin is closed and its exit awaited (exit code must
// be 0; "exit after EOF ms"). Runs never overlap. The kinds take turns, one run of each per
// round (--warmup unrecorded rounds first), so a drift in the machine's load lands on all.
import { readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { backgroundLoad } from './machine_load.mjs';
import { forEachArg, table } from './cli.mjs';
import { ensureFloor } from './floor.mjs';
import { spawnLines } from '../../tests/support/keel_process.mjs';
import {
  log, die, ServerFailed, cleanEnv, procStatusKB, summary, fmt, backgroundLines, goalLines,
} from './coordinator_bench.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

const GOAL_INIT_MS = 20; // keel's goal: `initialize` answered within 20 ms of start
const INIT_TIMEOUT_MS = 10000;
const EXIT_TIMEOUT_MS = 5000;

export const USAGE = `usage: scripts/bench --startup [--runs N] [--warmup N] [--servers keel,sdk,floor] [--keel PATH] [--json]
  --startup         time from spawn() to the initialize response, keel (fresh and existing --db)
                    vs the official TypeScript SDK server and the C floor
                    (method: scripts/bench_support/startup_bench.mjs)
    --runs N        measured runs of each kind (default 100)
    --warmup N      unrecorded rounds first (default 3)
    --servers L     which servers (default keel,sdk,floor; keel runs both of its kinds)
  --keel PATH       keel binary (default $KEEL_BINARY or build/keel)
  --json            print the results as JSON on stdout instead of the summary
Progress goes to stderr. Exit 0 unless a server fails to run.`;

function parseArgs(argv) {
  const o = {
    runs: 100,
    warmup: 3,
    servers: ['keel', 'sdk', 'floor'],
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    json: false,
  };
  forEachArg(argv, USAGE, die, (a, val, int) => {
    switch (a) {
      case '--startup': break;
      case '--cancel': case '--flood': case '--ledger': case '--command':
        die('--startup, --cancel, --flood, --ledger and --command are separate runs; pick one'); break;
      case '--runs': o.runs = int(val(), 1); break;
      case '--warmup': o.warmup = int(val()); break;
      case '--servers': o.servers = val().split(','); break;
      case '--keel': o.keel = resolve(val()); break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  for (const s of o.servers) if (!['keel', 'sdk', 'floor'].includes(s)) die(`unknown server: ${s}`);
  if (o.servers.includes('keel') && !existsSync(o.keel)) die(`no keel binary at ${o.keel} (run scripts/build)`, 1);
  return o;
}

const INIT_REQ = JSON.stringify({
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'keel-bench', version: '0' } },
}) + '\n';

// One start: spawn, initialize, EOF, exit. Returns the run's figures.
async function startOnce(kind, cmd, args, cwd) {
  let initAt = null, initLine = null, failure = null;
  let wake = null;
  const fail = (why) => { failure ??= why; if (wake) wake(); };
  const p = spawnLines(cmd, args, {
    cwd, env: cleanEnv(), stderrLimit: 4000,
    onError: (e, where) => fail(where === 'spawn' ? `spawn failed: ${e.message}` : `write to stdin failed: ${e.message}`),
    onLine: (line) => {
      if (initLine !== null) return; // the rest of the output (none expected) is not ours
      initAt = performance.now();
      initLine = line;
      if (wake) wake();
    },
  });
  const t0 = p.startedAt;
  const spawnMs = p.spawnMs;
  const child = p.child;
  const exitP = p.exited.then((exit) => {
    if (initLine === null) fail(`exited before answering initialize (code ${exit.code}, signal ${exit.signal})`);
    if (wake) wake();
    return exit;
  });
  const describe = (msg) => `${kind}: ${msg}` + (p.stderr.trim() ? `\n--- ${kind} stderr (tail) ---\n${p.stderr}` : '');
  try {
    child.stdin.write(INIT_REQ);
    await new Promise((res) => {
      const timer = setTimeout(() => fail(`no initialize response within ${INIT_TIMEOUT_MS} ms`), INIT_TIMEOUT_MS);
      wake = () => { clearTimeout(timer); wake = null; res(); };
      if (initLine !== null || failure) wake();
    });
    if (failure) throw new ServerFailed(describe(failure));
    let msg;
    try { msg = JSON.parse(initLine); } catch { throw new ServerFailed(describe(`not JSON: ${initLine.slice(0, 300)}`)); }
    if (msg.id !== 0 || !msg.result?.protocolVersion) {
      throw new ServerFailed(describe(`bad initialize response: ${initLine.slice(0, 300)}`));
    }
    let rssMB = NaN;
    try { rssMB = procStatusKB(child.pid).hwm / 1024; } catch { /* exited already: NaN */ }
    const tEof = performance.now();
    child.stdin.end();
    let timer;
    const ex = await Promise.race([exitP, new Promise((r) => { timer = setTimeout(r, EXIT_TIMEOUT_MS, null); })]);
    clearTimeout(timer);
    if (!ex) throw new ServerFailed(describe(`did not exit within ${EXIT_TIMEOUT_MS} ms of stdin EOF`));
    if (ex.code !== 0) throw new ServerFailed(describe(`exit code ${ex.code}, signal ${ex.signal} after stdin EOF`));
    return { init_ms: initAt - t0, spawn_ms: spawnMs, rss_mb: rssMB, exit_after_eof_ms: ex.at - tEof };
  } finally {
    if (p.exit === null) child.kill('SIGKILL');
  }
}

function kinds(o, existingDir) {
  const list = [];
  if (o.servers.includes('keel')) {
    list.push({
      name: 'keel-fresh-db',
      desc: 'keel --db <new temp dir>/keel.db (created and migrated at start-up)',
      start: () => {
        const dir = mkdtempSync(join(tmpdir(), 'keel-bench-startup-'));
        return { cmd: o.keel, args: ['--db', join(dir, 'keel.db')], cwd: dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
      },
    });
    list.push({
      name: 'keel-existing-db',
      desc: 'keel --db <one temp dir>/keel.db (existing, migrated file, the same every run)',
      start: () => ({ cmd: o.keel, args: ['--db', join(existingDir, 'keel.db')], cwd: existingDir, cleanup: () => {} }),
    });
  }
  if (o.servers.includes('sdk')) {
    list.push({
      name: 'sdk',
      desc: `official TypeScript SDK server (node ${process.version} sdk_echo_server.mjs)`,
      start: () => ({ cmd: process.execPath, args: [join(here, 'sdk_echo_server.mjs')], cwd: existingDir, cleanup: () => {} }),
    });
  }
  if (o.servers.includes('floor')) {
    let bin;
    try { bin = ensureFloor(log); } catch (e) { throw new ServerFailed(e.message); }
    list.push({
      name: 'floor',
      desc: 'C floor (floor.c: Node spawn + one pipe round trip, no start-up work)',
      start: () => ({ cmd: bin, args: [], cwd: existingDir, cleanup: () => {} }),
    });
  }
  return list;
}

async function run(o) {
  const existingDir = mkdtempSync(join(tmpdir(), 'keel-bench-startup-existing-'));
  try {
    const ks = kinds(o, existingDir);
    if (o.servers.includes('keel')) {
      // Creates and migrates the existing-db kind's file (unrecorded).
      await startOnce('keel (creating the existing db)', o.keel, ['--db', join(existingDir, 'keel.db')], existingDir);
    }
    const samples = Object.fromEntries(ks.map((k) => [k.name, []]));
    log(`startup: ${o.warmup} warm-up + ${o.runs} measured rounds of ${ks.map((k) => k.name).join(', ')} ...`);
    const t = performance.now();
    for (let round = 0; round < o.warmup + o.runs; round++) {
      for (const k of ks) {
        const s = k.start();
        try {
          const r = await startOnce(k.name, s.cmd, s.args, s.cwd);
          if (round >= o.warmup) samples[k.name].push(r);
        } finally {
          s.cleanup();
        }
      }
      if ((round + 1) % 25 === 0) log(`  round ${round + 1} of ${o.warmup + o.runs}`);
    }
    const results = {};
    for (const k of ks) {
      const xs = samples[k.name];
      results[k.name] = {
        kind: k.name,
        desc: k.desc,
        runs: xs.length,
        init_ms: summary(xs.map((x) => x.init_ms)),
        spawn_ms: summary(xs.map((x) => x.spawn_ms)),
        rss_at_init_mb: summary(xs.map((x) => x.rss_mb)),
        exit_after_eof_ms: summary(xs.map((x) => x.exit_after_eof_ms)),
        init_over_goal: xs.filter((x) => x.init_ms >= GOAL_INIT_MS).length,
      };
    }
    return { results, seconds: (performance.now() - t) / 1000 };
  } finally {
    rmSync(existingDir, { recursive: true, force: true });
  }
}

function ratios(results) {
  const p50 = (k) => results[k]?.init_ms.p50;
  const out = {};
  for (const k of ['keel-fresh-db', 'keel-existing-db']) {
    if (!results[k]) continue;
    if (results.sdk) out[`sdk_over_${k}_p50`] = p50('sdk') / p50(k);
    if (results.floor) out[`${k}_minus_floor_p50_ms`] = p50(k) - p50('floor');
  }
  return out;
}

function report(r) {
  const lines = [];
  lines.push(`start-up: time from spawn() to the initialize response, ${r.runs} runs of each kind after ${r.warmup}` +
    ` unrecorded rounds, kinds in turn; ${r.cpus} CPU core(s) shared by the driver and the server.`);
  lines.push(...backgroundLines(r.background_load));
  lines.push('');
  for (const x of Object.values(r.results)) lines.push(`  ${x.kind.padEnd(16)}  ${x.desc}`);
  lines.push('');
  const head = ['kind', 'runs', 'init p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'min ms', 'spawn() p50 ms', 'RSS at init MB',
    'exit after EOF p50 ms'];
  const rows = Object.values(r.results).map((x) => [x.kind, String(x.runs), fmt(x.init_ms.p50, 2), fmt(x.init_ms.p90, 2),
    fmt(x.init_ms.p99, 2), fmt(x.init_ms.max, 2), fmt(x.init_ms.min, 2), fmt(x.spawn_ms.p50, 2), fmt(x.rss_at_init_mb.p50, 1),
    fmt(x.exit_after_eof_ms.p50, 2)]);
  lines.push(...table(head, rows));
  lines.push('');
  lines.push('init: spawn() -> the initialize response line, so it includes Node\'s spawn() call (spawn() p50; the floor');
  lines.push('shows spawn + one pipe round trip with no start-up work). RSS at init: the server\'s VmHWM when it answered.');
  const q = r.ratios;
  const ratioLines = [];
  for (const k of ['keel-fresh-db', 'keel-existing-db']) {
    if (q[`sdk_over_${k}_p50`] !== undefined) ratioLines.push(`  SDK p50 / ${k} p50: ${fmt(q[`sdk_over_${k}_p50`], 1)}x`);
    if (q[`${k}_minus_floor_p50_ms`] !== undefined) {
      ratioLines.push(`  ${k} p50 - floor p50 (keel's own start-up): ${fmt(q[`${k}_minus_floor_p50_ms`], 2)} ms`);
    }
  }
  if (ratioLines.length) { lines.push(''); lines.push('ratios:'); lines.push(...ratioLines); }
  lines.push('');
  const goals = [];
  for (const k of ['keel-fresh-db', 'keel-existing-db']) {
    const x = r.results[k];
    if (!x) continue;
    goals.push({ goal: `${k}: initialize answered < ${GOAL_INIT_MS} ms after spawn (p99)`,
      value: `${fmt(x.init_ms.p99, 2)} ms (max ${fmt(x.init_ms.max, 2)}; ${x.init_over_goal} of ${x.runs} runs >= ${GOAL_INIT_MS} ms)`,
      pass: x.init_ms.p99 < GOAL_INIT_MS });
  }
  if (goals.length) lines.push(...goalLines(goals));
  else lines.push('goals: none without keel (the goal is keel\'s)');
  return { text: lines.join('\n') + '\n', goals };
}

export async function main(argv) {
  const o = parseArgs(argv);
  const t = performance.now();
  const before = await backgroundLoad();
  let out;
  try {
    out = await run(o);
  } catch (e) {
    if (e instanceof ServerFailed) die(`a server failed to run: ${e.message}`, 1);
    throw e;
  }
  const r = {
    mode: 'startup',
    cpus: cpus().length,
    runs: o.runs,
    warmup: o.warmup,
    servers: o.servers,
    node: process.version,
    goal_init_ms: GOAL_INIT_MS,
    results: out.results,
    ratios: ratios(out.results),
    seconds: out.seconds,
    background_load: {
      before_cores: before, after_cores: await backgroundLoad(), loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
    },
  };
  const { text, goals } = report(r);
  process.stdout.write(o.json ? JSON.stringify({ ...r, goals }, null, 2) + '\n' : text);
  log(`done in ${fmt((performance.now() - t) / 1000, 1)} s`);
}
