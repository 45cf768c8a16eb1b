// Driver for scripts/bench_report: runs every mode of scripts/bench with --json, one after
// the other (never two at once), and writes one Markdown report with the machine, the
// figures, the ratio against the peer measured in the same run, and each goal with PASS or
// MISS. The goals and their verdicts are the benches' own (the `goals` array of each mode's
// JSON); this script decides none of them, it only collects and lays them out.
//
// A mode that fails to run (nonzero exit, no JSON) is reported as such with the tail of its
// stderr, and the other modes still run; the exit status is then 1 (the report is written
// anyway). Missed goals do not change the exit status: like the benches, this asserts nothing.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir, cpus, totalmem } from 'node:os';
import { dirname, join, resolve, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { backgroundLoad } from './machine_load.mjs';
import { forEachArg } from './cli.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

// Busy above this much background CPU (in cores), the threshold the benches themselves use
// for their "other work was running" warning.
const BUSY_CORES = 0.2;

// Every mode of scripts/bench, in the order they run. `full` and `quick` are the mode's
// size arguments (full: the bench's own defaults, as the README quotes them).
const MODES = [
  {
    id: 'throughput', args: [],
    title: 'Throughput, latency, CPU and memory vs the official TypeScript SDK server',
    full: [], quick: ['--calls', '2000', '--warmup', '200'],
  },
  {
    id: 'startup', args: ['--startup'],
    title: 'Start-up: spawn to the initialize response',
    full: [], quick: ['--runs', '20', '--warmup', '2'],
  },
  {
    id: 'cancel', args: ['--cancel'],
    title: 'Cancel latency',
    full: [], quick: ['--iterations', '200', '--cancel-warmup', '20'],
  },
  {
    id: 'flood', args: ['--flood'],
    title: 'Slow consumer: memory under a progress flood with the reader paused',
    full: [], quick: ['--calls', '10000,100000'],
  },
  {
    id: 'ledger', args: ['--ledger'],
    title: 'Ledger: exactly-once mutations vs raw SQLite commits',
    full: [], quick: ['--calls', '300', '--warmup', '30', '--replays', '3000', '--replay-warmup', '200',
      '--raw-commits', '400', '--raw-warmup', '20'],
  },
  {
    id: 'command', args: ['--command'],
    title: 'Command-backed tool overhead vs spawning the command directly',
    full: [], quick: ['--calls', '200', '--warmup', '20', '--block', '50', '--tp-block', '100'],
  },
];

const USAGE = `usage: scripts/bench_report [--quick] [--keel PATH] [--out FILE] [--modes LIST] [--json-dir DIR] [--from-json DIR]
Runs every scripts/bench mode with --json (${MODES.map((m) => m.id).join(', ')}) one after the other and
writes a Markdown report: the machine, each bench's figures, the ratio to the peer measured in
the same run, and each goal with PASS/MISS (the benches' own verdicts), with a summary on top.
  --quick         small sizes, a smoke run of the pipeline (about 2-3 minutes; figures indicative only)
  --keel PATH     keel binary (default $KEEL_BINARY or build/keel)
  --out FILE      the report (default docs/benchmarks.md; with --quick, build/benchmarks-quick.md)
  --modes LIST    comma-separated subset of the modes (default all)
  --json-dir DIR  also keep each mode's JSON output there (<mode>.json)
  --from-json DIR run nothing: lay out the <mode>.json files a --json-dir run kept (the machine section
                  and the load figures outside the benches' own are today's, not the run's)
A full run takes about 4-7 minutes on 2 cores. Progress goes to stderr. Exit 0 when every
mode ran (whatever the goals say), 1 when one failed to run (the report says which), 2 on usage.`;

function die(msg, code = 2) {
  process.stderr.write(`bench_report: ${msg}\n`);
  process.exit(code);
}
const log = (msg) => process.stderr.write(`bench_report: ${msg}\n`);

function parseArgs(argv) {
  const o = {
    quick: false,
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    out: null,
    modes: MODES.map((m) => m.id),
    jsonDir: null,
    fromJson: null,
  };
  forEachArg(argv, USAGE, die, (a, val) => {
    switch (a) {
      case '--quick': o.quick = true; break;
      case '--keel': o.keel = resolve(val()); break;
      case '--out': o.out = resolve(val()); break;
      case '--modes': o.modes = val().split(','); break;
      case '--json-dir': o.jsonDir = resolve(val()); break;
      case '--from-json': o.fromJson = resolve(val()); break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  for (const m of o.modes) if (!MODES.some((x) => x.id === m)) die(`unknown mode: ${m} (modes: ${MODES.map((x) => x.id).join(', ')})`);
  o.out ??= o.quick ? join(repo, 'build', 'benchmarks-quick.md') : join(repo, 'docs', 'benchmarks.md');
  if (!existsSync(o.keel)) die(`no keel binary at ${o.keel} (run scripts/build, or pass --keel)`, 1);
  return o;
}

// ---------------------------------------------------------------------------------------
// the machine

const sh = (cmd, args) => {
  try { return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { return null; }
};

function machine(o) {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown';
  const memKB = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? NaN);
  let os = null;
  try { os = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? null; } catch { /* none */ }
  let sdk = null;
  try { sdk = JSON.parse(readFileSync(join(repo, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version; } catch { /* none */ }
  const bin = readFileSync(o.keel);
  const st = statSync(o.keel);
  // Changes to the tree other than the report itself.
  const outRel = relative(repo, o.out);
  const dirty = (sh('git', ['-C', repo, 'status', '--porcelain']) ?? '').split('\n')
    .filter((l) => l.trim() && l.slice(3) !== outRel);
  return {
    cpu_model: model,
    cores: cpus().length,
    memory_gib: Number.isFinite(memKB) ? memKB / 1048576 : totalmem() / 2 ** 30,
    kernel: sh('uname', ['-srm']),
    os,
    virtualization: sh('systemd-detect-virt', []),
    tmp_fs: sh('findmnt', ['-no', 'FSTYPE', '-T', tmpdir()]) ?? sh('stat', ['-f', '-c', '%T', tmpdir()]),
    gxx: sh('g++', ['--version'])?.split('\n')[0] ?? null,
    cc: sh('cc', ['--version'])?.split('\n')[0] ?? null,
    node: process.version,
    sdk_version: sdk,
    keel_version: sh(o.keel, ['--version']),
    keel_binary: o.keel,
    keel_binary_sha256: createHash('sha256').update(bin).digest('hex').slice(0, 16),
    keel_binary_mtime: st.mtime.toISOString(),
    keel_binary_mb: st.size / 1048576,
    commit: sh('git', ['-C', repo, 'rev-parse', '--short', 'HEAD']),
    commit_subject: sh('git', ['-C', repo, 'log', '-1', '--format=%s']),
    uncommitted_changes: dirty.length,
  };
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim().split(' ').slice(0, 3).join(' ');

// Why a goal is missed, when the cause is known and measured; keyed by the goal's text.
// A missed goal without an entry is listed in the summary without a reason.
const MISS_REASONS = [
  [/CPU per call|of floor/,
    '**CPU per call, throughput against the floor.** Every call crosses from the event loop to a ' +
    'worker and back, as the design card requires: tools never run on the loop thread. Each ' +
    'crossing may wake a sleeping thread (several µs on this VM), and answers come back in smaller ' +
    'groups than the floor\'s, which answers on the thread that read the line, so the driver pays ' +
    'more per call too. Busy-waiting workers and holding the write for more results measured no ' +
    'better (docs/benchmarks.md §1, "Batched hand-offs"); the SDK server answers on its one thread.'],
  [/initialize/,
    '**Start-up under 20 ms.** The time is taken from Node\'s `spawn()` call, which alone costs ' +
    'about 6 ms here; the floor, a C program that answers one line, needs about 8 ms p50. keel ' +
    'adds its dynamic libraries (libstdc++, spdlog, fmt, SQLite: page faults cost about 35 µs each ' +
    'on this VM), opening the `--db` (WAL, schema check, kill switch, unsettled keys and tasks) and ' +
    'starting its worker and task-store threads; on a new file, a dozen fsyncs for the migrations.'],
  [/new-key mutations/,
    '**New-key mutations against raw commits.** The goal holds while fsync dominates a commit; on a ' +
    'fast disk keel\'s own work per mutation dominates — it writes about three times the pages of ' +
    'the raw row (the ledger row, the account, the charge). Group commit (several keyed mutations ' +
    'under one fsync) is the known way past that; it is not built.'],
];

function missReason(goal) {
  const hit = MISS_REASONS.find(([re]) => re.test(goal.goal));
  return hit ? hit[1] : null;
}

// ---------------------------------------------------------------------------------------
// running the modes

function runMode(mode, o) {
  const args = [join(here, 'bench.mjs'), ...mode.args, ...(o.quick ? mode.quick : mode.full), '--keel', o.keel, '--json'];
  const shown = ['scripts/bench', ...args.slice(1)].map((a) => (a === o.keel ? '<keel>' : a)).join(' ');
  log(`${mode.id}: ${shown}`);
  return new Promise((res) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', errTail = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      process.stderr.write(d);
      errTail = (errTail + d).slice(-3000);
    });
    child.once('error', (e) => res({ mode, command: shown, ok: false, error: `spawn failed: ${e.message}`, seconds: 0 }));
    child.once('close', (code, signal) => {
      const seconds = (performance.now() - t0) / 1000;
      if (code !== 0) {
        res({ mode, command: shown, ok: false, seconds, error: `exit code ${code}${signal ? `, signal ${signal}` : ''}`, stderr: errTail });
        return;
      }
      try {
        res({ mode, command: shown, ok: true, seconds, data: JSON.parse(out) });
      } catch (e) {
        res({ mode, command: shown, ok: false, seconds, error: `no JSON on stdout (${e.message})`, stderr: errTail });
      }
    });
  });
}

// A mode's output kept by an earlier --json-dir run (--from-json).
function readSaved(mode, o) {
  const file = join(o.fromJson, `${mode.id}.json`);
  const shown = ['scripts/bench', ...mode.args, ...(o.quick ? mode.quick : mode.full), '--keel', '<keel>', '--json'].join(' ');
  try {
    return { mode, command: shown, ok: true, seconds: NaN, data: JSON.parse(readFileSync(file, 'utf8')) };
  } catch (e) {
    return { mode, command: shown, ok: false, seconds: NaN, error: `no saved output (${e.message})` };
  }
}

// ---------------------------------------------------------------------------------------
// Markdown

function fmt(n, d = 0) {
  return typeof n === 'number' && Number.isFinite(n) ? n.toFixed(d) : 'n/a';
}
const x = (n, d = 2) => `${fmt(n, d)}x`;
const clip = (str, n) => (str.length > n ? `${str.slice(0, n - 1)}…` : str);

function table(head, rows, align) {
  const a = align ?? head.map((_, i) => (i === 0 ? 'l' : 'r'));
  const esc = (c) => String(c).replace(/\|/g, '\\|');
  return [
    `| ${head.map(esc).join(' | ')} |`,
    `|${a.map((c) => (c === 'r' ? '---:' : '---')).join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

function goalsTable(goals) {
  return table(['goal', 'measured', 'result'], goals.map((g) => [g.goal, g.value, g.pass ? 'PASS' : '**MISS**']), ['l', 'l', 'l']);
}

function bgText(bg) {
  if (!bg) return '';
  return `background CPU use (no bench running) ${fmt(bg.before_cores, 2)} cores before, ${fmt(bg.after_cores, 2)} after; ` +
    `loadavg at the end ${bg.loadavg.split(' ').slice(0, 3).join(' ')}`;
}

// Per mode: { method, body (Markdown), ratios [[what, value]] }.
const SECTIONS = {
  throughput(d) {
    const row = (s, k) => d.results.find((r) => r.server === s && r.inflight === k);
    const name = { keel: 'keel', sdk: 'TS SDK server', floor: 'floor (C)' };
    const body = table(['server', 'in flight', 'calls/s', 'p50 µs', 'p99 µs', 'CPU µs/call', 'peak RSS MB', 'initialize ms'],
      d.results.map((r) => [name[r.server] ?? r.server, r.inflight, fmt(r.calls_per_s), fmt(r.p50_us, 1), fmt(r.p99_us, 1),
        fmt(r.cpu_us_per_call, 1), fmt(r.peak_rss_mb, 1), fmt(r.init_ms, 1)]));
    const ratios = [];
    for (const k of d.inflight) {
      const kr = row('keel', k), sr = row('sdk', k), fr = row('floor', k);
      if (kr && sr) {
        ratios.push([`keel / SDK calls/s, ${k} in flight`, x(kr.calls_per_s / sr.calls_per_s), true]);
        ratios.push([`keel / SDK CPU per call, ${k} in flight`, fmt(kr.cpu_us_per_call / sr.cpu_us_per_call, 3), true]);
        ratios.push([`keel / SDK p99 latency, ${k} in flight`, fmt(kr.p99_us / sr.p99_us, 2)]);
      }
      if (kr && fr) ratios.push([`keel / floor calls/s, ${k} in flight`, fmt(kr.calls_per_s / fr.calls_per_s, 2), k === Math.max(...d.inflight)]);
    }
    const kMax = Math.max(...d.inflight);
    const kr = row('keel', kMax), sr = row('sdk', kMax);
    if (kr && sr) ratios.push([`keel / SDK peak RSS, ${kMax} in flight`, fmt(kr.peak_rss_mb / sr.peak_rss_mb, 3), true]);
    return {
      method: `${d.calls} \`echo\` calls over one stdio connection after ${d.warmup} warm-up calls, exactly K in flight, ` +
        'a fresh server process per row; the peers are the official TypeScript SDK server (`McpServer` + ' +
        '`StdioServerTransport`) and a C program that answers each line with a canned response (the floor: the pipe ' +
        'and the process alone). CPU is the server\'s utime+stime over the measured calls; initialize ms is spawn to ' +
        'the initialize response. The driver (Node) shares the cores with the server.',
      body, ratios,
    };
  },

  startup(d) {
    const body = table(['kind', 'runs', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'spawn() p50 ms', 'RSS at initialize MB', 'exit after EOF p50 ms'],
      Object.values(d.results).map((r) => [r.kind, r.runs, fmt(r.init_ms.p50, 2), fmt(r.init_ms.p90, 2), fmt(r.init_ms.p99, 2),
        fmt(r.init_ms.max, 2), fmt(r.spawn_ms.p50, 2), fmt(r.rss_at_init_mb.p50, 1), fmt(r.exit_after_eof_ms.p50, 2)]));
    const ratios = [];
    for (const k of ['keel-fresh-db', 'keel-existing-db']) {
      const s = d.ratios[`sdk_over_${k}_p50`], f = d.ratios[`${k}_minus_floor_p50_ms`];
      if (s !== undefined) ratios.push([`SDK p50 / ${k} p50`, x(s, 1), true]);
      if (f !== undefined) ratios.push([`${k} p50 - floor p50 (keel's own start-up)`, `${fmt(f, 2)} ms`]);
    }
    return {
      method: `Time from \`spawn()\` to the \`initialize\` response line, ${d.runs} runs of each kind after ${d.warmup} ` +
        'unrecorded rounds, the kinds taking turns. keel-fresh-db: a new `--db` file each run (created and migrated at ' +
        'start-up: each migration step commits on its own, about a dozen fsyncs, so this kind depends on the disk); ' +
        'keel-existing-db: the same migrated file every run (no fsync before it answers). The peers, started the same way: the official ' +
        'TypeScript SDK server and the C floor (spawn plus one pipe round trip, no start-up work). The time includes ' +
        'Node\'s `spawn()` call (its own column).',
      body, ratios,
    };
  },

  cancel(d) {
    const c = d.cancel_plus_echo_ms, b = d.baseline_echo_ms, df = d.pairwise_difference_ms;
    const body = table(['ms', 'p50', 'p90', 'p99', 'max'], [
      ['cancel + echo on the freed slot', fmt(c.p50, 3), fmt(c.p90, 3), fmt(c.p99, 3), fmt(c.max, 3)],
      ['baseline echo on a free worker', fmt(b.p50, 3), fmt(b.p90, 3), fmt(b.p99, 3), fmt(b.max, 3)],
      ['difference, pairwise', fmt(df.p50, 3), fmt(df.p90, 3), fmt(df.p99, 3), fmt(df.max, 3)],
    ]) + `\n\nResponses for cancelled ids: ${d.responses_for_cancelled_ids} of ${d.cancelled_ids} cancelled. ` +
      `Samples of 5 ms or more: cancel + echo ${d.cancel_plus_echo_over_5ms}, baseline ${d.baseline_echo_over_5ms} (of ${d.iterations}).`;
    return {
      method: `--workers ${d.workers}, every worker busy with a \`sleep\` call; ${d.iterations} times (after ${d.warmup} ` +
        'unrecorded), one write carries the cancel of the oldest running sleep and an `echo` call that can only run on ' +
        'the slot the cancel frees, so cancel + echo bounds cancel-to-free plus one round trip. The peer is keel ' +
        'itself: an echo round trip on a free worker right after, same process, same conditions.',
      body,
      ratios: [['cancel + echo p50 / baseline echo p50', x(c.p50 / b.p50)], ['cancel + echo p99 / baseline echo p99', x(c.p99 / b.p99), true]],
    };
  },

  flood(d) {
    const r0 = d.runs[0];
    const body = table(['N calls', 'peak RSS MB', 'writer blocked', 'total s', 'ok', 'server_busy', 'other errors',
      'progress notifications', 'duplicates', 'every id once'],
    d.runs.map((r) => [r.N, fmt(r.peak_rss_mb, 1), r.paused.writer_blocked ? 'yes' : 'no', fmt(r.total_ms / 1000, 2),
      r.results_ok, r.server_busy, r.other_errors, r.progress_notifications, r.duplicates, r.every_id_exactly_once ? 'yes' : '**NO**']));
    const ratios = [];
    if (d.runs.length > 1) {
      const lo = d.runs.reduce((a, b) => (b.N < a.N ? b : a)), hi = d.runs.reduce((a, b) => (b.N > a.N ? b : a));
      ratios.push([`peak RSS N=${hi.N} / N=${lo.N} (calls ${fmt(hi.N / lo.N)}x)`, fmt(hi.peak_rss_mb / lo.peak_rss_mb, 2), true]);
    }
    const blocked = d.runs.filter((r) => r.paused.writer_blocked);
    if (blocked.length > 1 && blocked.length < d.runs.length) {
      const lo = blocked.reduce((a, b) => (b.N < a.N ? b : a)), hi = blocked.reduce((a, b) => (b.N > a.N ? b : a));
      ratios.push([`peak RSS N=${hi.N} / N=${lo.N}, runs that reached the bound`, fmt(hi.peak_rss_mb / lo.peak_rss_mb, 2), true]);
    }
    let body2 = body;
    const unblocked = d.runs.filter((r) => !r.paused.writer_blocked);
    if (unblocked.length && blocked.length) {
      body2 += `\n\nA run whose writer never blocked (N=${unblocked.map((r) => r.N).join(', ')}) had all of its output fit ` +
        'under the outbox bound, so its peak RSS is the memory for all of that output, not the bound; the "all runs" ' +
        'flatness goal compares it with runs that reached the bound, so its verdict says more about the choice of N than ' +
        'about keel. ' +
        'The issue\'s goal is the 64 MB one.';
    }
    return {
      method: `N \`progress\` calls (${r0.steps} steps each, with a progress token) written while keel's stdout is not ` +
        `read, then read until every id is answered; a fresh keel per N, --max-inflight ${r0.max_inflight}, ` +
        `--outbox-bytes ${r0.outbox_bytes}. Peak RSS is keel's VmHWM at the end. "writer blocked": keel stopped ` +
        'reading stdin while the reader was paused (the outbox bound held). No peer: the figure is against the ' +
        'goal, and against itself as N grows.',
      body: body2, ratios,
    };
  },

  ledger(d) {
    const h = d.raw.halves;
    const rows = [
      ...h.map((y, i) => [`raw SQLite, ${i === 0 ? 'before' : 'after'} keel`, 1, y.commits, fmt(y.commits_per_s), fmt(y.p50_us / 1000, 2),
        fmt(y.p99_us / 1000, 2), '', '']),
      ['raw SQLite, pooled', 1, d.raw.commits, fmt(d.raw.commits_per_s), '', '', '', ''],
      ...d.new_keys.map((y) => ['keel, new key', y.K, y.calls, fmt(y.per_s), fmt(y.latency_ms.p50, 2), fmt(y.latency_ms.p99, 2),
        fmt(y.keel_cpu_us_per_call), fmt(y.keel_peak_rss_mb, 1)]),
      ['keel, replay', d.replays.K, d.replays.calls, fmt(d.replays.per_s), fmt(d.replays.latency_ms.p50, 3),
        fmt(d.replays.latency_ms.p99, 3), fmt(d.replays.keel_cpu_us_per_call, 1), fmt(d.replays.keel_peak_rss_mb, 1)],
    ];
    const body = table(['what', 'in flight', 'calls', 'per s', 'p50 ms', 'p99 ms', 'keel CPU µs/call', 'keel peak RSS MB'], rows) +
      `\n\nTemp dir on ${d.fs_type}; SQLite ${h[0].sqlite_version}, journal_mode=${h[0].journal_mode}, ` +
      `synchronous=${h[0].synchronous}${h[0].synchronous === 2 ? ' (FULL)' : ''}; keel workers: ${d.workers}.`;
    const best = Math.max(...d.new_keys.map((y) => y.per_s));
    const ratios = d.new_keys.map((y) => [`keel new keys/s, ${y.K} in flight / raw commits/s`, fmt(y.per_s / d.raw.commits_per_s, 2),
      y.per_s === best]);
    ratios.push(['keel replays/s / raw commits/s', x(d.replays.per_s / d.raw.commits_per_s, 1)]);
    return {
      method: 'The raw durable commit rate of keel\'s SQLite settings (WAL, synchronous=FULL, one connection, ' +
        '`BEGIN IMMEDIATE; SELECT; INSERT; COMMIT`, a small C program) in two halves around keel\'s runs, on the same ' +
        'filesystem; then `charge_account` through keel with a fresh idempotency key per call (a fresh keel per ' +
        'in-flight count), then replays of one key (plain reads, no fsync). The peer is the raw commit rate.',
      body, ratios,
    };
  },

  command(d) {
    const s = d.sequential, t = d.throughput, tr = d.traced, K = d.options.inflight;
    const rows = [
      ...Object.values(s).map((y) => [y.kind, 1, y.calls, fmt(y.per_s), fmt(y.latency_ms.p50, 3), fmt(y.latency_ms.p99, 3)]),
      ...Object.values(t).map((y) => [y.kind, K, y.calls, fmt(y.per_s), fmt(y.latency_ms.p50, 3), fmt(y.latency_ms.p99, 3)]),
    ];
    let body = table(['kind', 'in flight', 'calls', 'calls/s', 'p50 ms', 'p99 ms'], rows);
    if (tr) {
      body += '\n\n' + table(['traced keel, per call', 'p50 ms', 'p99 ms'], [
        ['round trip', fmt(tr.round_trip_ms.p50, 3), fmt(tr.round_trip_ms.p99, 3)],
        ['keel\'s attempt (spawn to reap)', fmt(tr.attempt_ms.p50, 3), fmt(tr.attempt_ms.p99, 3)],
        ['round trip - attempt (keel around the child)', fmt(tr.round_trip_minus_attempt_ms.p50, 3), fmt(tr.round_trip_minus_attempt_ms.p99, 3)],
      ]);
    }
    const ratios = [
      ['p50 added latency: true_cmd p50 - direct-min p50', `${fmt(d.added_latency_p50_ms, 3)} ms`, true],
      ['p50 the process in keel: true_cmd p50 - echo p50', `${fmt(s.true_cmd.latency_ms.p50 - s.echo.latency_ms.p50, 3)} ms`],
      [`calls/s at ${K} in flight: true_cmd / direct-min`, x(d.throughput_ratio), true],
    ];
    if (tr) ratios.splice(1, 0, ['p50 keel around the child (traced round trip - attempt)', `${fmt(tr.round_trip_minus_attempt_ms.p50, 3)} ms`, true]);
    if (t['direct-pipes']) ratios.push([`calls/s at ${K} in flight: true_cmd / direct-pipes`, x(t.true_cmd.per_s / t['direct-pipes'].per_s)]);
    return {
      method: 'A catalog tool `true_cmd` (`run.command ["/bin/true"]`) through keel against Node spawning `/bin/true` ' +
        'itself (direct-min: stdio ignored; direct-pipes: pipes, environment and process group as keel sets them ' +
        'up), and keel\'s built-in `echo` (the protocol alone); 1 in flight interleaved in blocks, then ' +
        `${K} in flight. Node's spawn is fork+exec on the driver thread, keel's is posix_spawn on a worker, so a ` +
        'second keel with `--trace-file` gives keel\'s own attempt time per call, and round trip minus attempt is ' +
        'what keel adds around the child, whatever the peer costs.',
      body, ratios,
    };
  },
};

// A mode's section, or null (with r.layoutError) when its JSON is not shaped as expected.
function section(r) {
  try {
    return SECTIONS[r.mode.id](r.data);
  } catch (e) {
    r.layoutError = e.message;
    return null;
  }
}

function report(o, m, runs, t) {
  const L = [];
  const date = new Date(t.startedAt).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const ran = runs.filter((r) => r.ok);
  const failed = runs.filter((r) => !r.ok);
  const skipped = MODES.filter((x0) => !o.modes.includes(x0.id));
  const bgs = [t.bgBefore, t.bgAfter, ...ran.flatMap((r) => (r.data.background_load
    ? [r.data.background_load.before_cores, r.data.background_load.after_cores] : []))].filter(Number.isFinite);
  const worstBg = Math.max(...bgs);
  const busy = !(worstBg < BUSY_CORES);

  L.push('# keel benchmarks');
  L.push('');
  const when = o.fromJson ? `laid out on ${date} from the saved output in ${o.fromJson}` : `on ${date} (${fmt(t.seconds / 60, 1)} minutes)`;
  L.push(`Written by \`scripts/bench_report${o.quick ? ' --quick' : ''}\` ${when}. ` +
    'Every figure below comes from this one run, one benchmark after another on the same machine; each ratio ' +
    'sets keel against a peer measured in the same benchmark of the same run. The goals are the ones the issues ' +
    'set, and PASS/MISS is the verdict each bench script prints itself. Re-run with `scripts/bench_report`; ' +
    'each section gives its `scripts/bench` command.');
  L.push('');
  if (o.quick) {
    L.push('> **Quick run** (`--quick`): small sizes to check the pipeline; the figures are indicative only and ' +
      'tails (p99, max) rest on few samples.');
    L.push('');
  }
  if (busy) {
    L.push(`> **The machine was not idle.** These figures come from a shared ${m.cores}-core machine on which other ` +
      `work was running: background CPU use, sampled with no bench running, reached ${fmt(worstBg, 2)} cores ` +
      `(idle means under ${BUSY_CORES}); loadavg ${t.loadBefore} before the run. Absolute rates and above all ` +
      'the tails (p99, max) are disturbed. The start-up, cancel and command benches interleave their sides, so ' +
      'their ratios hold up better; the throughput bench runs its rows one after another, so a burst of other ' +
      'work can land on one row alone and skew the ratios built on it. Figures to quote should come from a ' +
      're-run on a quiet machine.');
    L.push('');
  }

  L.push('## Summary');
  L.push('');
  const goalRows = [];
  for (const r of runs) {
    const title = `${r.mode.id}`;
    if (!r.ok) { goalRows.push([title, 'the benchmark did not run', r.error, '**FAILED TO RUN**']); continue; }
    for (const g of r.data.goals ?? []) goalRows.push([title, g.goal, g.value, g.pass ? 'PASS' : '**MISS**']);
  }
  L.push(table(['benchmark', 'goal', 'measured', 'result'], goalRows, ['l', 'l', 'l', 'l']));
  L.push('');
  const allGoals = ran.flatMap((r) => r.data.goals ?? []);
  const met = allGoals.filter((g) => g.pass).length;
  let s = `**${met} of ${allGoals.length} goals met**`;
  const missed = allGoals.filter((g) => !g.pass);
  if (missed.length) s += `; missed: ${missed.map((g) => g.goal).join('; ')}`;
  s += '.';
  if (failed.length) s += ` **Failed to run: ${failed.map((r) => r.mode.id).join(', ')}** (see their sections).`;
  if (skipped.length) s += ` Not run (--modes): ${skipped.map((x0) => x0.id).join(', ')}.`;
  L.push(s);
  L.push('');
  const reasons = [...new Set(missed.map(missReason).filter(Boolean))];
  if (reasons.length) {
    L.push('Why the missed goals are missed (what was measured to find out; the sections have the figures):');
    L.push('');
    for (const r of reasons) L.push(`- ${r}`);
    L.push('');
  }
  const headline = [];
  for (const r of ran) {
    const sec = section(r);
    if (sec) for (const [what, v, top] of sec.ratios) if (top) headline.push([r.mode.id, what, v]);
  }
  if (headline.length) {
    L.push('Headline ratios to the peers measured in the same run (each section has them all):');
    L.push('');
    L.push(table(['benchmark', 'ratio', 'value'], headline, ['l', 'l', 'r']));
    L.push('');
  }

  L.push('## Machine');
  L.push('');
  const mrows = [
    ['CPU', `${m.cpu_model}, ${m.cores} core(s) as the OS sees them`],
    ['memory', `${fmt(m.memory_gib, 1)} GiB`],
    ['kernel', m.kernel ?? 'unknown'],
    ['OS', m.os ?? 'unknown'],
  ];
  if (m.virtualization && m.virtualization !== 'none') mrows.push(['virtualization', m.virtualization]);
  mrows.push(
    ['temp dir filesystem', `${m.tmp_fs ?? 'unknown'} (the ledger bench's databases and keel's --db live there)`],
    ['g++', m.gxx ?? 'not found'],
    ['cc (floor, raw SQLite program)', m.cc ?? 'not found'],
    ['node (driver, SDK server)', m.node],
    ['@modelcontextprotocol/sdk', m.sdk_version ?? 'not installed'],
    ['keel', `${m.keel_version ?? '?'}; binary ${m.keel_binary} (${fmt(m.keel_binary_mb, 1)} MB, modified ${m.keel_binary_mtime}, ` +
      `sha256 ${m.keel_binary_sha256}…)`],
    ['commit of this tree', `${m.commit} (${clip(m.commit_subject ?? '', 72)})` +
      `${m.uncommitted_changes ? `, with ${m.uncommitted_changes} uncommitted change(s)` : ''}; the bench scripts are this ` +
      'tree\'s, the binary\'s own commit is not recorded (`keel --version` prints none)'],
    ['loadavg (1, 5, 15 min)', `${t.loadBefore} before the run, ${t.loadAfter} after (after includes the benches' own load)`],
    ['background CPU use', `${fmt(t.bgBefore, 2)} cores before the run, ${fmt(t.bgAfter, 2)} after, up to ${fmt(worstBg, 2)} ` +
      `in the samples each bench takes with nothing of its own running (idle: under ${BUSY_CORES})`],
    ['idle', busy ? '**no**: other work was running (see the note at the top)' : 'yes'],
  );
  L.push(table(['', ''], mrows, ['l', 'l']));
  L.push('');
  L.push('The driver (Node), the server under test and any child processes share these cores.');
  L.push('');

  let n = 0;
  for (const r of runs) {
    n++;
    L.push(`## ${n}. ${r.mode.title}`);
    L.push('');
    L.push(`\`${r.command}\` — ${fmt(r.seconds, 1)} s.`);
    L.push('');
    if (!r.ok) {
      L.push(`**Did not run**: ${r.error}.`);
      if (r.stderr) {
        L.push('');
        L.push('```');
        L.push(r.stderr.trimEnd().split('\n').slice(-25).join('\n'));
        L.push('```');
      }
      L.push('');
      continue;
    }
    const sec = section(r);
    if (!sec) {
      L.push(`**Its JSON could not be laid out** (${r.layoutError}); the goals as the bench printed them follow.`);
      L.push('');
    } else {
      L.push(sec.method);
      L.push('');
      L.push(sec.body);
      L.push('');
      if (sec.ratios.length) {
        L.push(table(['ratio to the peer', 'value'], sec.ratios.map(([what, v]) => [what, v]), ['l', 'r']));
        L.push('');
      }
    }
    L.push(goalsTable(r.data.goals ?? []));
    L.push('');
    const bg = bgText(r.data.background_load);
    if (bg) { L.push(`Machine during this benchmark: ${bg}.`); L.push(''); }
  }
  for (const x0 of skipped) {
    n++;
    L.push(`## ${n}. ${x0.title}`);
    L.push('');
    L.push('Not run (left out with --modes).');
    L.push('');
  }
  return L.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const startedAt = Date.now();
  const t0 = performance.now();
  const loadBefore = loadavg();
  const bgBefore = await backgroundLoad(1000);
  const m = machine(o);
  log(`${o.quick ? 'quick' : 'full'} run of ${o.modes.join(', ')}; keel ${o.keel}; report -> ${o.out}`);
  log(`loadavg ${loadBefore}, background CPU ${fmt(bgBefore, 2)} cores`);
  const runs = [];
  for (const mode of MODES.filter((x0) => o.modes.includes(x0.id))) {
    const r = o.fromJson ? readSaved(mode, o) : await runMode(mode, o);
    log(`${mode.id}: ${r.ok ? 'done' : `FAILED (${r.error})`} in ${fmt(r.seconds, 1)} s`);
    if (o.jsonDir && r.ok && !o.fromJson) {
      mkdirSync(o.jsonDir, { recursive: true });
      writeFileSync(join(o.jsonDir, `${mode.id}.json`), JSON.stringify(r.data, null, 2) + '\n');
    }
    runs.push(r);
  }
  const bgAfter = await backgroundLoad(1000);
  const loadAfter = loadavg();
  const text = report(o, m, runs, { startedAt, seconds: (performance.now() - t0) / 1000, loadBefore, loadAfter, bgBefore, bgAfter });
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(o.out, text + '\n');
  const failed = runs.filter((r) => !r.ok);
  const goals = runs.filter((r) => r.ok).flatMap((r) => r.data.goals ?? []);
  log(`wrote ${o.out}: ${goals.filter((g) => g.pass).length} of ${goals.length} goals met` +
    `${failed.length ? `; FAILED TO RUN: ${failed.map((r) => r.mode.id).join(', ')}` : ''}; ${fmt((performance.now() - t0) / 60000, 1)} minutes`);
  process.exit(failed.length ? 1 : 0);
}

await main();
