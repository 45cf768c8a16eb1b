// Driver for scripts/bench: pipelines `echo` tool calls over one stdio connection
// against keel, the official TypeScript SDK and a trivial C "floor", and prints figures.
// It asserts nothing: goals are printed as PASS/MISS for information, and the exit
// status is 0 unless a server fails to run (spawn error, early exit, error responses,
// stall).
//
// The driver speaks raw newline-delimited JSON-RPC itself (no SDK client, which would
// cost more than the servers it measures): requests are prebuilt strings, responses
// are split on '\n' and only their id is extracted by a scan, all requests released by
// one chunk of responses go out in one write().
//
// Method, per server and per in-flight count K (each (server, K) pair gets a FRESH
// server process, so every row has its own time to initialize and peak RSS):
//   spawn -> send initialize -> time to its response = "time to initialize"
//   -> notifications/initialized -> warm-up (--warmup calls, K in flight)
//   -> read /proc/<pid>/stat utime+stime -> measured phase (--calls calls, exactly K in
//   flight: each response releases one new request) -> read /proc/<pid>/stat again and
//   VmHWM from /proc/<pid>/status -> close stdin -> wait for exit.
// Per-call latency is send->response (performance.now(); a batch of requests written
// together shares one send time). calls/s = calls / wall time of the measured phase.
import { execFileSync } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { backgroundLoad } from './machine_load.mjs';
import { lineId } from './line_id.mjs';
import { forEachArg } from './cli.mjs';
import { ensureFloor, ensureAllocCounter } from './floor.mjs';
import { spawnLines } from '../../tests/support/keel_process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

const USAGE = `usage: scripts/bench [--calls N] [--warmup N] [--inflight 1,16] [--servers keel,sdk,floor]
                    [--keel PATH] [--era legacy|modern|padded] [--reps N] [--allocs] [--json]
       scripts/bench --cancel ... | --flood ...   (request coordinator benches; scripts/bench --cancel --help)
       scripts/bench --ledger ...   (exactly-once mutations vs SQLite's commit rate; scripts/bench --ledger --help)
       scripts/bench --command ...  (a command-backed tool vs spawning it directly; scripts/bench --command --help)
       scripts/bench --startup ...  (spawn to the initialize response, vs the SDK server; scripts/bench --startup --help)
       scripts/bench --wrap ...     (keel wrap in front of an echo server vs the server direct; scripts/bench --wrap --help)
  --calls N       measured echo calls per (server, in-flight) run (default 20000)
  --warmup N      warm-up calls before measuring (default 1000)
  --inflight L    comma-separated in-flight counts (default 1,16)
  --servers L     which servers to run (default keel,sdk,floor)
  --keel PATH     keel binary (default $KEEL_BINARY or build/keel)
  --era E         legacy (default): the calls follow initialize (MCP 2025-11-25); modern:
                  each call carries the MCP 2026-07-28 _meta envelope (keel only; the
                  initialize is still sent, so both eras pay the same start-up); padded:
                  legacy calls padded to the modern line's length with a _meta key keel
                  does not read (the control: what the bytes cost, apart from the envelope)
  --reps N        repetitions (default 1). With N > 1 the runs are interleaved (every
                  server and in-flight count once per repetition, in turn) and each row
                  shows the median of its N runs; the ratios and goals use those medians
  --allocs        count keel's heap allocations (an LD_PRELOAD shim, alloc_count.c) and
                  print allocations and bytes per call: a figure the machine's noise does
                  not move. The shim costs time, so take timings from runs without it
  --json          print the results as JSON on stdout instead of the table
Progress goes to stderr. Exit 0 unless a server fails to run.`;

