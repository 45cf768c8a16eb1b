// Driver for `scripts/bench --cancel` and `scripts/bench --flood`: two benches of keel's
// request coordinator, measured from outside over stdio. Like the throughput bench they
// print figures and assert nothing: goals are printed as PASS/MISS for information, and
// the exit status is 0 unless keel fails to run (spawn error, early exit, a stall, a
// malformed or unexpected response). Findings that are keel bugs (a response for a
// cancelled id, an id answered twice) are printed, not raised.
//
// --cancel: time from a notifications/cancelled line to the worker slot being free.
//   keel runs with --workers W --test-tools and all W workers busy with `sleep` calls
//   (600000 ms; they only end when cancelled). One iteration:
//     1. t0; one write() with the cancel line for the OLDEST running sleep and an `echo`
//        call; t1 = when the echo response line arrives. The echo can only run once a
//        worker is free, and no worker frees except the cancelled one, so t1 - t0 bounds
//        cancel-to-free plus one echo round trip ("cancel+echo").
//     2. the worker that ran the echo is free now: an `echo` round trip on a free worker
//        is the baseline ("baseline echo"), in the same process, same conditions.
//     3. a replacement sleep goes into that free worker, then a ping round trip (so keel
//        has read and queued it before the next cancel is written).
//   Why the cancelled sleep is surely running: keel's worker queue is FIFO. The sleep
//   started in iteration j was written before iteration j+1's echo, so a worker took it
//   off the queue before it took that echo, i.e. before that echo's response arrived.
//   Cancelling the oldest of W (>= 2) sleeps means it started W iterations back, and
//   the first `--cancel-warmup` iterations (>= W, unrecorded) replace the initial
//   sleeps, whose start nothing proves. (Were a cancelled sleep still queued, it would
//   be cancelled before start and the echo would see a free worker at once: that can
//   only make figures look better, and the FIFO argument rules it out.)
//   Every response is checked: a response carrying a cancelled id is a bug (counted;
//   it must be 0). At the end the last W sleeps are cancelled, W echoes must all come
//   back (every slot free), stdin is closed and keel's output read to its exit, so a
//   late response for a cancelled id would still be counted.
//
// --flood: N `progress` calls (steps 20, each with _meta.progressToken) written while
//   keel's stdout is NOT read, then read. keel runs with --test-tools --max-inflight M
//   --outbox-bytes B (defaults: keel's own, read from keel --help). Phases:
//     paused: the driver writes the calls with backpressure (a write() that returns
//       false waits for 'drain'; keel stops reading stdin when its outbox is full) and
//       never reads stdout (the pipe and Node's small read buffer fill, then keel's
//       outbox grows). VmRSS/VmHWM are sampled from /proc/<pid>/status every 50 ms.
//       The phase ends when no write has completed for --stall-ms (default 2000), which
//       is the case both when keel stopped reading and when every call was written.
//     resumed: stdout is read again, the rest of the calls are written, and responses
//       are counted until every id 1..N has one (a result, a server_busy error result,
//       or anything else, each counted). Then VmHWM is read as keel's peak RSS.
//   Then stdin is closed and output read to keel's exit; every id must have exactly one
//   response. Each N in --calls gets a fresh keel, so peak RSS per N is comparable.
import { execFileSync } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { backgroundLoad } from './machine_load.mjs';
import { lineId } from './line_id.mjs';
import { forEachArg } from './cli.mjs';
import { spawnLines } from '../../tests/support/keel_process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

