// Driver for `scripts/bench --command`: the overhead of a command-backed tool over
// running the same command directly, measured from outside over stdio. Like the other
// benches it prints figures and asserts nothing: goals are printed as PASS/MISS for
// information, and the exit status is 0 unless keel or the direct spawns fail to run (spawn
// error, early exit, a stall, a malformed response, a child exiting nonzero).
//
// Setup: one fresh temp dir (os.tmpdir()) holding a catalog with two read tools,
//   true_cmd  run.command ["/bin/true"], output "text" (cwd: the catalog's dir, the temp dir)
//   echo      keel's built-in no-op implementation (the protocol and pipeline alone)
// and keel's --db. keel runs with --catalog <it> --db <dir>/keel.db --workers W (default: the
// --inflight count, so that many children can run at once; keel's own default is the
// number of hardware threads). That keel serves echo and true_cmd in every phase.
//
// Peers ("direct"), run by this Node driver with child_process.spawn in the same temp dir:
//   direct-min    spawn('/bin/true', {stdio: 'ignore'}), wait for 'exit': the cheapest way
//                 Node runs the command (the headline peer: the conservative one, as it
//                 makes keel's added latency largest of the two);
//   direct-pipes  what keel does per call: stdin a pipe fed one JSON line then closed,
//                 stdout, stderr and fd 3 pipes read to EOF, keel's environment (allow-list
//                 plus the seven KEEL_* variables), detached (a new session, so a new group), wait
//                 for 'close' (exit and EOF on every pipe).
//   Node's spawn is libuv's fork+exec on the driver's thread; keel spawns with glibc's
//   posix_spawn (clone(CLONE_VM|CLONE_VFORK)) on a worker thread, which copies no page
//   tables. So a Node peer is not the spawn cost keel pays (on a VM where fork is dear it
//   costs more than keel's whole call, and added latency comes out negative). The spawn as
//   keel pays it comes from keel itself: a second keel, the same but with --trace-file
//   (kind true_cmd+trace; --no-trace skips it), and each `tool.attempt.end` event's
//   duration_ms is one attempt as keel runs it (argv and environment, posix_spawn, stdin,
//   pipes to EOF, group kill, reap). Per call, round trip minus its attempt(s) is what keel
//   adds around the child (protocol, queueing, policy, result, and writing the trace); its
//   p50 is the second latency goal, which does not depend on the peer. Tracing's own cost
//   is printed (true_cmd+trace p50 - true_cmd p50); the traced keel is not used for the
//   other kinds so that they do not pay it.
//
// Sequential phase (1 in flight): --calls calls each of direct-min, direct-pipes, keel echo,
//   keel true_cmd and true_cmd+trace, interleaved in blocks of --block (each block runs the
//   kinds in turn), so a drift in the machine's load lands on all of them. Latency: direct =
//   spawn() -> 'exit' / 'close'; keel = request written -> response line read
//   (performance.now()). added latency p50 = keel true_cmd p50 - direct-min p50 (goal: under
//   2 ms); the printout also gives it against direct-pipes, and echo p50 separates keel's
//   protocol overhead from its process overhead (true_cmd p50 - echo p50).
// Throughput phase (--inflight K, default 16): --calls each of direct-min spawns with K
//   running at once, direct-pipes likewise, and keel true_cmd calls with exactly K in flight
//   (each response releases one request), in blocks of --tp-block, interleaved the same
//   way; calls/s = calls / summed wall time of the kind's blocks.
// Before each phase: --warmup unrecorded calls of every kind. Every keel answer must be a
// result without isError (true_cmd: one text block); anything else is counted by type and
// printed. CPU per call: keel's own (utime+stime) and its reaped children's (cutime+cstime)
// from /proc/<keel>/stat; the driver's from process.cpuUsage() and its children's from
// /proc/self/stat, summed over the blocks of each kind. The driver, keel and the children
// share this machine's CPUs.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { backgroundLoad } from './machine_load.mjs';
import { forEachArg, table } from './cli.mjs';
import {
  log, die, ServerFailed, startKeel, waitUntil, initialize, summary, fmt, backgroundLines, goalLines,
} from './coordinator_bench.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