function parseArgs(argv) {
  const o = {
    calls: 20000,
    warmup: 1000,
    inflight: [1, 16],
    servers: ['keel', 'sdk', 'floor'],
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    era: 'legacy',
    reps: 1,
    allocs: false,
    json: false,
  };
  forEachArg(argv, USAGE, die, (a, val) => {
    const posInt = (s) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < 0) die(`${a}: not a non-negative integer: ${s}`);
      return n;
    };
    switch (a) {
      case '--calls': o.calls = posInt(val()); if (o.calls < 1) die('--calls must be >= 1'); break;
      case '--warmup': o.warmup = posInt(val()); break;
      case '--inflight': o.inflight = val().split(',').map(posInt); if (o.inflight.some((k) => k < 1)) die('--inflight values must be >= 1'); break;
      case '--servers': o.servers = val().split(','); break;
      case '--keel': o.keel = resolve(val()); break;
      case '--era': o.era = val(); if (!['legacy', 'modern', 'padded'].includes(o.era)) die('--era: legacy, modern or padded'); break;
      case '--reps': o.reps = posInt(val()); if (o.reps < 1) die('--reps must be >= 1'); break;
      case '--allocs': o.allocs = true; break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  for (const s of o.servers) if (!['keel', 'sdk', 'floor'].includes(s)) die(`unknown server: ${s}`);
  return o;
}

function die(msg, code = 2) {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(code);
}
const log = (msg) => process.stderr.write(`bench: ${msg}\n`);

class ServerFailed extends Error {}

const CLK_TCK = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; }
})();

// utime+stime of a live process, in seconds (fields 14 and 15 of /proc/<pid>/stat,
// counted after the ')' that ends the command name, which may contain spaces).
function cpuSeconds(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // f[0] is field 3 (state)
}

function peakRssMB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function serverSpecs(opts) {
  const all = {
    keel: () => {
      if (!existsSync(opts.keel)) throw new ServerFailed(`keel: no binary at ${opts.keel} (run scripts/build)`);
      return { name: 'keel', cmd: opts.keel, args: [] };
    },
    sdk: () => ({ name: 'sdk', cmd: process.execPath, args: [join(here, 'sdk_echo_server.mjs')] }),
    floor: () => {
      try { return { name: 'floor', cmd: ensureFloor(log), args: [] }; } catch (e) { throw new ServerFailed(e.message); }
    },
  };
  return opts.servers.map((s) => all[s]());
}

const ECHO_TEXT = 'hello';
const REQ_HEAD = '{"jsonrpc":"2.0","id":';
const LEGACY_TAIL = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${ECHO_TEXT}"}}}\n`;
// The MCP 2026-07-28 envelope a modern client puts on every request (--era modern).
const MODERN_TAIL = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${ECHO_TEXT}"},` +
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' +
  '"io.modelcontextprotocol/clientCapabilities":{},' +
  '"io.modelcontextprotocol/clientInfo":{"name":"keel-bench","version":"0"}}}}\n';
// A legacy call as long as a modern one, its padding in a _meta key keel drops unread.
const PADDED_TAIL = LEGACY_TAIL.slice(0, -3) + ',"_meta":{"x-pad":"' +
  'p'.repeat(MODERN_TAIL.length - LEGACY_TAIL.length - '},"_meta":{"x-pad":""'.length) + '"}}}\n';
const INIT_REQ = JSON.stringify({
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'keel-bench', version: '0' } },
}) + '\n';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
const STALL_MS = 15000;

