// Driver for `scripts/bench --wrap`: what `keel wrap` costs in front of an existing MCP server,
// measured from outside over stdio against the same server called directly, in one run. Like
// the other benches it prints figures and asserts nothing: goals are printed as PASS/MISS for
// information, and the exit status is 0 unless a server fails to run (spawn error, early exit,
// a stall, an error or malformed response). Findings that are keel bugs (a response for a
// cancelled id) are counted and printed, not raised.
//
// Part 1, overhead. For each upstream U in --upstreams (default sdk,keel):
//     sdk:  the official TypeScript SDK v1 server (McpServer + StdioServerTransport, one `echo`
//           tool with readOnlyHint: true: sdk_echo_server.mjs) — the kind of server users wrap;
//     keel: keel itself serving its built-in `echo` (`keel --db <tmp>`), a fast C++ upstream,
//           so that keel wrap's own cost is the larger part of the difference.
//   Two processes per U, both started at the beginning and kept for the whole run:
//     direct:  U itself;
//     wrapped: `keel wrap --db <tmp> [--wrap-flags] -- U` (keel's defaults otherwise).
//   Each gets --warmup calls at the largest in-flight count after initialize. Then --reps
//   repetitions; in each, for each in-flight count K and each U, a phase of --calls `echo`
//   calls with exactly K in flight goes to direct and to wrapped back to back (the first of
//   the two alternates between repetitions). Per phase: calls/s (calls / wall time), p50/p99
//   of send->response (one write() carries the requests one chunk of responses released),
//   and the CPU (utime+stime from /proc/<pid>/stat) of the server, of keel and of the
//   upstream under keel, per call. Figures are medians over the repetitions; "added p50" is
//   the median over repetitions of (wrapped p50 - direct p50) of the same repetition, and
//   the throughput ratio the median of (wrapped calls/s / direct calls/s). keel's peak RSS is
//   the keel process's VmHWM at the end (the upstream child not included; its own is printed
//   apart). Every response is checked (no error, no isError; the first fully parsed).
//
// Part 2, a cancel through keel to an upstream that ignores it (unless --no-cancel).
//   keel wrap --workers W --idle-timeout 600000 --max-timeout 600000 -- node
//   wrap_slow_upstream.mjs: its `slow` never answers and it ignores notifications/cancelled;
//   it sends one progress notification for a `slow` call that has a progressToken. Forwarded
//   calls keep a keel worker slot while the upstream works (suspended: the thread is free, the
//   slot is not), so W `slow` calls hold every slot.
//   Set-up: W `slow` calls, each with a progressToken; once keel has forwarded the progress of
//   all W, every slot is held by a call the upstream has. One iteration:
//     1. t0; one write() with the cancel line for the OLDEST slow call and an `echo` call;
//        t1 = when the echo's response arrives. The echo can only run once a slot is free, and
//        the upstream never frees one, so t1 - t0 bounds keel's cancel->slot free plus one
//        echo round trip through keel and the upstream ("cancel+echo").
//     2. an `echo` round trip on the slot just freed: the baseline, same process, same state.
//     3. a replacement `slow` (with a progressToken); its progress arriving proves it holds
//        the slot again before the next iteration.
//   The figure is cancel+echo - baseline, pairwise per iteration (p50/p99/max), and
//   cancel+echo itself (the upper bound). Every line keel writes is checked: a response for a
//   cancelled id is counted (must be 0). At the end the last W slow calls are cancelled, W
//   echoes must all come back, a grace period passes, stdin is closed and output read to
//   keel's exit; the upstream writes its counts at exit (cancels it received for `slow` calls
//   must equal the cancels sent).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { backgroundLoad } from './machine_load.mjs';
import { lineId } from './line_id.mjs';
import { forEachArg, table } from './cli.mjs';
import { spawnLines } from '../../tests/support/keel_process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

export const USAGE = `usage: scripts/bench --wrap [--calls N] [--warmup N] [--reps R] [--inflight 1,16]
                           [--upstreams sdk,keel] [--wrap-flags "FLAGS"] [--no-cancel]
                           [--iterations N] [--cancel-warmup N] [--workers W] [--slow-breaker-off]
                           [--keel PATH] [--json]
  --calls N        echo calls per phase (default 3000)
  --warmup N       warm-up calls per process after initialize (default 1000)
  --reps R         repetitions, each one phase per (upstream, in-flight count, direct|wrapped) (default 5)
  --inflight L     comma-separated in-flight counts (default 1,16)
  --upstreams L    sdk (the official TypeScript SDK v1 server), keel (keel serving its echo) (default sdk,keel)
  --wrap-flags S   extra keel flags for part 1's wrapping keel, split on spaces (default none: keel's
                   defaults; e.g. "--workers 16")
  --no-cancel      skip part 2
  --iterations N   measured cancels of part 2 (default 1000)
  --cancel-warmup N  unrecorded cancels first (default 20; at least --workers)
  --workers W      part 2's keel --workers: the slots the slow calls hold (default 2, at least 1)
  --slow-breaker-off  part 2's keel gets a --policy putting \`slow\`'s circuit breaker in metrics_only
                   mode (cancelled forwarded calls must not trip it; see docs/benchmarks.md)
  --keel PATH      keel binary (default $KEEL_BINARY or build/keel)
  --json           print the results as JSON on stdout instead of the summary
Method: scripts/bench_support/wrap_bench.mjs. Progress goes to stderr. Exit 0 unless a server fails to run.`;