const TRUE = '/bin/true';
const GOAL_ADDED_MS = 2;

export const USAGE = `usage: scripts/bench --command [--calls N] [--warmup N] [--inflight K] [--workers W]
                               [--block N] [--tp-block N] [--no-trace] [--keel PATH] [--json]
  --command           a command-backed tool running ${TRUE} vs spawning it directly from Node
                      (method: scripts/bench_support/command_bench.mjs)
    --calls N         measured calls of each kind, sequential and at K in flight (default 1000)
    --warmup N        unrecorded calls of each kind before each phase (default 50)
    --inflight K      in flight for the throughput phase (default 16)
    --workers W       keel --workers (default: K)
    --block N         sequential calls per kind per interleaved block (default 100)
    --tp-block N      throughput calls per kind per interleaved block (default 500)
    --no-trace        skip true_cmd+trace (the second, traced keel that gives keel's own
                      attempt time per call)
  --keel PATH         keel binary (default $KEEL_BINARY or build/keel)
  --json              print the results as JSON on stdout instead of the summary
Progress goes to stderr. Exit 0 unless keel or the direct spawns fail to run.`;

const CLK_TCK = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; }
})();

function parseArgs(argv) {
  const o = {
    calls: 1000,
    warmup: 50,
    inflight: 16,
    workers: null,
    block: 100,
    tpBlock: 500,
    trace: true,
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    json: false,
  };
  forEachArg(argv, USAGE, die, (a, val, int) => {
    switch (a) {
      case '--command': break;
      case '--cancel': case '--flood': case '--ledger':
        die('--command, --cancel, --flood and --ledger are separate runs; pick one'); break;
      case '--calls': o.calls = int(val(), 1); break;
      case '--warmup': o.warmup = int(val()); break;
      case '--inflight': o.inflight = int(val(), 1); break;
      case '--workers': o.workers = int(val(), 1); break;
      case '--block': o.block = int(val(), 1); break;
      case '--tp-block': o.tpBlock = int(val(), 1); break;
      case '--no-trace': o.trace = false; break;
      case '--keel': o.keel = resolve(val()); break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  o.workers ??= o.inflight;
  if (!existsSync(o.keel)) die(`no keel binary at ${o.keel} (run scripts/build)`, 1);
  if (!existsSync(TRUE)) die(`no ${TRUE} on this machine`, 1);
  return o;
}

// utime+stime and cutime+cstime (reaped children) of a live process, in seconds (fields
// 14-17 of /proc/<pid>/stat, counted after the ')' that ends the command name).
function cpuTimes(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return { self: (Number(f[11]) + Number(f[12])) / CLK_TCK, children: (Number(f[13]) + Number(f[14])) / CLK_TCK };
}

// ---------------------------------------------------------------------------------------
// the catalog

function writeCatalog(dir) {
  const catalog = {
    tools: [
      {
        name: 'true_cmd',
        description: `Runs ${TRUE} (scripts/bench --command).`,
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        effect: 'read',
        run: { command: [TRUE], output: 'text' },
      },
      {
        name: 'echo',
        description: 'Echoes its text (keel\'s built-in no-op; scripts/bench --command).',
        inputSchema: {
          type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false,
        },
        effect: 'read',
      },
    ],
  };
  const file = join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify(catalog, null, 2) + '\n');
  return file;
}

// ---------------------------------------------------------------------------------------
// direct: Node spawns /bin/true

// The environment keel gives the child: its default allow-list from our environment, then
// the KEEL_* variables of command_tool.h (values of the same shape).
function keelLikeEnv() {
  const env = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'LOGNAME']) {
    if (process.env[k] !== undefined) env[k] = process.env[k];
  }
  Object.assign(env, {
    KEEL_TOOL: 'true_cmd', KEEL_INTENT_ID: 'k0123abcd-1', KEEL_ATTEMPT: '1', KEEL_ATTEMPT_ID: 'k0123abcd-1/1',
    KEEL_DEADLINE_MS: '10000', KEEL_REQUEST_ID: '1',
  });
  return env;
}