export const USAGE = `usage: scripts/bench --cancel [--iterations N] [--cancel-warmup N] [--workers W] [--keel PATH] [--json]
       scripts/bench --flood [--calls N,N...] [--steps S] [--interval-ms MS] [--max-inflight M]
                             [--outbox-bytes B] [--workers W] [--stall-ms MS] [--keel PATH] [--json]
  --cancel           cancel latency: cancelled running sleep -> worker slot free (see coordinator_bench.mjs)
    --iterations N   measured cancels (default 1000)
    --cancel-warmup N  unrecorded cancels first (default 50; at least --workers)
    --workers W      keel worker threads, all kept busy with sleeps (default 4, at least 2)
  --flood            progress flood with the reader paused: keel's peak RSS, every response delivered
    --calls L        comma-separated call counts, a fresh keel each (default 10000,100000,200000)
    --steps S        progress steps per call (default 20)
    --interval-ms MS progress tool interval_ms (default 0: steps as fast as the tool goes)
    --max-inflight M keel --max-inflight (default: keel's default)
    --outbox-bytes B keel --outbox-bytes (default: keel's default)
    --workers W      keel --workers (default: keel's default, hardware threads)
    --stall-ms MS    the paused phase ends after MS without a completed write (default 2000)
  --keel PATH        keel binary (default $KEEL_BINARY or build/keel)
  --json             print the results as JSON on stdout instead of the summary
Progress goes to stderr. Exit 0 unless keel fails to run.`;

export const log = (msg) => process.stderr.write(`bench: ${msg}\n`);
export function die(msg, code = 2) {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(code);
}
export class ServerFailed extends Error {}