const log = (msg) => process.stderr.write(`bench: ${msg}\n`);
function die(msg, code = 2) {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(code);
}
class ServerFailed extends Error {}

function parseArgs(argv) {
  const o = {
    calls: 3000,
    warmup: 1000,
    reps: 5,
    inflight: [1, 16],
    upstreams: ['sdk', 'keel'],
    wrapFlags: [],
    cancel: true,
    iterations: 1000,
    cancelWarmup: 20,
    workers: 2,
    slowBreakerOff: false,
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    json: false,
  };
  forEachArg(argv, USAGE, die, (a, val, int) => {
    switch (a) {
      case '--wrap': break;
      case '--calls': o.calls = int(val(), 1); break;
      case '--warmup': o.warmup = int(val()); break;
      case '--reps': o.reps = int(val(), 1); break;
      case '--inflight': o.inflight = val().split(',').map((s) => int(s, 1)); break;
      case '--upstreams': o.upstreams = val().split(','); break;
      case '--wrap-flags': o.wrapFlags = val().split(' ').filter(Boolean); break;
      case '--no-cancel': o.cancel = false; break;
      case '--iterations': o.iterations = int(val(), 1); break;
      case '--cancel-warmup': o.cancelWarmup = int(val()); break;
      case '--workers': o.workers = int(val(), 1); break;
      case '--slow-breaker-off': o.slowBreakerOff = true; break;
      case '--keel': o.keel = resolve(val()); break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  for (const u of o.upstreams) if (!['sdk', 'keel'].includes(u)) die(`unknown upstream: ${u} (sdk, keel)`);
  if (o.cancelWarmup < o.workers) die(`--cancel-warmup must be >= --workers (${o.workers})`);
  if (!existsSync(o.keel)) die(`no keel binary at ${o.keel} (run scripts/build)`, 1);
  return o;
}

// The environment without KEEL_* settings, so that the flags printed are the ones keel uses.
function cleanEnv(extra = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('KEEL_')) delete env[k];
  return { ...env, ...extra };
}

const CLK_TCK = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; }
})();

// utime+stime of a live process, in seconds (fields 14 and 15 of /proc/<pid>/stat).
function cpuSeconds(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

function hwmMB(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

// Context switches (voluntary + involuntary) of every thread of a live process so far.
function contextSwitches(pid) {
  let n = 0;
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const st = readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
      const v = /voluntary_ctxt_switches:\s+(\d+)/.exec(st), nv = /nonvoluntary_ctxt_switches:\s+(\d+)/.exec(st);
      n += (v ? Number(v[1]) : 0) + (nv ? Number(nv[1]) : 0);
    }
  } catch { return NaN; }
  return n;
}

// The children of `pid` (any of its threads may have spawned them).
function childPids(pid) {
  const out = [];
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const s = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
      if (s) out.push(...s.split(/\s+/).map(Number));
    }
  } catch { /* gone */ }
  return out;
}

const INIT_REQ = JSON.stringify({
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'keel-bench', version: '0' } },
}) + '\n';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
const ECHO_TEXT = 'hello';
const REQ_HEAD = '{"jsonrpc":"2.0","id":';
const REQ_TAIL = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${ECHO_TEXT}"}}}\n`;
const STALL_MS = 15000;

// A server process speaking newline-delimited JSON-RPC over stdio, kept for the whole run.
class Server {
  constructor(name, cmd, args, cwd, env = {}) {
    this.name = name;
    this.failure = null;
    this.wake = null;
    this.closing = false;
    this.p = spawnLines(cmd, args, {
      cwd, env: cleanEnv(env), stderrLimit: 8000,
      onError: (e, where) => this.fail(where === 'spawn' ? `spawn failed: ${e.message}` : `write to stdin failed: ${e.message}`),
    });
    this.pid = this.p.pid;
    this.p.exited.then((e) => { if (!this.closing) this.fail(`exited early (code ${e.code}, signal ${e.signal})`); });
    this.nextId = 1;
    this.progress = () => 0;
  }

  fail(why) {
    this.failure ??= why;
    if (this.wake) this.wake();
  }

  waitFor(pred, what) {
    return new Promise((res, rej) => {
      if (this.failure) return rej(this.error(this.failure));
      let last = -1;
      const timer = setInterval(() => {
        const n = this.progress();
        if (n === last) this.fail(`stalled for ${STALL_MS / 1000} s during ${what}`);
        last = n;
      }, STALL_MS);
      // Woken by any line (a progress notification too): it resolves only once `pred` holds.
      this.wake = () => {
        if (!this.failure && !pred()) return;
        clearInterval(timer);
        this.wake = null;
        if (this.failure) rej(this.error(this.failure)); else res();
      };
      if (pred()) this.wake();
    });
  }