// One (server, K) run on a fresh process.
async function runOne(spec, K, opts) {
  const tails = { legacy: LEGACY_TAIL, modern: MODERN_TAIL, padded: PADDED_TAIL };
  const reqTail = spec.name === 'keel' ? tails[opts.era] : LEGACY_TAIL;
  const cwd = mkdtempSync(join(tmpdir(), 'keel-bench-'));
  const t0 = performance.now();
  // keel keeps its database in the run's own directory (KEEL_DB).
  const env = { ...process.env, KEEL_DB: join(cwd, 'keel.db') };
  const countFile = join(cwd, 'allocs');
  if (opts.allocs && spec.name === 'keel') {
    env.LD_PRELOAD = ensureAllocCounter(log);
    env.KEEL_ALLOC_COUNT_FILE = countFile;
  }
  // [allocations, bytes] so far, or nulls when not counted.
  const allocCounts = () => {
    if (!env.KEEL_ALLOC_COUNT_FILE) return [null, null];
    const b = readFileSync(countFile);
    return [Number(b.readBigUInt64LE(0)), Number(b.readBigUInt64LE(8))];
  };
  let failure = null;
  let wake = null; // resolves the phase currently waiting
  const fail = (why) => {
    if (!failure) failure = why;
    if (wake) wake();
  };
  // Response handling: p.onLine is set per phase; p.afterChunk sends what a chunk released.
  const p = spawnLines(spec.cmd, spec.args, {
    cwd, env, stderrLimit: 4000,
    onError: (e, where) => fail(where === 'spawn' ? `spawn failed: ${e.message}` : `write to stdin failed: ${e.message}`),
  });
  const child = p.child;
  const pid = p.pid;
  let closing = false;
  p.exited.then((e) => { if (!closing) fail(`exited early (code ${e.code}, signal ${e.signal})`); });

  const waitFor = (donePred, what) => new Promise((res, rej) => {
    if (failure) return rej(new ServerFailed(`${spec.name}: ${failure}`));
    let last = -1;
    const timer = setInterval(() => {
      const n = progress();
      if (n === last) fail(`stalled for ${STALL_MS / 1000}s during ${what}`);
      last = n;
    }, STALL_MS);
    wake = () => {
      clearInterval(timer);
      wake = null;
      if (failure) rej(new ServerFailed(`${spec.name}: ${failure}`));
      else res();
    };
    if (donePred()) wake();
  });
  let progress = () => 0;

  try {
    // initialize
    let initLine = null;
    p.onLine = (line) => {
      if (lineId(line) === 0) { initLine = line; if (wake) wake(); }
    };
    progress = () => (initLine ? 1 : 0);
    child.stdin.write(INIT_REQ);
    await waitFor(() => initLine !== null, 'initialize');
    const initMs = performance.now() - t0;
    const init = JSON.parse(initLine);
    if (!init.result) throw new ServerFailed(`${spec.name}: initialize failed: ${initLine}`);
    child.stdin.write(INITIALIZED);

    // A phase: `count` calls with ids base..base+count-1, exactly K in flight.
    const phase = async (count, base, lat, what) => {
      const sendAt = new Float64Array(count);
      let sent = 0, done = 0, bad = 0, firstBad = null, checked = false;
      let out = '';
      const queue = (n) => {
        const now = performance.now();
        for (let j = 0; j < n && sent < count; j++) {
          sendAt[sent] = now;
          out += REQ_HEAD + (base + sent) + reqTail;
          sent++;
        }
      };
      p.afterChunk = () => {
        if (out) { child.stdin.write(out); out = ''; }
      };
      p.onLine = (line) => {
        const id = lineId(line);
        if (id < 0) return; // a notification (e.g. a log message): not ours
        const idx = id - base;
        if (idx < 0 || idx >= sent || sendAt[idx] < 0) {
          bad++; firstBad ??= `unexpected id: ${line}`;
          return;
        }
        const now = performance.now();
        if (lat) lat[idx] = now - sendAt[idx];
        sendAt[idx] = -1;
        // Cheap correctness check on every line, a full one on the first.
        if (line.indexOf('"error":') >= 0 || line.indexOf('"isError":true') >= 0) {
          bad++; firstBad ??= line;
        } else if (!checked) {
          checked = true;
          const r = JSON.parse(line).result;
          if (r?.content?.[0]?.text !== ECHO_TEXT) { bad++; firstBad ??= line; }
        }
        done++;
        if (sent < count) queue(1);
        else if (done === count && wake) wake();
      };
      progress = () => done;
      const t = performance.now();
      queue(K);
      p.afterChunk();
      await waitFor(() => done === count, what);
      const wall = performance.now() - t;
      p.afterChunk = null;
      if (bad) throw new ServerFailed(`${spec.name}: ${bad} bad responses during ${what}; first: ${firstBad.slice(0, 300)}`);
      return wall;
    };

    let nextId = 1;
    if (opts.warmup > 0) {
      await phase(opts.warmup, nextId, null, 'warm-up');
      nextId += opts.warmup;
    }
    const lat = new Float64Array(opts.calls);
    const cpu0 = cpuSeconds(pid);
    const drv0 = process.cpuUsage();
    const alloc0 = allocCounts();
    const wallMs = await phase(opts.calls, nextId, lat, 'measured calls');
    const alloc1 = allocCounts();
    const drv = process.cpuUsage(drv0);
    const cpu1 = cpuSeconds(pid);
    const rss = peakRssMB(pid);

    // close: EOF on stdin, then wait for the exit.
    p.onLine = () => {};
    closing = true;
    const tClose = performance.now();
    p.end();
    const ex = await p.waitExit(5000);
    const closeMs = performance.now() - tClose;
    if (!ex) {
      child.kill('SIGKILL');
      throw new ServerFailed(`${spec.name}: did not exit within 5 s of stdin EOF`);
    }

    lat.sort();
    const pct = (p) => lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)] * 1000;
    return {
      server: spec.name,
      inflight: K,
      calls: opts.calls,
      calls_per_s: opts.calls / (wallMs / 1000),
      p50_us: pct(50),
      p99_us: pct(99),
      p90_us: pct(90),
      p999_us: pct(99.9),
      max_us: lat[lat.length - 1] * 1000,
      cpu_us_per_call: ((cpu1 - cpu0) * 1e6) / opts.calls,
      driver_cpu_us_per_call: (drv.user + drv.system) / opts.calls,
      peak_rss_mb: rss,
      allocs_per_call: alloc0[0] === null ? null : (alloc1[0] - alloc0[0]) / opts.calls,
      alloc_bytes_per_call: alloc0[0] === null ? null : (alloc1[1] - alloc0[1]) / opts.calls,
      init_ms: initMs,
      exit_code: ex.code,
      exit_signal: ex.signal,
      exit_after_eof_ms: closeMs,
    };
  } catch (e) {
    if (e instanceof ServerFailed) {
      // Say how the process ended, if it did (e.g. EPIPE on write is usually an early exit).
      if (p.exit === null) await Promise.race([p.exited, new Promise((r) => setTimeout(r, 300).unref())]);
      if (p.exit !== null) e.message += ` [process exited: code ${p.exit.code}, signal ${p.exit.signal}]`;
      if (p.stderr.trim()) e.message += `\n--- ${spec.name} stderr (tail) ---\n${p.stderr}`;
    }
    throw e;
  } finally {
    if (p.exit === null) child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  }
}