function parseArgs(argv) {
  const o = {
    mode: null,
    iterations: 1000,
    cancelWarmup: 50,
    workers: null,
    calls: [10000, 100000, 200000],
    steps: 20,
    intervalMs: 0,
    maxInflight: null,
    outboxBytes: null,
    stallMs: 2000,
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    json: false,
  };
  forEachArg(argv, USAGE, die, (a, val, int) => {
    switch (a) {
      case '--cancel': case '--flood':
        if (o.mode && o.mode !== a.slice(2)) die('--cancel and --flood are separate runs; pick one');
        o.mode = a.slice(2);
        break;
      case '--iterations': o.iterations = int(val(), 1); break;
      case '--cancel-warmup': o.cancelWarmup = int(val()); break;
      case '--workers': o.workers = int(val(), 1); break;
      case '--calls': o.calls = val().split(',').map((s) => int(s, 1)); break;
      case '--steps': o.steps = int(val(), 1); break;
      case '--interval-ms': o.intervalMs = int(val()); break;
      case '--max-inflight': o.maxInflight = int(val(), 1); break;
      case '--outbox-bytes': o.outboxBytes = int(val(), 1); break;
      case '--stall-ms': o.stallMs = int(val(), 100); break;
      case '--keel': o.keel = resolve(val()); break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  if (o.mode === 'cancel') {
    o.workers ??= 4;
    if (o.workers < 2) die('--cancel needs --workers >= 2 (see the method in coordinator_bench.mjs)');
    if (o.cancelWarmup < o.workers) die(`--cancel-warmup must be >= --workers (${o.workers})`);
  }
  if (!existsSync(o.keel)) die(`no keel binary at ${o.keel} (run scripts/build)`, 1);
  return o;
}

// keel's defaults as its --help prints them ("--max-inflight UINT:INT in [1 - 1048576]=256").
export function keelDefaults(bin) {
  const help = execFileSync(bin, ['--help'], { env: cleanEnv() }).toString();
  const get = (flag) => {
    const m = new RegExp(`${flag} [^\\n]*?=(\\d+)`).exec(help);
    return m ? Number(m[1]) : null;
  };
  return { maxInflight: get('--max-inflight'), outboxBytes: get('--outbox-bytes'), workers: get('--workers') };
}

// The environment without KEEL_* settings, so the flags printed are the ones keel uses.
export function cleanEnv() {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('KEEL_')) delete env[k];
  return env;
}

export function procStatusKB(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => {
    const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(s);
    return m ? Number(m[1]) : NaN;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const INIT_REQ = JSON.stringify({
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'keel-bench', version: '0' } },
}) + '\n';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';

// A keel process with line splitting on stdout (tests/support/keel_process.mjs). `onLine`
// may be replaced at any time.
export function startKeel(bin, args) {
  const cwd = mkdtempSync(join(tmpdir(), 'keel-bench-'));
  const k = { args, exited: null, failure: null, closing: false, onFail: null };
  const fail = (why) => {
    if (k.failure) return;
    k.failure = why;
    if (k.onFail) k.onFail(why);
  };
  k.fail = fail;
  const p = spawnLines(bin, args, {
    cwd, env: { ...cleanEnv(), KEEL_DB: join(cwd, 'keel.db') }, stderrLimit: 4000,
    onError: (e, where) => fail(where === 'spawn' ? `spawn failed: ${e.message}` : `write to stdin failed: ${e.message}`),
  });
  Object.assign(k, { child: p.child, pid: p.pid, stdoutEnd: p.stdoutEnded });
  Object.defineProperties(k, {
    onLine: { get: () => p.onLine, set: (f) => { p.onLine = f; } },
    stderrTail: { get: () => p.stderr },
  });
  k.exitP = p.exited.then((exit) => {
    k.exited = { code: exit.code, signal: exit.signal };
    if (!k.closing) fail(`exited early (code ${exit.code}, signal ${exit.signal})`);
    return k.exited;
  });
  const child = p.child;
  k.cleanup = () => {
    if (k.exited === null) { k.closing = true; child.kill('SIGKILL'); }
    rmSync(cwd, { recursive: true, force: true });
  };
  // Closes stdin and waits for the exit (and the end of stdout); kills after `ms`.
  k.close = async (ms = 5000) => {
    k.closing = true;
    child.stdin.end();
    let timer;
    const ex = await Promise.race([
      Promise.all([k.exitP, k.stdoutEnd]).then(() => k.exited),
      new Promise((r) => { timer = setTimeout(r, ms, null); }),
    ]);
    clearTimeout(timer);
    if (!ex) { child.kill('SIGKILL'); throw new ServerFailed(`did not exit within ${ms} ms of stdin EOF`); }
    return ex;
  };
  k.describe = (e) => {
    let msg = e.message;
    if (k.exited) msg += ` [process exited: code ${k.exited.code}, signal ${k.exited.signal}]`;
    if (k.stderrTail.trim()) msg += `\n--- keel stderr (tail) ---\n${k.stderrTail}`;
    return msg;
  };
  return k;
}

// Resolves when `pred()` holds; `kick` is called by the line handler after each line.
// Fails on a keel failure or when `stallMs` pass without `progress()` changing.
export function waitUntil(k, pred, progress, what, stallMs = 15000) {
  return new Promise((res, rej) => {
    let last = progress();
    const timer = setInterval(() => {
      const p = progress();
      if (p === last) done(new ServerFailed(`stalled for ${stallMs / 1000} s during ${what}`));
      last = p;
    }, stallMs);
    const done = (err) => {
      clearInterval(timer);
      k.kick = null;
      k.onFail = null;
      if (err) rej(err); else res();
    };
    if (k.failure) return done(new ServerFailed(k.failure));
    k.onFail = (why) => done(new ServerFailed(why));
    k.kick = () => { if (pred()) done(); };
    if (pred()) done();
  });
}

export async function initialize(k) {
  let init = null;
  k.onLine = (line) => {
    const m = JSON.parse(line);
    if (m.id === 0) { init = m; if (k.kick) k.kick(); }
  };
  k.child.stdin.write(INIT_REQ);
  await waitUntil(k, () => init !== null, () => (init ? 1 : 0), 'initialize');
  if (!init.result) throw new ServerFailed(`initialize failed: ${JSON.stringify(init)}`);
  k.child.stdin.write(INITIALIZED);
}

const ns2ms = (ns) => Number(ns) / 1e6;
export function pct(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
export function summary(values) {
  const s = Float64Array.from(values).sort();
  return { p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s[s.length - 1], min: s[0], n: s.length };
}
export function fmt(n, d = 0) {
  return Number.isFinite(n) ? n.toFixed(d) : 'n/a';
}

export function backgroundLines(bg) {
  const lines = [`Background CPU use without the bench: ${fmt(bg.before_cores, 2)} cores before, ${fmt(bg.after_cores, 2)} after` +
    ` (loadavg ${bg.loadavg.split(' ').slice(0, 3).join(' ')}).`];
  if (!(Math.max(bg.before_cores, bg.after_cores) < 0.2)) {
    lines.push('WARNING: other work was running on this machine; these figures (tails above all) are disturbed by it.');
  }
  return lines;
}

export function goalLines(goals) {
  const lines = ['goals (information only; the bench asserts nothing):'];
  const gw = Math.max(...goals.map((g) => g.goal.length));
  for (const g of goals) lines.push(`  ${g.pass ? 'PASS' : 'MISS'}  ${g.goal.padEnd(gw)}  ${g.value}`);
  return lines;
}

// ---------------------------------------------------------------------------------------
// --cancel

const call = (id, name, args) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }) + '\n';
const cancelLine = (id) =>
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'bench' } }) + '\n';