  error(why) {
    let msg = `${this.name}: ${why}`;
    if (this.p.exit) msg += ` [process exited: code ${this.p.exit.code}, signal ${this.p.exit.signal}]`;
    if (this.p.stderr.trim()) msg += `\n--- ${this.name} stderr (tail) ---\n${this.p.stderr}`;
    return new ServerFailed(msg);
  }

  async initialize() {
    const t0 = this.p.startedAt;
    let initLine = null;
    this.p.onLine = (line) => { if (lineId(line) === 0) { initLine = line; if (this.wake) this.wake(); } };
    this.progress = () => (initLine ? 1 : 0);
    this.p.write(INIT_REQ);
    await this.waitFor(() => initLine !== null, 'initialize');
    this.initMs = performance.now() - t0;
    const init = JSON.parse(initLine);
    if (!init.result) throw this.error(`initialize failed: ${initLine}`);
    this.serverInfo = init.result.serverInfo;
    this.protocolVersion = init.result.protocolVersion;
    this.p.write(INITIALIZED);
  }

  // `count` echo calls, exactly K in flight; returns { wallMs, lat (ms, sorted) | null }.
  async phase(count, K, measure, what) {
    const base = this.nextId;
    this.nextId += count;
    const sendAt = new Float64Array(count);
    const lat = measure ? new Float64Array(count) : null;
    let sent = 0, done = 0, bad = 0, firstBad = null, checked = false;
    let out = '';
    const queue = (n) => {
      const now = performance.now();
      for (let j = 0; j < n && sent < count; j++) {
        sendAt[sent] = now;
        out += REQ_HEAD + (base + sent) + REQ_TAIL;
        sent++;
      }
    };
    const p = this.p;
    p.afterChunk = () => { if (out) { p.write(out); out = ''; } };
    p.onLine = (line) => {
      const id = lineId(line);
      if (id < 0) return; // a notification: not ours
      const idx = id - base;
      if (idx < 0 || idx >= sent || sendAt[idx] < 0) { bad++; firstBad ??= `unexpected id: ${line}`; return; }
      const now = performance.now();
      if (lat) lat[idx] = now - sendAt[idx];
      sendAt[idx] = -1;
      if (line.indexOf('"error":') >= 0 || line.indexOf('"isError":true') >= 0) {
        bad++; firstBad ??= line;
      } else if (!checked) {
        checked = true;
        const r = JSON.parse(line).result;
        if (r?.content?.[0]?.text !== ECHO_TEXT) { bad++; firstBad ??= line; }
      }
      done++;
      if (sent < count) queue(1);
      else if (done === count && this.wake) this.wake();
    };
    this.progress = () => done;
    const t = performance.now();
    queue(K);
    p.afterChunk();
    await this.waitFor(() => done === count, what);
    const wallMs = performance.now() - t;
    p.afterChunk = null;
    p.onLine = () => {};
    if (bad) throw this.error(`${bad} bad responses during ${what}; first: ${firstBad.slice(0, 400)}`);
    if (lat) lat.sort();
    return { wallMs, lat };
  }

  async close(ms = 5000) {
    this.closing = true;
    const t = performance.now();
    this.p.end();
    const ex = await this.p.waitExit(ms);
    if (!ex) { this.p.kill(); throw this.error(`did not exit within ${ms} ms of stdin EOF`); }
    return { ...ex, ms: performance.now() - t };
  }

  // SIGKILL to the process (a failed run); a wrapping keel's upstream, in its own process
  // group, would only see EOF, so it gets one too.
  kill() {
    if (this.p.exit === null) { this.closing = true; this.p.kill(); }
    if (this.upstreamPid) { try { process.kill(this.upstreamPid, 'SIGKILL'); } catch { /* gone */ } this.upstreamPid = null; }
  }
}