function directKinds(dir) {
  const env = keelLikeEnv();
  return {
    'direct-min': {
      desc: `spawn('${TRUE}', {stdio: 'ignore'}) -> 'exit'`,
      run: () => new Promise((res, rej) => {
        const t0 = performance.now();
        const c = spawn(TRUE, [], { cwd: dir, stdio: 'ignore' });
        c.once('error', (e) => rej(new ServerFailed(`direct spawn of ${TRUE} failed: ${e.message}`)));
        c.once('exit', (code, signal) => {
          const t = performance.now();
          if (code !== 0) rej(new ServerFailed(`${TRUE} (direct) ended with code ${code}, signal ${signal}`));
          else res(t - t0);
        });
      }),
    },
    'direct-pipes': {
      desc: 'stdin line + stdout/stderr/fd3 pipes to EOF, keel\'s env, detached -> \'close\'',
      run: () => new Promise((res, rej) => {
        const t0 = performance.now();
        const c = spawn(TRUE, [], { cwd: dir, env, detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
        c.once('error', (e) => rej(new ServerFailed(`direct spawn of ${TRUE} failed: ${e.message}`)));
        c.stdin.on('error', () => {}); // EPIPE: /bin/true does not read its stdin (keel ignores it too)
        c.stdin.end('{}\n');
        c.stdout.resume();
        c.stderr.resume();
        c.stdio[3].resume();
        c.once('close', (code, signal) => {
          const t = performance.now();
          if (code !== 0) rej(new ServerFailed(`${TRUE} (direct) ended with code ${code}, signal ${signal}`));
          else res(t - t0);
        });
      }),
    },
  };
}

// n runs of `run`, K at a time. Resolves with the latencies (ms) and the wall time.
function directDrive(run, n, K) {
  return new Promise((res, rej) => {
    const lat = new Float64Array(n);
    let next = 0, done = 0, failed = false;
    const t0 = performance.now();
    const launch = () => {
      const j = next++;
      run().then((ms) => {
        lat[j] = ms;
        done++;
        if (done === n) res({ ms: performance.now() - t0, latencies: Array.from(lat) });
        else if (next < n && !failed) launch();
      }, (e) => { if (!failed) { failed = true; rej(e); } });
    };
    while (next < n && next < K) launch();
  });
}

// ---------------------------------------------------------------------------------------
// keel

const callLine = (id, name, args) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}\n`;
const ECHO_ARGS = '{"text":"x"}';

// Sends n calls of `name`, exactly K in flight (requests released by one chunk of responses
// go out in one write()); calls `check(msg)` for each response. Ids continue k.nextId.
async function keelDrive(k, name, args, n, K, check) {
  const first = k.nextId;
  k.nextId += n;
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
      out += callLine(first + next, name, args);
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
    check(m);
    release();
    if (done === n && k.kick) k.kick();
  };
  const t0 = performance.now();
  release();
  await waitUntil(k, () => done === n, () => done, `${n} ${name} calls, ${K} in flight`);
  return { ms: performance.now() - t0, latencies: Array.from(lat), first };
}

function errorType(m, name) {
  if (m.error) return `jsonrpc ${m.error.code}`;
  const r = m.result;
  if (!r) return 'no result';
  if (r.isError) return r.structuredContent?.error?.type ?? 'isError';
  if (name === 'true_cmd' && !(r.content?.length === 1 && r.content[0].type === 'text')) return 'not one text block';
  return null;
}

function checker(acc, name) {
  return (m) => {
    const type = errorType(m, name);
    if (!type) { acc.ok++; return; }
    acc.errors[type] = (acc.errors[type] ?? 0) + 1;
    acc.first_bad ??= JSON.stringify(m).slice(0, 400);
  };
}

async function withKeel(o, args, body) {
  const k = startKeel(o.keel, args);
  k.nextId = 1;
  try {
    await initialize(k);
    const r = await body(k);
    const ex = await k.close();
    if (ex.code !== 0) throw new ServerFailed(`exited with code ${ex.code}, signal ${ex.signal} after stdin EOF`);
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

// ---------------------------------------------------------------------------------------
// phases

const ORDER_SEQ = ['direct-min', 'direct-pipes', 'echo', 'true_cmd', 'true_cmd+trace'];
const ORDER_TP = ['direct-min', 'direct-pipes', 'true_cmd'];
const isDirect = (kind) => kind.startsWith('direct');

function newAcc(kind) {
  return { kind, calls: 0, ms: 0, latencies: [], ids: [], ok: 0, errors: {}, first_bad: null,
    keel_cpu_s: 0, child_cpu_s: 0, driver_cpu_s: 0 };
}

// One block of `n` calls of one kind, K in flight, added to `acc`. `keels.main` serves
// echo and true_cmd, `keels.traced` true_cmd+trace; direct kinds read keel's CPU as 0.
async function block(acc, keels, kinds, n, K) {
  const k = acc.kind === 'true_cmd+trace' ? keels.traced : keels.main;
  const keel0 = cpuTimes(k.pid), self0 = cpuTimes(process.pid), drv0 = process.cpuUsage();
  let r;
  if (isDirect(acc.kind)) {
    r = await directDrive(kinds[acc.kind].run, n, K);
    acc.ok += n;
  } else {
    const tool = acc.kind === 'echo' ? 'echo' : 'true_cmd';
    r = await keelDrive(k, tool, tool === 'echo' ? ECHO_ARGS : '{}', n, K, checker(acc, tool));
    for (let j = 0; j < n; j++) acc.ids.push(r.first + j);
  }
  const keel1 = cpuTimes(k.pid), self1 = cpuTimes(process.pid), drv = process.cpuUsage(drv0);
  acc.calls += n;
  acc.ms += r.ms;
  for (const x of r.latencies) acc.latencies.push(x);
  acc.keel_cpu_s += keel1.self - keel0.self;
  acc.driver_cpu_s += (drv.user + drv.system) / 1e6;
  acc.child_cpu_s += isDirect(acc.kind) ? self1.children - self0.children : keel1.children - keel0.children;
}

function figures(acc) {
  const l = summary(acc.latencies);
  const { latencies, ids, ...rest } = acc;
  const per = (s) => (s / acc.calls) * 1e6;
  return {
    ...rest,
    keel_cpu_s: isDirect(acc.kind) ? null : acc.keel_cpu_s,
    seconds: acc.ms / 1000,
    per_s: acc.calls / (acc.ms / 1000),
    latency_ms: { p50: l.p50, p90: l.p90, p99: l.p99, max: l.max, min: l.min },
    keel_cpu_us_per_call: isDirect(acc.kind) ? null : per(acc.keel_cpu_s),
    driver_cpu_us_per_call: per(acc.driver_cpu_s),
    child_cpu_us_per_call: acc.kind === 'echo' ? null : per(acc.child_cpu_s),
  };
}

// Runs the kinds of `order` interleaved in blocks of `blockN` until each has `total` calls.
async function interleaved(keels, kinds, order, total, blockN, K) {
  const accs = Object.fromEntries(order.map((kind) => [kind, newAcc(kind)]));
  for (let done = 0; done < total; done += blockN) {
    const n = Math.min(blockN, total - done);
    for (const kind of order) await block(accs[kind], keels, kinds, n, K);
  }
  return accs;
}

async function warm(keels, kinds, order, n, K) {
  if (!n) return;
  for (const kind of order) await block(newAcc(kind), keels, kinds, n, K);
}

function peakRssMB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

// Per call of the traced keel: its round trip and keel's own attempt time (the sum of its
// tool.attempt.end duration_ms; one attempt unless retried), matched by JSON-RPC id.
function tracedFigures(acc, trace) {
  const attempt = new Map();
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    if (!line.includes('"tool.attempt.end"')) continue;
    const a = JSON.parse(line).attributes ?? {};
    if (a['gen_ai.tool.name'] !== 'true_cmd' || typeof a.duration_ms !== 'number') continue;
    const id = Number(a['jsonrpc.request.id']);
    attempt.set(id, (attempt.get(id) ?? 0) + a.duration_ms);
  }
  const att = [], around = [];
  acc.ids.forEach((id, j) => {
    const d = attempt.get(id);
    if (d === undefined) return;
    att.push(d);
    around.push(acc.latencies[j] - d);
  });
  if (!att.length) throw new ServerFailed(`no tool.attempt.end events of the measured true_cmd calls in ${trace}`);
  const pick = (l) => ({ p50: l.p50, p90: l.p90, p99: l.p99, max: l.max, min: l.min });
  return {
    calls: acc.calls, matched: att.length,
    round_trip_ms: pick(summary(acc.latencies)),
    attempt_ms: pick(summary(att)),
    round_trip_minus_attempt_ms: pick(summary(around)),
  };
}

async function runAll(o, dir, catalog, kinds) {
  const args = ['--catalog', catalog, '--db', join(dir, 'keel.db'), '--workers', String(o.workers)];
  const trace = join(dir, 'trace.jsonl');
  const tracedArgs = ['--catalog', catalog, '--db', join(dir, 'keel-traced.db'), '--workers', String(o.workers),
    '--trace-file', trace];
  const order = o.trace ? ORDER_SEQ : ORDER_SEQ.filter((x) => x !== 'true_cmd+trace');
  return withKeel(o, args, async (main) => {
    const keels = { main };
    const seqAccs = o.trace
      ? await withKeel(o, tracedArgs, async (traced) => {
        keels.traced = traced;
        return sequential(o, keels, kinds, order);
      })
      : await sequential(o, keels, kinds, order);
    const seq = Object.fromEntries(order.map((x) => [x, figures(seqAccs[x])]));
    const tracedExtra = o.trace ? tracedFigures(seqAccs['true_cmd+trace'], trace) : null;
    const K = o.inflight;
    log(`${K} in flight: ${o.warmup} warm-up + ${o.calls} calls each of ${ORDER_TP.join(', ')} (blocks of ${o.tpBlock}) ...`);
    await warm(keels, kinds, ORDER_TP, o.warmup, K);
    const tpAccs = await interleaved(keels, kinds, ORDER_TP, o.calls, o.tpBlock, K);
    const tp = Object.fromEntries(ORDER_TP.map((x) => [x, figures(tpAccs[x])]));
    log(`  per s: ${ORDER_TP.map((x) => `${x} ${fmt(tp[x].per_s)}`).join(', ')}`);
    return { keel_args: args, traced_keel_args: o.trace ? tracedArgs : null, sequential: seq, traced: tracedExtra,
      throughput: tp, keel_peak_rss_mb: peakRssMB(main.pid) };
  });
}

async function sequential(o, keels, kinds, order) {
  log(`sequential: ${o.warmup} warm-up + ${o.calls} calls each of ${order.join(', ')} (blocks of ${o.block}) ...`);
  await warm(keels, kinds, order, o.warmup, 1);
  const accs = await interleaved(keels, kinds, order, o.calls, o.block, 1);
  log(`  p50 ms: ${order.map((x) => `${x} ${fmt(summary(accs[x].latencies).p50, 3)}`).join(', ')}`);
  return accs;
}

// ---------------------------------------------------------------------------------------

function otherText(errors) {
  const parts = Object.entries(errors).filter(([, v]) => v).map(([t, v]) => `${t}:${v}`);
  return parts.length ? parts.join(' ') : '0';
}

const opt = (v, d = 0) => (v === null || v === undefined ? '-' : fmt(v, d));

function report(r) {
  const lines = [];
  const s = r.sequential, t = r.throughput, tr = r.traced;
  const K = r.options.inflight;
  lines.push(`keel command-backed tool (run.command ["${TRUE}"], output "text") vs spawning ${TRUE} from Node;`);
  lines.push(`${r.cpus} CPU core(s) shared by the driver, keel and the children. keel ${r.keel_args.join(' ')}`);
  lines.push(`(peak RSS ${fmt(r.keel_peak_rss_mb, 1)} MB).`);
  lines.push(...backgroundLines(r.background_load));
  lines.push('');
  lines.push('The peer is Node\'s child_process.spawn (libuv fork+exec on the driver thread), not a spawn like');
  lines.push('keel\'s (posix_spawn, vfork-like, on a worker thread): the two do not cost the same. keel\'s own');
  lines.push('attempt time (from the traced keel\'s trace) is the spawn as keel pays it.');
  for (const [kind, d] of Object.entries(r.direct_kinds)) lines.push(`  ${kind.padEnd(14)}  ${d}`);
  lines.push('  echo            keel tools/call of its built-in no-op echo (protocol + pipeline, no process)');
  lines.push('  true_cmd        keel tools/call of the command tool');
  if (tr) lines.push('  true_cmd+trace  the same on a second keel with --trace-file (for keel\'s attempt time)');
  lines.push('');
  const head = ['kind', 'in flight', 'calls', 'calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'keel CPU us/call',
    'driver CPU us/call', 'child CPU us/call', 'ok', 'other'];
  const row = (x, k) => [x.kind, String(k), String(x.calls), fmt(x.per_s), fmt(x.latency_ms.p50, 3), fmt(x.latency_ms.p90, 3),
    fmt(x.latency_ms.p99, 3), fmt(x.latency_ms.max, 2), opt(x.keel_cpu_us_per_call), fmt(x.driver_cpu_us_per_call),
    opt(x.child_cpu_us_per_call), String(x.ok), otherText(x.errors)];
  lines.push(`1 in flight (blocks of ${r.options.block} per kind, interleaved) and ${K} in flight ` +
    `(blocks of ${r.options.tpBlock}); latency per call:`);
  lines.push(...table(head, [...Object.values(s).map((x) => row(x, 1)), ...Object.values(t).map((x) => row(x, K))]));
  lines.push('');
  if (tr) {
    lines.push(`true_cmd+trace, per call (${tr.matched} of ${tr.calls} matched to their attempt in the trace):`);
    const trow = (name, x) => [name, fmt(x.p50, 3), fmt(x.p90, 3), fmt(x.p99, 3), fmt(x.max, 2)];
    lines.push(...table(['', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'], [
      trow('round trip', tr.round_trip_ms),
      trow('keel\'s attempt (spawn .. reap)', tr.attempt_ms),
      trow('round trip - attempt', tr.round_trip_minus_attempt_ms),
    ]));
    lines.push('');
  }
  const cmd = s.true_cmd.latency_ms.p50, echo = s.echo.latency_ms.p50;
  const dmin = s['direct-min'].latency_ms.p50, dpipes = s['direct-pipes'].latency_ms.p50;
  lines.push(`p50 added latency per call: true_cmd ${fmt(cmd, 3)} - direct-min ${fmt(dmin, 3)} = ${fmt(cmd - dmin, 3)} ms` +
    ` (vs direct-pipes ${fmt(dpipes, 3)}: ${fmt(cmd - dpipes, 3)} ms)`);
  lines.push(`  protocol alone (echo p50) ${fmt(echo, 3)} ms; the process in keel (true_cmd - echo) ${fmt(cmd - echo, 3)} ms`);
  if (tr) {
    lines.push(`  keel around the child (p50 of round trip - attempt, traced) ${fmt(tr.round_trip_minus_attempt_ms.p50, 3)} ms;` +
      ` keel's attempt p50 ${fmt(tr.attempt_ms.p50, 3)} ms vs direct-min p50 ${fmt(dmin, 3)} ms;`);
    lines.push(`  tracing cost (true_cmd+trace p50 - true_cmd p50) ${fmt(s['true_cmd+trace'].latency_ms.p50 - cmd, 3)} ms`);
  }
  if (cmd - dmin < 0) {
    lines.push('  NOTE: negative: Node\'s spawn costs more here than keel\'s whole call, so this peer cannot bound');
    lines.push(tr ? '  keel\'s overhead; "keel around the child" is the figure that does not depend on it.'
      : '  keel\'s overhead; without --no-trace, "keel around the child" gives the figure that does not.');
  }
  const tc = t.true_cmd.per_s, tmin = t['direct-min'].per_s, tpipes = t['direct-pipes'].per_s;
  lines.push(`${K} in flight: true_cmd ${fmt(tc)} calls/s vs ${K} concurrent direct-min ${fmt(tmin)} spawns/s = ` +
    `${fmt(tc / tmin, 2)} x (vs direct-pipes ${fmt(tpipes)}/s: ${fmt(tc / tpipes, 2)} x); keel --workers ${r.options.workers}`);
  lines.push(`  (Node forks on its one thread: ${fmt(t['direct-min'].driver_cpu_us_per_call)} us of driver CPU per spawn here;` +
    ' keel spawns from its workers)');
  for (const [name, x] of [...Object.values(s).map((x) => ['1 in flight ' + x.kind, x]),
    ...Object.values(t).map((x) => [`${K} in flight ${x.kind}`, x])]) {
    if (x.first_bad) lines.push(`${name}, first unexpected answer: ${x.first_bad}`);
  }
  lines.push('');
  const added = cmd - dmin;
  const allOk = [...Object.values(s), ...Object.values(t)].every((x) => x.ok === x.calls);
  const goals = [
    { goal: `p50 added latency per call < ${GOAL_ADDED_MS} ms (true_cmd p50 - direct-min p50, Node peer)`,
      value: `${fmt(added, 3)} ms`, pass: added < GOAL_ADDED_MS },
  ];
  if (tr) {
    const around = tr.round_trip_minus_attempt_ms.p50;
    goals.push({ goal: `p50 keel around the child < ${GOAL_ADDED_MS} ms (round trip - keel's attempt, traced)`,
      value: `${fmt(around, 3)} ms`, pass: around < GOAL_ADDED_MS });
  }
  goals.push({ goal: 'every keel call answered ok', value: allOk ? 'yes' : 'NO', pass: allOk });
  lines.push(...goalLines(goals));
  lines.push(`  (no goal for calls/s at ${K} in flight; ratio above: ${fmt(tc / tmin, 2)} x direct-min)`);
  return { text: lines.join('\n') + '\n', goals, added_latency_p50_ms: added, throughput_ratio: tc / tmin };
}

export async function main(argv) {
  const o = parseArgs(argv);
  const t = performance.now();
  const before = await backgroundLoad();
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-command-'));
  try {
    const catalog = writeCatalog(dir);
    const kinds = directKinds(dir);
    const runs = await runAll(o, dir, catalog, kinds);
    const r = {
      mode: 'command',
      cpus: cpus().length,
      clk_tck: CLK_TCK,
      options: { calls: o.calls, warmup: o.warmup, inflight: o.inflight, workers: o.workers, block: o.block,
        tpBlock: o.tpBlock, trace: o.trace },
      direct_kinds: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, v.desc])),
      ...runs,
      background_load: {
        before_cores: before, after_cores: await backgroundLoad(), loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
      },
    };
    const { text, goals, added_latency_p50_ms, throughput_ratio } = report(r);
    process.stdout.write(o.json
      ? JSON.stringify({ ...r, added_latency_p50_ms, throughput_ratio, goals }, null, 2) + '\n'
      : text);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    if (e instanceof ServerFailed) die(`keel or a direct spawn failed to run: ${e.message}`, 1);
    throw e;
  }
  rmSync(dir, { recursive: true, force: true });
  log(`done in ${fmt((performance.now() - t) / 1000, 1)} s`);
}