async function runCancel(o) {
  const W = o.workers;
  const SLEEP_MS = 600000;
  const args = ['--test-tools', '--workers', String(W), '--idle-timeout', '600000', '--max-timeout', '600000'];
  const k = startKeel(o.keel, args);
  try {
    await initialize(k);

    const waiters = new Map(); // id -> { resolve, t, msg }
    const cancelled = new Set();
    const cancelledResponses = [];
    const unexpected = [];
    let lines = 0, notifications = 0;
    k.onLine = (line) => {
      const t = process.hrtime.bigint();
      lines++;
      let m;
      try { m = JSON.parse(line); } catch { unexpected.push(`not JSON: ${line.slice(0, 200)}`); return; }
      if (!('id' in m)) { notifications++; return; }
      if (cancelled.has(m.id)) { cancelledResponses.push(line.slice(0, 300)); return; }
      const w = waiters.get(m.id);
      if (!w) { unexpected.push(line.slice(0, 300)); return; }
      waiters.delete(m.id);
      w.t = t;
      w.msg = m;
      if (k.kick) k.kick();
    };
    const expect = (id) => {
      const w = { t: null, msg: null };
      waiters.set(id, w);
      return w;
    };
    const await1 = async (w, what) => {
      await waitUntil(k, () => w.t !== null, () => (w.t !== null ? 1 : 0), what, 10000);
      return w;
    };
    const checkEcho = (w, text) => {
      const r = w.msg.result;
      if (!r || r.isError || r.content?.[0]?.text !== text) {
        throw new ServerFailed(`bad echo response: ${JSON.stringify(w.msg).slice(0, 300)}`);
      }
    };
    const write = (s) => k.child.stdin.write(s);

    // W sleeps fill every worker.
    const ring = [];
    let s = '';
    for (let j = 0; j < W; j++) { ring.push(`s-init-${j}`); s += call(`s-init-${j}`, 'sleep', { ms: SLEEP_MS }); }
    const p0 = expect('ping-init');
    write(s + '{"jsonrpc":"2.0","id":"ping-init","method":"ping"}\n');
    await await1(p0, 'initial ping');

    const total = o.cancelWarmup + o.iterations;
    const cancelNs = [], baseNs = [];
    log(`cancel: ${o.cancelWarmup} warm-up + ${o.iterations} measured cancels, ${W} workers ...`);
    const tStart = process.hrtime.bigint();
    for (let i = 0; i < total; i++) {
      const victim = ring.shift();
      cancelled.add(victim);
      const eid = `e${i}`;
      const we = expect(eid);
      const out = cancelLine(victim) + call(eid, 'echo', { text: eid });
      const t0 = process.hrtime.bigint();
      write(out);
      await await1(we, `cancel ${i} (echo after cancelling ${victim}: no worker slot came free?)`);
      checkEcho(we, eid);

      const bid = `b${i}`;
      const wb = expect(bid);
      const outB = call(bid, 'echo', { text: bid });
      const t2 = process.hrtime.bigint();
      write(outB);
      await await1(wb, `baseline echo ${i}`);
      checkEcho(wb, bid);

      const sid = `s${i}`;
      ring.push(sid);
      const pid = `ping${i}`;
      const wp = expect(pid);
      write(call(sid, 'sleep', { ms: SLEEP_MS }) + `{"jsonrpc":"2.0","id":"${pid}","method":"ping"}\n`);
      await await1(wp, `ping ${i}`);

      if (i >= o.cancelWarmup) {
        cancelNs.push(we.t - t0);
        baseNs.push(wb.t - t2);
      }
    }
    const loopMs = ns2ms(process.hrtime.bigint() - tStart);

    // The end: cancel the last W sleeps; W echoes must all run (every slot came free).
    let end = '';
    const endWaits = [];
    for (const id of ring) { cancelled.add(id); end += cancelLine(id); }
    for (let j = 0; j < W; j++) {
      const id = `end${j}`;
      endWaits.push([id, expect(id)]);
      end += call(id, 'echo', { text: id });
    }
    write(end);
    for (const [id, w] of endWaits) { await await1(w, `final echo ${id}`); checkEcho(w, id); }
    // A grace period for late responses, then EOF; output is read to keel's exit.
    await new Promise((r) => setTimeout(r, 300));
    const ex = await k.close();
    if (unexpected.length) throw new ServerFailed(`${unexpected.length} unexpected line(s); first: ${unexpected[0]}`);

    const cancelMs = cancelNs.map(ns2ms), baseMs = baseNs.map(ns2ms);
    const diffMs = cancelMs.map((c, j) => c - baseMs[j]);
    return {
      mode: 'cancel',
      workers: W,
      iterations: o.iterations,
      warmup: o.cancelWarmup,
      cpus: cpus().length,
      keel_args: args,
      cancel_plus_echo_ms: summary(cancelMs),
      baseline_echo_ms: summary(baseMs),
      pairwise_difference_ms: summary(diffMs),
      cancel_plus_echo_over_5ms: cancelMs.filter((x) => x >= 5).length,
      baseline_echo_over_5ms: baseMs.filter((x) => x >= 5).length,
      cancelled_ids: cancelled.size,
      responses_for_cancelled_ids: cancelledResponses.length,
      first_response_for_cancelled_id: cancelledResponses[0] ?? null,
      notifications_seen: notifications,
      lines_seen: lines,
      loop_s: loopMs / 1000,
      exit_code: ex.code,
      exit_signal: ex.signal,
    };
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

function reportCancel(r) {
  const c = r.cancel_plus_echo_ms, b = r.baseline_echo_ms, d = r.pairwise_difference_ms;
  const lines = [];
  lines.push(`keel cancel latency: ${r.iterations} running \`sleep\` calls cancelled (after ${r.warmup} unrecorded), ` +
    `--workers ${r.workers}, all workers busy, ${r.cpus} CPU core(s) shared with the driver.`);
  lines.push(...backgroundLines(r.background_load));
  lines.push('cancel+echo: one write() of the cancel line and an echo call -> the echo response; the echo');
  lines.push('  can only run on the slot the cancel frees. baseline echo: an echo round trip on a free worker.');
  lines.push('');
  const head = ['ms', 'p50', 'p90', 'p99', 'max'];
  const rows = [
    ['cancel+echo (t1 - t0)', c], ['baseline echo', b], ['difference, pairwise', d],
  ].map(([n, x]) => [n, fmt(x.p50, 3), fmt(x.p90, 3), fmt(x.p99, 3), fmt(x.max, 3)]);
  rows.push(['cancel+echo - baseline, per percentile', fmt(c.p50 - b.p50, 3), fmt(c.p90 - b.p90, 3), fmt(c.p99 - b.p99, 3), '']);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i].length)));
  const line = (cells) => cells.map((x, i) => (i === 0 ? x.padEnd(w[i]) : x.padStart(w[i]))).join('  ');
  lines.push(line(head));
  lines.push(w.map((n) => '-'.repeat(n)).join('  '));
  for (const x of rows) lines.push(line(x));
  lines.push('');
  lines.push(`samples >= 5 ms: cancel+echo ${r.cancel_plus_echo_over_5ms}, baseline echo ${r.baseline_echo_over_5ms} (of ${r.iterations} each)`);
  lines.push(`responses for cancelled ids: ${r.responses_for_cancelled_ids} of ${r.cancelled_ids} cancelled (must be 0)` +
    (r.first_response_for_cancelled_id ? `; first: ${r.first_response_for_cancelled_id}` : ''));
  lines.push(`keel exit after stdin EOF: code ${r.exit_code}; measured loop ${fmt(r.loop_s, 2)} s`);
  lines.push('');
  const goals = [
    { goal: 'cancel->free p99 < 5 ms (upper bound: cancel+echo p99)', value: `${fmt(c.p99, 3)} ms`, pass: c.p99 < 5 },
    { goal: 'no response for a cancelled id', value: String(r.responses_for_cancelled_ids), pass: r.responses_for_cancelled_ids === 0 },
  ];
  lines.push(...goalLines(goals));
  return { text: lines.join('\n') + '\n', goals };
}