function pct(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
function median(xs) {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
function summary(values) {
  const s = Float64Array.from(values).sort();
  return { p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s[s.length - 1], min: s[0], n: s.length };
}
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

// ---------------------------------------------------------------------------------------
// Part 1

function upstreamCommand(u, o, dir) {
  if (u === 'sdk') return { cmd: process.execPath, args: [join(here, 'sdk_echo_server.mjs')], label: 'TypeScript SDK v1 server' };
  return { cmd: o.keel, args: ['--db', join(dir, 'upstream-keel.db')], label: 'keel (its built-in echo)' };
}

async function runOverhead(o) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-wrap-'));
  const servers = [];
  const pairs = {};
  try {
    for (const u of o.upstreams) {
      const up = upstreamCommand(u, o, dir);
      const directArgs = u === 'keel' ? ['--db', join(dir, 'direct-keel.db')] : up.args;
      const wrapArgs = ['wrap', '--db', join(dir, `wrap-${u}.db`), '--log-level', 'info', ...o.wrapFlags, '--', up.cmd, ...up.args];
      const direct = new Server(`${u} direct`, up.cmd, directArgs, dir);
      servers.push(direct);
      await direct.initialize();
      const wrapped = new Server(`keel wrap -- ${u}`, o.keel, wrapArgs, dir);
      servers.push(wrapped);
      await wrapped.initialize();
      const kids = childPids(wrapped.pid);
      if (kids.length !== 1) throw wrapped.error(`expected one upstream child of keel, found ${kids.length}`);
      wrapped.upstreamPid = kids[0];
      pairs[u] = { label: up.label, direct, wrapped, directArgs, wrapArgs, phases: [] };
      log(`${u}: initialize ${fmt(direct.initMs, 1)} ms direct, ${fmt(wrapped.initMs, 1)} ms through keel wrap ` +
        `(upstream pid ${wrapped.upstreamPid})`);
    }
    const Kmax = Math.max(...o.inflight);
    for (const u of o.upstreams) {
      for (const s of [pairs[u].direct, pairs[u].wrapped]) if (o.warmup > 0) await s.phase(o.warmup, Kmax, false, 'warm-up');
    }
    const measure = async (s, K, what) => {
      const c0 = cpuSeconds(s.pid), x0 = contextSwitches(s.pid);
      const u0 = s.upstreamPid ? cpuSeconds(s.upstreamPid) : NaN;
      const d0 = process.cpuUsage();
      const { wallMs, lat } = await s.phase(o.calls, K, true, what);
      const d = process.cpuUsage(d0);
      const c1 = cpuSeconds(s.pid), x1 = contextSwitches(s.pid);
      const u1 = s.upstreamPid ? cpuSeconds(s.upstreamPid) : NaN;
      return {
        calls_per_s: o.calls / (wallMs / 1000),
        p50_us: pct(lat, 50) * 1000, p90_us: pct(lat, 90) * 1000, p99_us: pct(lat, 99) * 1000, max_us: lat[lat.length - 1] * 1000,
        cpu_us_per_call: ((c1 - c0) * 1e6) / o.calls,
        context_switches_per_call: (x1 - x0) / o.calls,
        upstream_cpu_us_per_call: ((u1 - u0) * 1e6) / o.calls,
        driver_cpu_us_per_call: (d.user + d.system) / o.calls,
      };
    };
    for (let r = 0; r < o.reps; r++) {
      for (const K of o.inflight) {
        for (const u of o.upstreams) {
          const pr = pairs[u];
          const order = r % 2 === 0 ? ['direct', 'wrapped'] : ['wrapped', 'direct'];
          const phase = { rep: r + 1, inflight: K, first: order[0] };
          for (const which of order) phase[which] = await measure(pr[which], K, `rep ${r + 1}, ${K} in flight, ${u} ${which}`);
          pr.phases.push(phase);
          log(`rep ${r + 1}, ${u}, ${K} in flight: direct ${fmt(phase.direct.calls_per_s)}/s p50 ${fmt(phase.direct.p50_us, 1)} us; ` +
            `wrapped ${fmt(phase.wrapped.calls_per_s)}/s p50 ${fmt(phase.wrapped.p50_us, 1)} us`);
        }
      }
    }
    const results = [];
    for (const u of o.upstreams) {
      const pr = pairs[u];
      const keelHwm = hwmMB(pr.wrapped.pid);
      const upstreamHwm = hwmMB(pr.wrapped.upstreamPid);
      const directHwm = hwmMB(pr.direct.pid);
      const upstreamPid = pr.wrapped.upstreamPid;
      const directExit = await pr.direct.close();
      const wrappedExit = await pr.wrapped.close();
      let upstreamAlive = false;
      try { process.kill(upstreamPid, 0); upstreamAlive = true; } catch { /* gone, as it must be */ }
      if (!upstreamAlive) pr.wrapped.upstreamPid = null;
      const byK = o.inflight.map((K) => {
        const ph = pr.phases.filter((x) => x.inflight === K);
        const med = (which, f) => median(ph.map((x) => x[which][f]));
        const side = (which) => ({
          calls_per_s: med(which, 'calls_per_s'), p50_us: med(which, 'p50_us'), p90_us: med(which, 'p90_us'),
          p99_us: med(which, 'p99_us'), max_us: med(which, 'max_us'), cpu_us_per_call: med(which, 'cpu_us_per_call'),
          context_switches_per_call: med(which, 'context_switches_per_call'),
          driver_cpu_us_per_call: med(which, 'driver_cpu_us_per_call'),
          calls_per_s_min: Math.min(...ph.map((x) => x[which].calls_per_s)), calls_per_s_max: Math.max(...ph.map((x) => x[which].calls_per_s)),
        });
        return {
          inflight: K,
          direct: side('direct'),
          wrapped: { ...side('wrapped'), upstream_cpu_us_per_call: med('wrapped', 'upstream_cpu_us_per_call') },
          added_p50_us: median(ph.map((x) => x.wrapped.p50_us - x.direct.p50_us)),
          added_p99_us: median(ph.map((x) => x.wrapped.p99_us - x.direct.p99_us)),
          throughput_ratio: median(ph.map((x) => x.wrapped.calls_per_s / x.direct.calls_per_s)),
          throughput_ratio_min: Math.min(...ph.map((x) => x.wrapped.calls_per_s / x.direct.calls_per_s)),
          throughput_ratio_max: Math.max(...ph.map((x) => x.wrapped.calls_per_s / x.direct.calls_per_s)),
        };
      });
      results.push({
        upstream: u, label: pr.label,
        direct_args: pr.directArgs, wrap_args: pr.wrapArgs,
        upstream_protocol: (/upstream server speaks (\S+)/.exec(pr.wrapped.p.stderr) ?? [])[1] ?? 'unknown',
        init_ms: { direct: pr.direct.initMs, wrapped: pr.wrapped.initMs },
        keel_peak_rss_mb: keelHwm, upstream_peak_rss_mb: upstreamHwm, direct_peak_rss_mb: directHwm,
        exit: { direct: directExit, wrapped: wrappedExit, upstream_alive_after_keel_exit: upstreamAlive },
        by_inflight: byK,
        phases: pr.phases,
      });
    }
    return results;
  } finally {
    for (const s of servers) s.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------
// Part 2

const slowCall = (id) =>
  `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"${id}"}}}\n`;
const echoCall = (id) =>
  `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"echo","arguments":{"text":"${id}"}}}\n`;
const cancelLine = (id) =>
  `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"${id}","reason":"bench"}}\n`;

// A call keel answered although the upstream never answers it (a finding, not a failure).
class HeldCallAnswered extends Error {}

async function runCancel(o) {
  const W = o.workers;
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-wrap-cancel-'));
  const statsFile = join(dir, 'upstream-stats.json');
  const keelArgs = ['wrap', '--db', join(dir, 'keel.db'), '--workers', String(W),
    '--idle-timeout', '600000', '--max-timeout', '600000'];
  if (o.slowBreakerOff) {
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ version: 'bench-wrap', tools: { slow: { breaker: { mode: 'metrics_only' } } } }));
    keelArgs.push('--policy', policy);
  }
  keelArgs.push('--', process.execPath, join(here, 'wrap_slow_upstream.mjs'));
  // The upstream inherits keel's environment, so the stats file's name reaches it.
  const k = new Server('keel wrap -- slow upstream', o.keel, keelArgs, dir, { WRAP_SLOW_STATS: statsFile });
  const cancelMs = [], baseMs = [];
  const cancelled = new Set();
  const cancelledResponses = [];
  let progressNotes = 0, otherNotes = 0, held = null, measuredLoopMs = NaN, cancelsSent = 0;
  try {
    await k.initialize();
    const waiters = new Map(); // id -> { t, msg }
    const progressSeen = new Set();
    const slowAnswered = new Map(); // slow id -> its response line (keel answered a held call)
    const unexpected = [];
    let lines = 0;
    k.p.onLine = (line) => {
      const t = performance.now();
      lines++;
      let m;
      try { m = JSON.parse(line); } catch { unexpected.push(`not JSON: ${line.slice(0, 200)}`); return; }
      if (!('id' in m)) {
        if (m.method === 'notifications/progress') { progressNotes++; progressSeen.add(m.params?.progressToken); }
        else otherNotes++;
        if (k.wake) k.wake();
        return;
      }
      if (cancelled.has(m.id)) { cancelledResponses.push(line.slice(0, 300)); return; }
      if (typeof m.id === 'string' && m.id.startsWith('s')) { slowAnswered.set(m.id, line.slice(0, 400)); if (k.wake) k.wake(); return; }
      const w = waiters.get(m.id);
      if (!w) { unexpected.push(line.slice(0, 300)); return; }
      waiters.delete(m.id);
      w.t = t;
      w.msg = m;
      if (k.wake) k.wake();
    };
    k.progress = () => lines;
    const expect = (id) => { const w = { t: null, msg: null }; waiters.set(id, w); return w; };
    const wait1 = (w, what) => k.waitFor(() => w.t !== null, what);
    const waitHeld = async (id) => {
      await k.waitFor(() => progressSeen.has(id) || slowAnswered.has(id), `progress of ${id}`);
      if (slowAnswered.has(id)) throw new HeldCallAnswered(slowAnswered.get(id));
    };
    const checkEcho = (w, id) => {
      const r = w.msg.result;
      if (!r || r.isError || r.content?.[0]?.text !== id) throw k.error(`bad echo answer: ${JSON.stringify(w.msg).slice(0, 400)}`);
    };
    const sendCancel = (id) => { cancelled.add(id); cancelsSent++; return cancelLine(id); };
    // Set-up: W slow calls hold every slot.
    const ring = [];
    let n = 0;
    let setup = '';
    for (let j = 0; j < W; j++) { const id = `s${n++}`; ring.push(id); setup += slowCall(id); }
    k.p.write(setup);
    try {
      for (const id of ring) await waitHeld(id);
      const total = o.cancelWarmup + o.iterations;
      const tLoop = performance.now();
      for (let i = 0; i < total; i++) {
        const victim = ring.shift();
        const eid = `e${i}`, bid = `b${i}`;
        const we = expect(eid);
        const t0 = performance.now();
        k.p.write(sendCancel(victim) + echoCall(eid));
        await wait1(we, `the echo after cancelling ${victim}`);
        checkEcho(we, eid);
        const wb = expect(bid);
        const tb = performance.now();
        k.p.write(echoCall(bid));
        await wait1(wb, 'the baseline echo');
        checkEcho(wb, bid);
        if (i >= o.cancelWarmup) { cancelMs.push(we.t - t0); baseMs.push(wb.t - tb); }
        const sid = `s${n++}`;
        ring.push(sid);
        k.p.write(slowCall(sid));
        await waitHeld(sid);
      }
      measuredLoopMs = performance.now() - tLoop;
    } catch (e) {
      if (!(e instanceof HeldCallAnswered)) throw e;
      held = { after_cancels: cancelsSent, first: e.message };
      log(`cancel: keel answered a held slow call itself after ${cancelsSent} cancels: ${e.message.slice(0, 300)}`);
    }
    // The end: the slow calls still held are cancelled; as many echoes must all come back.
    let end = '';
    const endWaits = [];
    const live = ring.filter((id) => !slowAnswered.has(id));
    for (const id of live) end += sendCancel(id);
    for (let j = 0; j < Math.max(1, live.length); j++) { const id = `end${j}`; endWaits.push([id, expect(id)]); end += echoCall(id); }
    k.p.write(end);
    for (const [id, w] of endWaits) { await wait1(w, `final echo ${id}`); checkEcho(w, id); }
    await new Promise((r) => setTimeout(r, 300));
    const hwm = hwmMB(k.pid);
    const upstreamPid = childPids(k.pid)[0];
    const ex = await k.close();
    let upstreamAlive = false;
    if (upstreamPid) { try { process.kill(upstreamPid, 0); upstreamAlive = true; } catch { /* gone */ } }
    let upstreamStats = null;
    try { upstreamStats = JSON.parse(readFileSync(statsFile, 'utf8')); } catch { /* it did not write them */ }
    if (unexpected.length) throw k.error(`${unexpected.length} unexpected line(s); first: ${unexpected[0]}`);
    const diff = cancelMs.map((c, j) => c - baseMs[j]);
    return {
      workers: W,
      iterations: o.iterations,
      measured: cancelMs.length,
      warmup: o.cancelWarmup,
      keel_args: keelArgs,
      slow_breaker_off: o.slowBreakerOff,
      cancel_plus_echo_ms: summary(cancelMs),
      baseline_echo_ms: summary(baseMs),
      pairwise_difference_ms: summary(diff),
      cancel_plus_echo_over_5ms: cancelMs.filter((x) => x >= 5).length,
      cancels_sent: cancelsSent,
      responses_for_cancelled_ids: cancelledResponses.length,
      first_response_for_cancelled_id: cancelledResponses[0] ?? null,
      held_call_answered_by_keel: held,
      progress_notifications: progressNotes,
      other_notifications: otherNotes,
      upstream_stats: upstreamStats,
      keel_peak_rss_mb: hwm,
      loop_s: measuredLoopMs / 1000,
      exit_code: ex.code,
      exit_signal: ex.signal,
      upstream_alive_after_keel_exit: upstreamAlive,
    };
  } finally {
    k.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------
// Report

function report(r, o) {
  const lines = [];
  const goals = [];
  lines.push(`keel wrap bench: the same echo server called directly and through \`keel wrap\`, one run, ${r.cpus} CPU core(s)`);
  lines.push('shared by the driver (Node), keel and the upstream.');
  lines.push(`Background CPU use without the bench: ${fmt(r.background_load.before_cores, 2)} cores before, ` +
    `${fmt(r.background_load.after_cores, 2)} after (loadavg ${r.background_load.loadavg.split(' ').slice(0, 3).join(' ')}).`);
  if (!(Math.max(r.background_load.before_cores, r.background_load.after_cores) < 0.2)) {
    lines.push('WARNING: other work was running on this machine; these figures (tails above all) are disturbed by it.');
  }
  if (r.overhead) {
    lines.push('');
    lines.push(`Part 1: ${o.reps} interleaved repetitions of ${o.calls} echo calls per phase (after ${o.warmup} warm-up calls per process),`);
    lines.push(`medians over the repetitions. wrapped: keel wrap --db <tmp>${o.wrapFlags.length ? ' ' + o.wrapFlags.join(' ') : ''} -- <upstream>.`);
    lines.push('');
    const head = ['upstream', 'in flight', 'direct calls/s', 'wrapped calls/s', 'ratio', 'direct p50 us', 'wrapped p50 us',
      'added p50 us', 'direct p99 us', 'wrapped p99 us'];
    const rows = [];
    const head2 = ['upstream', 'in flight', 'server CPU us/call direct', 'keel CPU us/call', 'upstream CPU us/call under keel',
      'driver CPU us/call direct', 'driver CPU us/call wrapped', 'server ctx switches/call direct', 'keel ctx switches/call'];
    const rows2 = [];
    for (const u of r.overhead) {
      for (const b of u.by_inflight) {
        rows.push([u.upstream, String(b.inflight), fmt(b.direct.calls_per_s), fmt(b.wrapped.calls_per_s),
          `${fmt(b.throughput_ratio, 2)}x`, fmt(b.direct.p50_us, 1), fmt(b.wrapped.p50_us, 1), fmt(b.added_p50_us, 1),
          fmt(b.direct.p99_us, 1), fmt(b.wrapped.p99_us, 1)]);
        rows2.push([u.upstream, String(b.inflight), fmt(b.direct.cpu_us_per_call, 1), fmt(b.wrapped.cpu_us_per_call, 1),
          fmt(b.wrapped.upstream_cpu_us_per_call, 1), fmt(b.direct.driver_cpu_us_per_call, 1), fmt(b.wrapped.driver_cpu_us_per_call, 1),
          fmt(b.direct.context_switches_per_call, 2), fmt(b.wrapped.context_switches_per_call, 2)]);
      }
    }
    lines.push(...table(head, rows));
    lines.push('');
    lines.push(...table(head2, rows2));
    lines.push('');
    for (const u of r.overhead) {
      lines.push(`${u.upstream} (${u.label}, upstream speaks ${u.upstream_protocol} to keel): keel peak RSS ${fmt(u.keel_peak_rss_mb, 1)} MB ` +
        `(VmHWM of the keel process; its upstream child ${fmt(u.upstream_peak_rss_mb, 1)} MB, the direct server ${fmt(u.direct_peak_rss_mb, 1)} MB); ` +
        `initialize ${fmt(u.init_ms.direct, 1)} ms direct, ${fmt(u.init_ms.wrapped, 1)} ms wrapped; ` +
        `throughput ratio range ${o.inflight.map((K) => { const b = u.by_inflight.find((x) => x.inflight === K); return `@${K} ${fmt(b.throughput_ratio_min, 2)}-${fmt(b.throughput_ratio_max, 2)}`; }).join(', ')}; ` +
        `keel exit ${u.exit.wrapped.code} after EOF in ${fmt(u.exit.wrapped.ms, 0)} ms, upstream ${u.exit.upstream_alive_after_keel_exit ? 'STILL ALIVE' : 'gone'}.`);
    }
    lines.push('ratio: median over repetitions of wrapped/direct calls/s; added p50: median of (wrapped p50 - direct p50) per repetition.');
    // The CPU budget of the throughput goal: the run's cores are shared by the driver, the
    // upstream and keel, so at 0.8x the direct rate keel may use what the other two leave.
    for (const u of r.overhead) {
      const bN = u.by_inflight.find((x) => x.inflight === Math.max(...o.inflight));
      const directCores = ((bN.direct.cpu_us_per_call + bN.direct.driver_cpu_us_per_call) * bN.direct.calls_per_s) / 1e6;
      const target = 0.8 * bN.direct.calls_per_s;
      const others = bN.wrapped.upstream_cpu_us_per_call + bN.wrapped.driver_cpu_us_per_call;
      const budget = (r.cpus * 1e6) / target - others;
      lines.push(`CPU budget, ${u.upstream} @${bN.inflight}: direct uses ${fmt(directCores, 2)} of ${r.cpus} cores; at 0.8x direct ` +
        `(${fmt(target)} calls/s) the driver and the upstream (${fmt(others, 1)} us/call under keel) leave keel at most ` +
        `${fmt(budget, 1)} us/call; it used ${fmt(bN.wrapped.cpu_us_per_call, 1)}.`);
    }
    const Kmin = Math.min(...o.inflight), Kmax = Math.max(...o.inflight);
    for (const u of r.overhead) {
      const b1 = u.by_inflight.find((x) => x.inflight === Kmin), bN = u.by_inflight.find((x) => x.inflight === Kmax);
      const tag = u.upstream === 'sdk' ? 'SDK upstream' : 'keel upstream';
      goals.push({ goal: `${tag}: added p50 latency @${Kmin} in flight <= 100 us`, value: `${fmt(b1.added_p50_us, 1)} us`, pass: b1.added_p50_us <= 100 });
      goals.push({ goal: `${tag}: throughput through keel @${Kmax} >= 0.8x direct`, value: `${fmt(bN.throughput_ratio, 2)}x`, pass: bN.throughput_ratio >= 0.8 });
      goals.push({ goal: `${tag}: keel peak RSS <= 16 MB`, value: `${fmt(u.keel_peak_rss_mb, 1)} MB`, pass: u.keel_peak_rss_mb <= 16 });
    }
  }
  if (r.cancel) {
    const c = r.cancel;
    lines.push('');
    lines.push(`Part 2: cancel through keel to an upstream that ignores cancels (keel wrap --workers ${c.workers}${c.slow_breaker_off ? ', `slow` breaker metrics_only' : ''}:`);
    lines.push(`every slot held by a \`slow\` call the upstream never answers). ${c.measured} cancels measured (of ${c.iterations} asked) after`);
    lines.push(`${c.warmup} unrecorded. cancel+echo: one write() of the cancel and an echo that can only run on the slot the cancel`);
    lines.push('frees; baseline: an echo round trip on the free slot right after.');
    lines.push('');
    if (c.measured) {
      const head = ['ms', 'p50', 'p90', 'p99', 'max'];
      const rows = [['cancel+echo', c.cancel_plus_echo_ms], ['baseline echo', c.baseline_echo_ms], ['cancel->free (difference, pairwise)', c.pairwise_difference_ms]]
        .map(([n, x]) => [n, fmt(x.p50, 3), fmt(x.p90, 3), fmt(x.p99, 3), fmt(x.max, 3)]);
      lines.push(...table(head, rows));
      lines.push('');
    }
    if (c.held_call_answered_by_keel) {
      lines.push(`FINDING: keel answered a held \`slow\` call itself (the upstream never answers it) after ${c.held_call_answered_by_keel.after_cancels} cancels;`);
      lines.push(`  part 2 stopped there (--slow-breaker-off measures past it). The answer: ${c.held_call_answered_by_keel.first}`);
    }
    const us = c.upstream_stats;
    lines.push(`responses for cancelled ids: ${c.responses_for_cancelled_ids} of ${c.cancels_sent} cancelled (must be 0)` +
      (c.first_response_for_cancelled_id ? `; first: ${c.first_response_for_cancelled_id}` : ''));
    lines.push(`cancels the upstream received for its slow calls: ${us ? `${us.cancels_for_slow} of ${c.cancels_sent} (slow calls received ${us.slow_calls})` : 'unknown (no stats file)'}`);
    lines.push(`keel peak RSS ${fmt(c.keel_peak_rss_mb, 1)} MB; keel exit ${c.exit_code} after EOF, upstream ${c.upstream_alive_after_keel_exit ? 'STILL ALIVE' : 'gone'}; measured loop ${fmt(c.loop_s, 2)} s.`);
    if (c.measured) {
      goals.push({ goal: 'cancel->slot free p99 <= 5 ms (cancel+echo - baseline, pairwise)', value: `${fmt(c.pairwise_difference_ms.p99, 3)} ms`, pass: c.pairwise_difference_ms.p99 <= 5 });
    }
    goals.push({ goal: 'no response for a cancelled id', value: String(c.responses_for_cancelled_ids), pass: c.responses_for_cancelled_ids === 0 });
    goals.push({ goal: 'no held call answered by keel itself', value: c.held_call_answered_by_keel ? `after ${c.held_call_answered_by_keel.after_cancels} cancels` : 'none', pass: !c.held_call_answered_by_keel });
    if (us) goals.push({ goal: 'every cancel forwarded to the upstream', value: `${us.cancels_for_slow} of ${c.cancels_sent}`, pass: us.cancels_for_slow === c.cancels_sent });
  }
  lines.push('');
  lines.push('goals (information only; the bench asserts nothing):');
  const gw = Math.max(...goals.map((g) => g.goal.length));
  for (const g of goals) lines.push(`  ${g.pass ? 'PASS' : 'MISS'}  ${g.goal.padEnd(gw)}  ${g.value}`);
  return { text: lines.join('\n') + '\n', goals };
}

export async function main(argv) {
  const o = parseArgs(argv);
  const t = performance.now();
  const before = await backgroundLoad();
  const r = { mode: 'wrap', cpus: cpus().length, clk_tck: CLK_TCK, options: { ...o } };
  try {
    r.overhead = await runOverhead(o);
    if (o.cancel) {
      log(`cancel: ${o.cancelWarmup + o.iterations} cancels, --workers ${o.workers} ...`);
      r.cancel = await runCancel(o);
    }
  } catch (e) {
    if (e instanceof ServerFailed) die(`a server failed to run: ${e.message}`, 1);
    throw e;
  }
  r.background_load = { before_cores: before, after_cores: await backgroundLoad(), loadavg: readFileSync('/proc/loadavg', 'utf8').trim() };
  const { text, goals } = report(r, o);
  process.stdout.write(o.json ? JSON.stringify({ ...r, goals }, null, 2) + '\n' : text);
  log(`done in ${fmt((performance.now() - t) / 1000, 1)} s`);
}