function median(values) {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One row from the runs of one (server, K): each figure is the median of its runs, on its
// own (so the row need not be one run's); `runs` keeps every run's calls/s and CPU.
function medianRow(runs) {
  if (runs.length === 1) return runs[0];
  const row = { ...runs[0], reps: runs.length };
  for (const key of Object.keys(runs[0])) {
    if (typeof runs[0][key] === 'number' && !['inflight', 'calls', 'exit_code'].includes(key)) {
      row[key] = median(runs.map((r) => r[key]));
    }
  }
  row.runs = runs.map((r) => ({ calls_per_s: r.calls_per_s, cpu_us_per_call: r.cpu_us_per_call, p99_us: r.p99_us }));
  return row;
}

function fmt(n, d = 0) {
  return Number.isFinite(n) ? n.toFixed(d) : 'n/a';
}

function report(results, opts, background) {
  const row = (s, k) => results.find((r) => r.server === s && r.inflight === k);
  const kMin = Math.min(...opts.inflight), kMax = Math.max(...opts.inflight);
  const lines = [];
  lines.push(`keel bench: ${opts.calls} measured echo calls per run after ${opts.warmup} warm-up calls, one stdio connection,`);
  lines.push(`a fresh server process per (server, in-flight) row. ${cpus().length} CPU core(s): the driver (Node) and the server`);
  lines.push(`share them, so high-throughput rows are partly bounded by the driver (see driver CPU us/call).`);
  if (opts.reps > 1) lines.push(`${opts.reps} interleaved repetitions: every figure below is the median of its ${opts.reps} runs.`);
  const bg = Math.max(background.before_cores, background.after_cores);
  lines.push(`Background CPU use without the bench: ${fmt(background.before_cores, 2)} cores before, ${fmt(background.after_cores, 2)} after` +
    ` (loadavg ${background.loadavg.split(' ').slice(0, 3).join(' ')}).`);
  if (!(bg < 0.2)) lines.push('WARNING: other work was running on this machine; these figures are disturbed by it.');
  lines.push('');
  const head = ['server', 'in-flight', 'calls/s', 'p50 us', 'p99 us', 'CPU us/call', 'peak RSS MB', 'init ms', 'driver CPU us/call'];
  const rows = results.map((r) => [r.server, String(r.inflight), fmt(r.calls_per_s), fmt(r.p50_us, 1), fmt(r.p99_us, 1),
    fmt(r.cpu_us_per_call, 1), fmt(r.peak_rss_mb, 1), fmt(r.init_ms, 1), fmt(r.driver_cpu_us_per_call, 1)]);
  if (opts.allocs) {
    head.push('allocs/call', 'alloc bytes/call');
    results.forEach((r, i) => rows[i].push(r.allocs_per_call === null ? '' : fmt(r.allocs_per_call, 1),
      r.alloc_bytes_per_call === null ? '' : fmt(r.alloc_bytes_per_call)));
  }
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  lines.push(line(head));
  lines.push(w.map((n) => '-'.repeat(n)).join('  '));
  for (const r of rows) lines.push(line(r));
  lines.push('');
  lines.push(`CPU us/call: the server's utime+stime (/proc/<pid>/stat, ${fmt(1000 / CLK_TCK)} ms ticks) over the measured phase / calls.`);
  lines.push('init ms: from spawn() to the initialize response, so it includes the process spawn from Node (see floor).');
  lines.push('peak RSS: VmHWM just before stdin is closed. --json adds p90/p99.9/max latency and exit details.');
  if (opts.allocs) lines.push('allocs/call: keel\'s heap allocations over the measured phase / calls (alloc_count.c); its timings include the shim.');

  const goals = [];
  const ratio = (a, b) => (a && b ? a / b : NaN);
  if (opts.servers.includes('keel') && opts.servers.includes('sdk')) {
    lines.push('');
    lines.push('ratios:');
    const cpuRatios = opts.inflight.map((k) => ratio(row('keel', k)?.cpu_us_per_call, row('sdk', k)?.cpu_us_per_call));
    opts.inflight.forEach((k, i) => lines.push(`  keel CPU/call vs SDK @${k} in flight: ${fmt(cpuRatios[i], 3)} (SDK/keel = ${fmt(1 / cpuRatios[i], 1)}x)`));
    const cpuAtMax = cpuRatios[opts.inflight.indexOf(kMax)];
    goals.push({ goal: `keel CPU per call @${kMax} in flight <= 1/5 of SDK`, value: fmt(cpuAtMax, 3), pass: cpuAtMax <= 0.2 });
    const tSdk = ratio(row('keel', kMax)?.calls_per_s, row('sdk', kMax)?.calls_per_s);
    lines.push(`  keel throughput@${kMax} vs SDK: ${fmt(tSdk, 2)}x`);
    goals.push({ goal: `keel throughput@${kMax} >= 3x SDK`, value: `${fmt(tSdk, 2)}x`, pass: tSdk >= 3 });
  }
  if (opts.servers.includes('keel') && opts.servers.includes('floor')) {
    const tFloor = ratio(row('keel', kMax)?.calls_per_s, row('floor', kMax)?.calls_per_s);
    if (!opts.servers.includes('sdk')) { lines.push(''); lines.push('ratios:'); }
    lines.push(`  keel throughput@${kMax} vs floor: ${fmt(tFloor, 2)}`);
    goals.push({ goal: `keel throughput@${kMax} >= 1/2 of floor`, value: fmt(tFloor, 2), pass: tFloor >= 1 / 2 });
  }
  if (opts.servers.includes('keel')) {
    const k1 = row('keel', kMin);
    goals.push({ goal: `keel p99 latency @${kMin} in flight < 1 ms`, value: `${fmt(k1.p99_us, 1)} us`, pass: k1.p99_us < 1000 });
    const keelRows = results.filter((r) => r.server === 'keel');
    const rss = Math.max(...keelRows.map((r) => r.peak_rss_mb));
    goals.push({ goal: 'keel peak RSS <= 20 MB (worst row)', value: `${fmt(rss, 1)} MB`, pass: rss <= 20 });
    const init = Math.max(...keelRows.map((r) => r.init_ms));
    goals.push({ goal: 'keel time to initialize < 20 ms (worst run)', value: `${fmt(init, 1)} ms`, pass: init < 20 });
  }
  if (goals.length) {
    lines.push('');
    lines.push('goals (information only; the bench asserts nothing):');
    const gw = Math.max(...goals.map((g) => g.goal.length));
    for (const g of goals) lines.push(`  ${g.pass ? 'PASS' : 'MISS'}  ${g.goal.padEnd(gw)}  ${g.value}`);
  }
  return { text: lines.join('\n') + '\n', goals };
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes('--startup')) {
    const { main: startupMain } = await import('./startup_bench.mjs');
    return startupMain(argv);
  }
  if (argv.includes('--command')) {
    const { main: commandMain } = await import('./command_bench.mjs');
    return commandMain(argv);
  }
  if (argv.includes('--wrap')) {
    const { main: wrapMain } = await import('./wrap_bench.mjs');
    return wrapMain(argv);
  }
  if (argv.includes('--ledger')) {
    const { main: ledgerMain } = await import('./ledger_bench.mjs');
    return ledgerMain(argv);
  }
  if (argv.includes('--cancel') || argv.includes('--flood')) {
    const { main: coordinatorMain } = await import('./coordinator_bench.mjs');
    return coordinatorMain(argv);
  }
  const opts = parseArgs(argv);
  const results = [];
  const tStart = performance.now();
  const bgBefore = await backgroundLoad();
  try {
    const specs = serverSpecs(opts);
    const runs = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      for (const spec of specs) {
        for (const K of opts.inflight) {
          log(`${opts.reps > 1 ? `rep ${rep}/${opts.reps}: ` : ''}${spec.name}, ${K} in flight ...`);
          const r = await runOne(spec, K, opts);
          log(`  ${fmt(r.calls_per_s)} calls/s, p99 ${fmt(r.p99_us, 1)} us`);
          runs.push(r);
        }
      }
    }
    for (const spec of specs) {
      for (const K of opts.inflight) {
        results.push(medianRow(runs.filter((r) => r.server === spec.name && r.inflight === K)));
      }
    }
  } catch (e) {
    if (e instanceof ServerFailed) die(`a server failed to run: ${e.message}`, 1);
    throw e;
  }
  const bgAfter = await backgroundLoad();
  const background = { before_cores: bgBefore, after_cores: bgAfter, loadavg: readFileSync('/proc/loadavg', 'utf8').trim() };
  const { text, goals } = report(results, opts, background);
  if (opts.json) {
    process.stdout.write(JSON.stringify({
      calls: opts.calls, warmup: opts.warmup, reps: opts.reps, inflight: opts.inflight, cpus: cpus().length, clk_tck: CLK_TCK,
      note: 'driver and servers share the CPUs; each (server, in-flight) row uses a fresh server process',
      background_load: background,
      results, goals,
    }, null, 2) + '\n');
  } else {
    process.stdout.write(text);
  }
  log(`done in ${fmt((performance.now() - tStart) / 1000, 1)} s`);
}

await main();