// ---------------------------------------------------------------------------------------
// --flood

async function runFlood(o, N, defaults) {
  const maxInflight = o.maxInflight ?? defaults.maxInflight;
  const outboxBytes = o.outboxBytes ?? defaults.outboxBytes;
  const args = ['--test-tools', '--idle-timeout', '600000', '--max-timeout', '600000'];
  if (maxInflight != null) args.push('--max-inflight', String(maxInflight));
  if (outboxBytes != null) args.push('--outbox-bytes', String(outboxBytes));
  if (o.workers != null) args.push('--workers', String(o.workers));
  const k = startKeel(o.keel, args);
  const pid = k.pid;
  const stdin = k.child.stdin;
  try {
    await initialize(k);

    const argsJson = o.intervalMs > 0 ? `{"steps":${o.steps},"interval_ms":${o.intervalMs}}` : `{"steps":${o.steps}}`;
    const req = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"progress","arguments":${argsJson},"_meta":{"progressToken":${id}}}}\n`;
    const CHUNK = 128; // calls per write()

    // Counting, set up now but only fed once stdout is read again.
    const seen = new Uint8Array(N + 1);
    let answered = 0, duplicates = 0, ok = 0, busy = 0, otherError = 0, progress = 0, otherNotes = 0, strays = 0;
    let firstOther = null, firstStray = null;
    k.onLine = (line) => {
      if (line.indexOf('"method":"notifications/progress"') >= 0) { progress++; return; }
      const id = lineId(line);
      if (id < 0) {
        if (line.indexOf('"method":') >= 0) otherNotes++;
        else { strays++; firstStray ??= line.slice(0, 300); }
        return;
      }
      if (id < 1 || id > N) { strays++; firstStray ??= line.slice(0, 300); return; }
      if (seen[id]++) { duplicates++; return; }
      answered++;
      if (line.indexOf('"server_busy"') >= 0) busy++;
      else if (line.indexOf('"error":') >= 0 || line.indexOf('"isError":true') >= 0) { otherError++; firstOther ??= line.slice(0, 300); }
      else ok++;
      if (answered === N && k.kick) k.kick();
    };

    // Paused phase: stdout is not read; the writer respects backpressure.
    k.child.stdout.pause();
    let written = 0;           // calls handed to write()
    let flushed = 0;           // calls whose write() completed (in the pipe)
    let lastWriteDone = performance.now();
    let waitingDrain = false;
    const pump = () => {
      waitingDrain = false;
      while (written < N && !k.failure) {
        const n = Math.min(CHUNK, N - written);
        let s = '';
        for (let j = 1; j <= n; j++) s += req(written + j);
        written += n;
        const ok2 = stdin.write(s, (err) => { if (!err) { flushed += n; lastWriteDone = performance.now(); } });
        if (!ok2) { waitingDrain = true; stdin.once('drain', pump); return; }
      }
    };
    const samples = [];
    const sample = () => {
      try { const st = procStatusKB(pid); samples.push({ t: performance.now(), ...st }); return st; } catch { return null; }
    };
    log(`flood: N=${N}, paused phase ...`);
    const t0 = performance.now();
    pump();
    await new Promise((res) => {
      const timer = setInterval(() => {
        sample();
        if (k.failure || performance.now() - lastWriteDone >= o.stallMs) { clearInterval(timer); res(); }
      }, 50);
    });
    if (k.failure) throw new ServerFailed(k.failure);
    const tPausedEnd = performance.now();
    const endOfPause = sample();
    const paused = {
      ms: tPausedEnd - t0,
      calls_in_pipe: flushed,
      all_written: flushed === N,
      writer_blocked: waitingDrain,
      max_vmrss_mb: Math.max(...samples.map((x) => x.rss)) / 1024,
      vmrss_at_end_mb: endOfPause ? endOfPause.rss / 1024 : NaN,
      vmhwm_at_end_mb: endOfPause ? endOfPause.hwm / 1024 : NaN,
      samples: samples.length,
      // What Node read off keel's stdout before the pause took hold (unprocessed).
      driver_buffered_bytes: k.child.stdout.readableLength,
    };
    log(`  paused ${fmt(paused.ms)} ms: ${flushed}/${N} calls in the pipe, writer ${waitingDrain ? 'blocked' : 'not blocked'}, ` +
      `VmRSS max ${fmt(paused.max_vmrss_mb, 1)} MB; resuming`);

    // Resumed: read everything, keep writing, until every id is answered.
    const sampler = setInterval(sample, 50);
    k.child.stdout.resume();
    try {
      await waitUntil(k, () => answered === N, () => answered + progress, 'the resumed phase');
    } finally {
      clearInterval(sampler);
    }
    const tDone = performance.now();
    const final = sample();
    const peakMB = final.hwm / 1024;
    // Late duplicates: a short wait, then EOF and read to the exit.
    await new Promise((r) => setTimeout(r, 200));
    const ex = await k.close();
    if (strays) throw new ServerFailed(`${strays} unexpected line(s); first: ${firstStray}`);
    let exactlyOnce = true;
    for (let id = 1; id <= N; id++) if (seen[id] !== 1) { exactlyOnce = false; break; }
    return {
      N,
      steps: o.steps,
      interval_ms: o.intervalMs,
      max_inflight: maxInflight,
      outbox_bytes: outboxBytes,
      workers: o.workers ?? `keel default (${defaults.workers === 0 ? 'hardware threads, at least 2' : defaults.workers})`,
      keel_args: args,
      peak_rss_mb: peakMB,
      paused,
      resumed_ms: tDone - tPausedEnd,
      total_ms: tDone - t0,
      responses: answered + duplicates,
      ids_answered: answered,
      results_ok: ok,
      server_busy: busy,
      other_errors: otherError,
      first_other_error: firstOther,
      duplicates,
      every_id_exactly_once: exactlyOnce,
      progress_notifications: progress,
      other_notifications: otherNotes,
      exit_code: ex.code,
      exit_signal: ex.signal,
    };
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

function reportFlood(runs, bg) {
  const r0 = runs[0];
  const lines = [];
  lines.push(`keel progress flood: \`progress\` calls (steps ${r0.steps}, interval_ms ${r0.interval_ms}, each with a progressToken)`);
  lines.push(`written while keel's stdout is not read, then read; a fresh keel per N. Settings: --max-inflight ${r0.max_inflight},`);
  lines.push(`--outbox-bytes ${r0.outbox_bytes}, workers ${r0.workers}; ${cpus().length} CPU core(s).`);
  lines.push(...backgroundLines(bg));
  lines.push('');
  const head = ['N', 'peak RSS MB', 'paused ms', 'in pipe when paused', 'RSS max paused MB', 'total s',
    'ok', 'server_busy', 'other err', 'progress notes', 'dups', 'exactly once'];
  const rows = runs.map((r) => [String(r.N), fmt(r.peak_rss_mb, 1), fmt(r.paused.ms), `${r.paused.calls_in_pipe}${r.paused.writer_blocked ? ' (blocked)' : ''}`,
    fmt(r.paused.max_vmrss_mb, 1), fmt(r.total_ms / 1000, 2), String(r.results_ok), String(r.server_busy),
    String(r.other_errors), String(r.progress_notifications), String(r.duplicates), r.every_id_exactly_once ? 'yes' : 'NO']);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i].length)));
  const line = (cells) => cells.map((x, i) => x.padStart(w[i])).join('  ');
  lines.push(line(head));
  lines.push(w.map((n) => '-'.repeat(n)).join('  '));
  for (const x of rows) lines.push(line(x));
  lines.push('');
  lines.push('peak RSS: keel\'s VmHWM once every id is answered. paused ms: the paused phase, which ends after');
  lines.push('--stall-ms without a completed write. in pipe when paused: calls written by then ("blocked": keel had');
  lines.push('stopped reading stdin). total s: first write to the last response.');
  for (const r of runs) if (r.first_other_error) lines.push(`N=${r.N}: first other error: ${r.first_other_error}`);
  const worst = Math.max(...runs.map((r) => r.peak_rss_mb));
  const goals = [
    { goal: 'keel peak RSS < 64 MB (worst N)', value: `${fmt(worst, 1)} MB`, pass: worst < 64 },
    { goal: 'every id answered exactly once (all N)', value: runs.every((r) => r.every_id_exactly_once) ? 'yes' : 'NO',
      pass: runs.every((r) => r.every_id_exactly_once) },
  ];
  // Growth with N is only meaningful among runs that reached keel's bound: a run whose
  // paused writer never blocked got every call in, so all its output sat in keel at once.
  const byN = runs.map((r) => `N=${r.N}: ${fmt(r.peak_rss_mb, 1)} MB${r.paused.writer_blocked ? '' : ' (writer never blocked)'}`);
  lines.push(`peak RSS by N: ${byN.join(', ')}`);
  const blocked = runs.filter((r) => r.paused.writer_blocked);
  if (blocked.length < runs.length) {
    lines.push('"writer never blocked": keel read every call while stdout was paused (its output stayed under');
    lines.push('the outbox bound), so that run shows the memory for all of its output, not the bound.');
  }
  lines.push('');
  if (blocked.length > 1) {
    const lo = blocked.reduce((a, b) => (b.N < a.N ? b : a)), hi = blocked.reduce((a, b) => (b.N > a.N ? b : a));
    const ratio = hi.peak_rss_mb / lo.peak_rss_mb;
    goals.push({ goal: `peak RSS flat in N once keel stops reading (N=${hi.N} / N=${lo.N}, < 1.25)`, value: fmt(ratio, 2), pass: ratio < 1.25 });
  }
  lines.push(...goalLines(goals));
  return { text: lines.join('\n') + '\n', goals };
}

// ---------------------------------------------------------------------------------------

export async function main(argv) {
  const o = parseArgs(argv);
  const t = performance.now();
  const before = await backgroundLoad();
  const background = async () => ({
    before_cores: before, after_cores: await backgroundLoad(), loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
  });
  try {
    if (o.mode === 'cancel') {
      const r = await runCancel(o);
      r.background_load = await background();
      const { text, goals } = reportCancel(r);
      process.stdout.write(o.json ? JSON.stringify({ ...r, goals }, null, 2) + '\n' : text);
    } else {
      const defaults = keelDefaults(o.keel);
      const runs = [];
      for (const N of o.calls) runs.push(await runFlood(o, N, defaults));
      const bg = await background();
      const { text, goals } = reportFlood(runs, bg);
      process.stdout.write(o.json ? JSON.stringify({ mode: 'flood', cpus: cpus().length, background_load: bg, runs, goals }, null, 2) + '\n' : text);
    }
  } catch (e) {
    if (e instanceof ServerFailed) die(`keel failed to run: ${e.message}`, 1);
    throw e;
  }
  log(`done in ${fmt((performance.now() - t) / 1000, 1)} s`);
}
