#!/usr/bin/env node
// The soak (issue 9 item 5): a bounded run, loopback only, of a seeded random mix of
// everything keel does — reads, keyed and unkeyed writes, restarts under faults, cancels,
// timeouts, tasks, held slots, bad input, a kill-switch window — at a steady in-flight
// level, against two keel processes sharing one --db file, with invariants checked while it
// runs and again, against the ledger, the backend tables and keel's trace, at the end.
// Usage: node scripts/soak_support/soak.mjs [--seconds 180] [--seed N] [--keel PATH]
//          [--runners 12] [--single] [--warmup S] [--rss-pct 20] [--rss-mb 5] [--keep]
// Prints a report; exits 1 on any violation (2 on bad usage). Method and figures: README.md,
// "Soak". Speaks raw JSON-RPC lines over pipes (like tests/interop/raw_keel.mjs) so it sees
// every byte keel writes and decides when each line (a cancel in particular) is written.
import { spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

// ---------------------------------------------------------------------------------------
// Options

function usage(message) {
  if (message) console.error(`soak: ${message}`);
  console.error('usage: scripts/soak [--seconds N] [--seed N] [--keel PATH] [--runners N] [--single]\n' +
    '                   [--warmup S] [--rss-pct P] [--rss-mb M] [--keep]');
  process.exit(2);
}

function parseOptions(argv) {
  const o = {
    seconds: 180, seed: null, keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    runners: 12, single: false, warmup: null, rssPct: 20, rssMb: 5, keep: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) usage(`${a} needs a non-negative number`);
      return v;
    };
    if (a === '--seconds') o.seconds = num();
    else if (a === '--seed') o.seed = Math.floor(num()) >>> 0;
    else if (a === '--keel') o.keel = resolve(argv[++i] ?? usage('--keel needs a path'));
    else if (a === '--runners') o.runners = Math.max(1, Math.floor(num()));
    else if (a === '--single') o.single = true;
    else if (a === '--warmup') o.warmup = num();
    else if (a === '--rss-pct') o.rssPct = num();
    else if (a === '--rss-mb') o.rssMb = num();
    else if (a === '--keep') o.keep = true;
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown argument ${a}`);
  }
  if (o.seconds < 10) usage('--seconds must be at least 10');
  if (o.seed === null) o.seed = randomInt(1, 2 ** 31);
  // Warm-up: SQLite page caches, worker and replacement threads, the allocator's arenas
  // and the breakers' windows fill during the first part of the run.
  if (o.warmup === null) o.warmup = Math.min(30, Math.round(o.seconds * 0.2));
  return o;
}

const opts = parseOptions(process.argv.slice(2));
if (!existsSync(opts.keel)) usage(`no keel binary at ${opts.keel} (run scripts/build, or pass --keel)`);
const HAVE_SQLITE3 = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' }).status === 0;

// ---------------------------------------------------------------------------------------
// Seeded randomness: one generator per runner, derived from --seed, so each runner's
// sequence of choices is reproducible (the interleaving of runners is up to the scheduler).

function mulberry32(a) {
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  constructor(seed) { this.next = mulberry32(seed >>> 0); }
  int(lo, hi) { return lo + Math.floor(this.next() * (hi - lo + 1)); }  // inclusive
  chance(p) { return this.next() < p; }
  pick(items) { return items[Math.floor(this.next() * items.length)]; }
  weighted(table) {  // {name: weight}
    const entries = Object.entries(table);
    let x = this.next() * entries.reduce((s, [, w]) => s + w, 0);
    for (const [name, w] of entries) { if ((x -= w) < 0) return name; }
    return entries[entries.length - 1][0];
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = performance.now();
const now = () => performance.now() - t0;  // ms since the soak started

// ---------------------------------------------------------------------------------------
// Violations and counters

const violations = new Map();  // kind -> {count, examples[]}
function violation(kind, detail) {
  let v = violations.get(kind);
  if (!v) violations.set(kind, v = { count: 0, examples: [] });
  v.count++;
  if (v.examples.length < 5) v.examples.push(typeof detail === 'string' ? detail : JSON.stringify(detail));
}
const kinds = new Map();  // scenario kind -> Map(outcome -> count)
function tally(kind, outcome) {
  let m = kinds.get(kind);
  if (!m) kinds.set(kind, m = new Map());
  m.set(outcome, (m.get(outcome) ?? 0) + 1);
}
const short = (x, n = 300) => { const s = JSON.stringify(x); return s && s.length > n ? s.slice(0, n) + '…' : s; };

// ---------------------------------------------------------------------------------------
// One keel process spoken to over its stdin/stdout.

const RELATED = 'io.modelcontextprotocol/related-task';
const REPLAYED = 'dev.keel/replayed';
const KEY_META = 'dev.keel/idempotency-key';
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const TASK_STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);
let nextId = 1;  // ids are unique across both processes, so the trace of either names one request

class Keel {
  constructor(name, args, files) {
    this.name = name;
    this.args = args;
    this.files = files;
    this.recs = new Map();         // JSON.stringify(id) -> request record (kept to the end)
    this.outstanding = new Set();  // records neither answered nor cancelled
    this.tokens = new Map();       // JSON.stringify(progressToken) -> {rec, last, task, count}
    this.taskTerminal = new Map(); // taskId -> the terminal status first seen
    this.idless = [];              // codes of error responses without an id
    this.expectedIdless = 0;
    this.rss = [];                 // [ms since start, VmRSS kB]
    this.counts = { lines: 0, responses: 0, progress: 0, taskStatus: 0, otherNotes: 0, bytes: 0, cancels: 0 };
    this.stderrTail = '';
  }

  start() {
    this.child = spawn(opts.keel, this.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.pid = this.child.pid;
    this.exit = null;
    this.exited = new Promise((res) => this.child.on('exit', (code, signal) => {
      this.exit = { code, signal, at: now() };
      res(this.exit);
    }));
    this.child.on('error', (e) => violation('spawn', `${this.name}: ${e.message}`));
    this.child.stdin.on('error', () => {});
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d) => { this.stderrTail = (this.stderrTail + d).slice(-8000); });
    let partial = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d) => {
      this.counts.bytes += d.length;
      const lines = (partial + d).split('\n');
      partial = lines.pop();
      for (const line of lines) this.onLine(line);
    });
    this.child.stdout.on('end', () => {
      if (partial !== '') violation('malformed_line', `${this.name}: output ends inside a line: ${short(partial)}`);
    });
    this.rssTimer = setInterval(() => this.sampleRss(), 1000);
    this.sampleRss();
  }

  // User + system CPU seconds so far (/proc/<pid>/stat fields 14 and 15, in clock ticks).
  cpuSeconds() {
    try {
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / 100;
    } catch { return NaN; }
  }

  sampleRss() {
    if (this.exit) return;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      if (m) this.rss.push([now(), Number(m[1])]);
    } catch { /* exited between the check and the read */ }
  }

  onLine(line) {
    this.counts.lines++;
    let msg;
    try { msg = JSON.parse(line); } catch {
      violation('malformed_line', `${this.name}: not JSON: ${short(line)}`);
      return;
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg) || msg.jsonrpc !== '2.0') {
      violation('malformed_line', `${this.name}: not a JSON-RPC 2.0 object: ${short(line)}`);
      return;
    }
    const hasId = 'id' in msg;
    if ('method' in msg) {
      if (hasId) violation('malformed_line', `${this.name}: keel sent a request: ${short(msg)}`);
      else this.onNotification(msg);
      return;
    }
    if (('result' in msg) === ('error' in msg)) {
      violation('malformed_line', `${this.name}: neither a result nor an error (or both): ${short(msg)}`);
      return;
    }
    if ('error' in msg && (!Number.isInteger(msg.error?.code) || typeof msg.error?.message !== 'string')) {
      violation('malformed_line', `${this.name}: bad error object: ${short(msg)}`);
    }
    if (!hasId) {
      if ('error' in msg) this.idless.push(msg.error.code);
      else violation('malformed_line', `${this.name}: a result without an id: ${short(msg)}`);
      return;
    }
    if (msg.id === null) violation('malformed_line', `${this.name}: "id": null: ${short(msg)}`);
    const key = JSON.stringify(msg.id);
    const rec = this.recs.get(key);
    if (!rec) {
      violation('unknown_id', `${this.name}: a response for an id never sent here (type changed?): ${short(msg)}`);
      return;
    }
    rec.answers++;
    if (rec.answers > 1) {
      violation('duplicate_response', `${this.name}: id ${key} answered ${rec.answers} times: ${short(msg)}`);
      return;
    }
    this.counts.responses++;
    rec.answeredAt = now();
    rec.msg = msg;
    this.outstanding.delete(rec);
    rec.resolve(msg);
  }

  onNotification(msg) {
    const p = msg.params ?? {};
    if (msg.method === 'notifications/progress') {
      this.counts.progress++;
      const tok = this.tokens.get(JSON.stringify(p.progressToken));
      if (!tok) {
        violation('progress_unknown_token', `${this.name}: ${short(msg)}`);
        return;
      }
      if (tok.rec.answers > 0 && !tok.task) {
        violation('progress_after_response', `${this.name}: token ${short(p.progressToken)} after its answer`);
      }
      if (!(typeof p.progress === 'number' && p.progress > tok.last)) {
        violation('progress_not_increasing', `${this.name}: ${tok.last} then ${short(p.progress)}`);
      }
      if (tok.task && !p._meta?.[RELATED]?.taskId) {
        violation('task_progress_without_related_task', `${this.name}: ${short(msg)}`);
      }
      tok.last = p.progress;
      tok.count++;
    } else if (msg.method === 'notifications/tasks/status') {
      this.counts.taskStatus++;
      if (typeof p.taskId !== 'string' || !TASK_STATUSES.has(p.status)) {
        violation('malformed_line', `${this.name}: bad task status: ${short(msg)}`);
        return;
      }
      this.noteTaskStatus(p.taskId, p.status, 'notifications/tasks/status');
    } else {
      this.counts.otherNotes++;
    }
  }

  // A terminal status never changes (TASK-1: cancelled reads cancelled at once and forever).
  noteTaskStatus(taskId, status, where) {
    const first = this.taskTerminal.get(taskId);
    if (first && first !== status) {
      violation('task_status_changed_after_terminal', `${this.name}: task ${taskId} was ${first}, then ${status} (${where})`);
    } else if (!first && TERMINAL.has(status)) {
      this.taskTerminal.set(taskId, status);
    }
  }

  write(obj) {
    if (this.exit) return;
    this.child.stdin.write(JSON.stringify(obj) + '\n');
  }

  writeRaw(line) {
    if (this.exit) return;
    this.child.stdin.write(line);
  }

  // Sends a request now; returns its record (rec.promise resolves with the response).
  request(method, params, { rng, kind, limitMs = 30000, progressToken, taskProgress = false } = {}) {
    const n = nextId++;
    // ids are numbers or decimal strings: keel must echo the exact type ("7" is not 7).
    const id = rng && rng.chance(0.3) ? String(n) : n;
    const rec = {
      id, key: JSON.stringify(id), method, tool: params?.name, task: params?.task !== undefined,
      kind, sentAt: now(), limitMs, answers: 0, cancelAt: null, msg: null, conn: this,
    };
    rec.promise = new Promise((res) => { rec.resolve = res; });
    if (progressToken !== undefined) {
      this.tokens.set(JSON.stringify(progressToken), { rec, last: -Infinity, task: taskProgress, count: 0 });
    }
    this.recs.set(rec.key, rec);
    this.outstanding.add(rec);
    this.write({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return rec;
  }

  cancel(rec, reason = 'soak') {
    this.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rec.id, reason } });
    this.counts.cancels++;
    if (rec.answers === 0 && rec.cancelAt === null) {
      rec.cancelAt = now();
      this.outstanding.delete(rec);
    }
  }

  close() {
    clearInterval(this.rssTimer);
    this.child.stdin.end();
    return this.exited;
  }
}

// The response, or null after `ms` (the watchdog reports a missing answer as a violation).
async function answer(rec, ms = 40000) {
  let timer;
  const r = await Promise.race([rec.promise, new Promise((res) => { timer = setTimeout(() => res(null), ms); })]);
  clearTimeout(timer);
  return r;
}

// ---------------------------------------------------------------------------------------
// The deployment: one database, two keel processes with different faults on the simulated
// deployment backend, a policy with short clocks so timeouts happen within seconds.

const dir = mkdtempSync(join(tmpdir(), 'keel-soak-'));
const db = join(dir, 'keel.db');
const tag = `s${opts.seed}`;

function policyFile(name, extraTools) {
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

const setupRng = new Rng(opts.seed);
// B's outage starts after this many get_deployment_job calls on B (about 1.3 a second).
const outageAfter = setupRng.int(Math.round(opts.seconds * 0.25), Math.round(opts.seconds * 0.6));
const faultsA = [
  'get_deployment_job:fail_503=3',               // the first reads meet a 503 keel retries
  'restart_deployment_job:fail_503=2',           // the first restarts too (surely not done: retried)
  'restart_deployment_job:lose_response=1000000',// then every restart here is done and its answer lost
  'lookup_deployment_operation:latency=20',
];
const faultsB = [
  'restart_deployment_job:fail_503=4',
  'restart_deployment_job:latency=150',          // a window for cancels to land in
  `get_deployment_job:start_after=${outageAfter}`,
  'get_deployment_job:sustained_503=8000',       // one 8 s outage: the breaker opens, reads come cached
];
const common = ['--test-tools', '--db', db, '--task-poll-interval', '50', '--log-level', 'warn'];
const files = (n) => ({ trace: join(dir, `trace-${n}.jsonl`), log: join(dir, `keel-${n}.log`) });
const A = new Keel('A', [...common, '--workers', '4', '--trace-file', files('A').trace, '--log-file', files('A').log,
  // A's restart answers are all lost by construction: its breaker would only cut the fault off.
  '--policy', policyFile('A', { restart_deployment_job: { breaker: { mode: 'disabled' } } }),
  ...faultsA.flatMap((f) => ['--fault', f])], files('A'));
const B = opts.single ? null : new Keel('B', [...common, '--workers', '2', '--trace-file', files('B').trace,
  '--log-file', files('B').log, '--policy', policyFile('B', {}), ...faultsB.flatMap((f) => ['--fault', f])], files('B'));
const keels = [A, B].filter(Boolean);
const route = (rng) => (B && rng.chance(0.4) ? B : A);

async function initialize(k) {
  const rec = k.request('initialize', {
    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'keel-soak', version: '1' },
  });
  const r = await answer(rec, 15000);
  if (!r?.result?.capabilities?.tasks) throw new Error(`${k.name}: initialize failed: ${short(r)}\n${k.stderrTail}`);
  k.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

// ---------------------------------------------------------------------------------------
// Helpers shared by the scenarios

const calls = { echo: 0, intent: 0, restart: 0, unkeyed: 0, flaky: 0, latch: 0, task: 0 };

function call(k, name, args, { rng, kind, meta, task, progressToken, limitMs } = {}) {
  const params = { name, arguments: args };
  if (meta || progressToken !== undefined) params._meta = { ...(meta ?? {}), ...(progressToken !== undefined ? { progressToken } : {}) };
  if (task) params.task = task;
  return k.request('tools/call', params, { rng, kind, progressToken, taskProgress: !!task, limitMs });
}

const errorType = (msg) => msg?.result?.structuredContent?.error?.type;
const textOf = (msg) => msg?.result?.content?.map((c) => c.text).join(' | ');

function expectTimeout(kind, msg, layers) {
  const e = msg?.result?.structuredContent?.error;
  if (msg?.result?.isError && e?.type === 'timeout' && layers.includes(e.layer)) return `timeout_${e.layer}`;
  return null;
}

// ---------------------------------------------------------------------------------------
// Keyed writes: each intent (tool, key, arguments) is sent 1-3 times, in sequence, at once,
// after a cancel of the previous try, as a task, or after a jam made the first try time out.

const intents = [];
let jamBusy = false;
let jamNext = 0;  // at most one jam every 10 s: B is jammed for ~2 s each time

function intentArgs(rng, tool, n) {
  const special = rng.chance(0.03);  // a final failure, stored and replayed like a result
  if (tool === 'charge_account') {
    return special ? { account: `${tag}-poor-${n}`, cents: 200000 }
      : { account: `${tag}-acct-${n % 64}`, cents: rng.int(1, 100) };
  }
  return special ? { sku: `${tag}-big-${n}`, tenant: 'ten-big', quantity: 101 }
    : { sku: `${tag}-sku-${Math.floor(n / 16)}`, tenant: `ten-${n % 4}`, quantity: rng.int(1, 3) };
}

function classifyKeyed(intent, t, msg, { probe = false } = {}) {
  if (!msg) return 'no_answer';
  if (msg.error) {
    violation('keyed_rpc_error', `${intent.key}: ${short(msg)}`);
    return 'rpc_error';
  }
  const r = msg.result;
  const sc = r.structuredContent ?? {};
  const args = t.args;
  if (!r.isError) {
    const id = intent.tool === 'charge_account' ? sc.charge_id : sc.reservation_id;
    const same = intent.tool === 'charge_account'
      ? sc.account === args.account && sc.cents === args.cents
      : sc.sku === args.sku && sc.tenant === args.tenant && sc.quantity === args.quantity;
    if (!id || !same) violation('mixed_answer', `${intent.key}: sent ${short(args)}, got ${short(sc)}`);
    if (probe) violation('mismatch_executed', `${intent.key}: other arguments under a used key ran: ${short(msg)}`);
    t.opId = id;
    t.replayed = r._meta?.[REPLAYED] === true;
    return 'ok';
  }
  const type = sc.error?.type;
  switch (type) {
    case 'insufficient_funds': case 'out_of_stock':
      t.replayed = r._meta?.[REPLAYED] === true;
      return 'final_failure';
    case 'timeout': return 'timeout';
    case 'idempotency_key_mismatch': return 'mismatch';
    case 'kill_switch': case 'server_busy': case 'ledger_busy': case 'ledger_error': case 'circuit_open':
      return 'not_run';
    default:
      violation('keyed_unexpected_answer', `${intent.key}: ${short(msg)}`);
      return `unexpected_${type}`;
  }
}

async function keyedTry(intent, k, rng, { task = false, cancelAfter = null, args = intent.args, probe = false } = {}) {
  const a = { ...args };
  let meta;
  if (rng.chance(0.3)) meta = { [KEY_META]: intent.key }; else a.idempotencyKey = intent.key;
  const t = { conn: k.name, task, args, probe, outcome: null };
  intent.tries.push(t);
  const rec = call(k, intent.tool, a, { rng, kind: 'keyed', meta, task: task ? { ttl: 30000 } : undefined });
  t.rec = rec;
  if (cancelAfter !== null) {
    await sleep(cancelAfter);
    if (rec.answers === 0) {
      k.cancel(rec);
      t.outcome = 'cancelled';  // a late answer, if the cancel lost the race, is read at the end
      return t;
    }
  }
  let msg = await answer(rec);
  if (task && msg) {
    const taskId = msg.result?.task?.taskId;
    if (!taskId) {
      // Refused before a task existed (the kill switch, too many tasks): nothing ran.
      const type = msg.error?.data?.type ?? errorType(msg);
      if (['kill_switch', 'too_many_tasks', 'server_busy', 'circuit_open'].includes(type)) t.outcome = 'not_run';
      else t.outcome = classifyKeyed(intent, t, msg);
      return t;
    }
    t.taskId = taskId;
    t.existing = msg.result._meta?.['dev.keel/existing-task'] === true;
    const res = k.request('tasks/result', { taskId }, { rng, kind: 'keyed_task_result' });
    msg = await answer(res);
    if (msg?.result && msg.result._meta?.[RELATED]?.taskId !== taskId) {
      violation('task_result_without_related_task', `${intent.key}: ${short(msg)}`);
    }
  }
  t.outcome = classifyKeyed(intent, t, msg, { probe });
  return t;
}

async function keyedIntent(rng, tool) {
  const n = ++calls.intent;
  const intent = { tool, key: `${tag}-${tool === 'charge_account' ? 'ch' : 'rs'}-${n}`, args: intentArgs(rng, tool, n), tries: [] };
  intents.push(intent);
  let mode = rng.weighted({ sequential: 35, concurrent: 20, cancel_then_retry: 20, task: 15, jam: 5, timeout_then_retry: 5 });
  if (mode === 'jam' && (!B || jamBusy || now() < jamNext)) mode = 'sequential';
  intent.mode = mode;
  const tries = Number(rng.weighted({ 1: 45, 2: 35, 3: 20 }));
  if (mode === 'sequential') {
    for (let i = 0; i < tries; i++) await keyedTry(intent, route(rng), rng);
  } else if (mode === 'concurrent') {
    await Promise.all(Array.from({ length: Math.max(2, tries) }, () => keyedTry(intent, route(rng), rng)));
  } else if (mode === 'cancel_then_retry' || mode === 'timeout_then_retry') {
    // timeout_then_retry: the client's own deadline ran out (as the SDK's request timeout
    // does: it sends notifications/cancelled), later than a plain cancel.
    const delay = mode === 'cancel_then_retry' ? rng.int(0, 25) : rng.int(20, 200);
    await keyedTry(intent, route(rng), rng, { cancelAfter: delay });
    await sleep(rng.int(0, 50));
    for (let i = 1; i < tries; i++) await keyedTry(intent, route(rng), rng);
    if (tries === 1) await keyedTry(intent, route(rng), rng);
  } else if (mode === 'task') {
    await keyedTry(intent, route(rng), rng, { task: true });
    for (let i = 1; i < tries; i++) await keyedTry(intent, route(rng), rng, { task: rng.chance(0.5) });
  } else if (mode === 'jam') {
    await jamTry(intent, rng);
    if (rng.chance(0.6)) await keyedTry(intent, route(rng), rng);
  }
  // A key used with other arguments must be refused, and nothing may run.
  const ok = intent.tries.find((t) => t.outcome === 'ok');
  if (ok && rng.chance(0.15)) {
    const other = tool === 'charge_account' ? { ...intent.args, cents: intent.args.cents + 1 }
      : { ...intent.args, quantity: intent.args.quantity + 1 };
    const t = await keyedTry(intent, route(rng), rng, { args: other, probe: true });
    // (A probe that timed out in the queue proves nothing here; the ledger check at the end
    // still requires the key's one execution with the original arguments.)
    if (!['mismatch', 'not_run', 'timeout'].includes(t.outcome)) {
      violation('mismatch_not_refused', `${intent.key}: ${t.outcome}`);
    }
  }
  tally(`keyed_${tool}`, mode);
}

// Both of B's workers are held by latch_wait calls (queued first: the queue is FIFO), so a
// keyed write sent now waits in the queue and meets its 2 s maximum clock without running.
async function jamTry(intent, rng) {
  jamBusy = true;
  jamNext = now() + 10000;
  try {
    const n = ++calls.latch;
    const names = [0, 1].map((i) => `${tag}-jam-${n}-${i}`);
    const latches = names.map((name) => call(B, 'latch_wait', { name }, { rng, kind: 'jam_latch' }));
    await sleep(20);
    const t = await keyedTry(intent, B, rng);
    t.jam = true;
    if (t.outcome !== 'timeout') tally('jam', `not_timed_out_${t.outcome}`); else tally('jam', 'timed_out');
    for (const name of names) {
      const rel = await answer(call(B, 'latch_release', { name }, { rng, kind: 'latch_release' }));
      if (!textOf(rel)?.includes(name)) violation('latch_release', short(rel));
    }
    for (const [i, rec] of latches.entries()) {
      const r = await answer(rec);
      if (textOf(r) !== `released ${names[i]}`) violation('mixed_answer', `jam latch ${names[i]}: ${short(r)}`);
    }
  } finally {
    jamBusy = false;
  }
}

// ---------------------------------------------------------------------------------------
// Restarts under faults: A loses every restart's answer after the backend did it, B answers
// 150 ms late (and 503s its first calls). Lost or cancelled → reconcile by key with
// lookup_deployment_operation, as an agent should.

const JOBS = [['web-api', 'production'], ['worker', 'production'], ['billing-sync', 'staging']];
const restartIntents = [];

async function lookupOp(k, rng, key) {
  let r;
  for (let i = 0; i < 3; i++) {  // a read queued past its idle clock is asked again
    r = await answer(call(k, 'lookup_deployment_operation', { idempotency_key: key }, { rng, kind: 'lookup' }));
    if (!expectTimeout('lookup', r, ['idle', 'max'])) break;
  }
  const sc = r?.result?.structuredContent;
  if (!r?.result || r.result.isError || typeof sc?.found !== 'boolean') return { known: false, msg: r };
  if (sc.idempotency_key !== key) violation('mixed_answer', `lookup ${key}: ${short(sc)}`);
  return { known: true, found: sc.found, opId: sc.operation_id };
}

async function restartIntent(rng) {
  const n = ++calls.restart;
  const [job, env] = rng.pick(JOBS);
  const variant = rng.weighted({ normal: 88, no_approval: 6, wrong_env: 6 });
  const environment = variant === 'wrong_env' ? (env === 'production' ? 'staging' : 'production') : env;
  const ri = { n, job, environment, variant, intent_id: `${tag}-ri-${n}`, approval_id: `ap-${n}`, tries: [], ops: new Set(), lookups: [], fresh: 0 };
  ri.key = `restart:${job}:${environment}:${ri.intent_id}:${ri.approval_id}`;
  restartIntents.push(ri);
  const tries = Number(rng.weighted({ 1: 50, 2: 35, 3: 15 }));
  for (let i = 0; i < tries; i++) {
    const together = rng.chance(0.1) && B;
    const batch = together ? [A, B] : [route(rng)];
    const results = await Promise.all(batch.map((k) => restartTry(ri, k, rng, rng.chance(0.15) ? rng.int(0, 200) : null)));
    for (const t of results) {
      if (t.outcome === 'ok') continue;
      if (['lost_response', 'cancelled', 'timeout', 'attempt_timeout', 'no_answer'].includes(t.outcome)) {
        const l = await lookupOp(route(rng), rng, ri.key);
        ri.lookups.push(l);
        if (l.known && l.found) ri.ops.add(l.opId);
        if (t.outcome === 'lost_response' && l.known && !l.found) {
          violation('lost_response_not_found', `${ri.key}: the answer was lost after the backend did it, yet the lookup finds nothing`);
        }
      }
    }
    if (ri.ops.size > 1) violation('restart_two_operations', `${ri.key}: ${[...ri.ops]}`);
    if (variant !== 'normal' || (ri.ops.size > 0 && rng.chance(0.5))) break;
  }
  tally('restart', variant);
}

async function restartTry(ri, k, rng, cancelAfter) {
  const args = { job_id: ri.job, environment: ri.environment, intent_id: ri.intent_id };
  if (ri.variant !== 'no_approval') args.approval_id = ri.approval_id;
  const t = { conn: k.name, outcome: null };
  ri.tries.push(t);
  const rec = call(k, 'restart_deployment_job', args, { rng, kind: 'restart' });
  t.rec = rec;
  if (cancelAfter !== null) {
    await sleep(cancelAfter);
    if (rec.answers === 0) { k.cancel(rec); t.outcome = 'cancelled'; return t; }
  }
  const msg = await answer(rec);
  t.outcome = classifyRestart(ri, t, msg);
  return t;
}

function classifyRestart(ri, t, msg) {
  if (!msg) return 'no_answer';
  if (msg.error) { violation('restart_rpc_error', `${ri.key}: ${short(msg)}`); return 'rpc_error'; }
  const sc = msg.result.structuredContent ?? {};
  if (!msg.result.isError) {
    if (sc.job_id !== ri.job || sc.idempotency_key !== ri.key || !sc.operation_id) {
      violation('mixed_answer', `${ri.key}: ${short(sc)}`);
    }
    ri.ops.add(sc.operation_id);
    t.opId = sc.operation_id;
    t.replayed = sc.replayed === true;
    // One try created the operation; every other answer for the key is its replay.
    if (!t.replayed && ++ri.fresh > 1) violation('restart_not_replayed', `${ri.key}: a second fresh answer (${sc.operation_id})`);
    return 'ok';
  }
  const e = sc.error ?? {};
  switch (e.type) {
    case 'lost_response':
      if (e.needs_reconciliation !== true || e.idempotency_key !== ri.key) {
        violation('lost_response_shape', `${ri.key}: ${short(e)}`);
      }
      return 'lost_response';
    case 'backend_503': case 'circuit_open': case 'approval_required': case 'backend_409': case 'kill_switch':
      return e.type;  // nothing was done
    case 'attempt_timeout': case 'timeout':
      return e.type;
    default:
      violation('restart_unexpected_answer', `${ri.key}: ${short(msg)}`);
      return `unexpected_${e.type}`;
  }
}

// ---------------------------------------------------------------------------------------
// Unkeyed writes (counted apart: each call may run its effect again).

const unkeyed = [];

async function unkeyedWrite(rng) {
  const n = ++calls.unkeyed;
  const k = route(rng);
  const charge = rng.chance(0.6);
  const tool = charge ? 'charge_account' : 'reserve_inventory';
  const args = charge ? { account: `${tag}-u-${n % 8}`, cents: rng.int(1, 20) }
    : { sku: `${tag}-usku-${Math.floor(n / 20)}`, tenant: 'ten-u', quantity: 1 };
  const u = { tool, args, outcome: null };
  unkeyed.push(u);
  const rec = call(k, tool, args, { rng, kind: 'unkeyed' });
  u.rec = rec;
  if (rng.chance(0.1)) {
    await sleep(rng.int(0, 20));
    if (rec.answers === 0) { k.cancel(rec); u.outcome = 'cancelled'; tally('unkeyed', 'cancelled'); return; }
  }
  const msg = await answer(rec);
  u.outcome = classifyUnkeyed(u, msg);
  tally('unkeyed', u.outcome);
}

function classifyUnkeyed(u, msg) {
  if (!msg) return 'no_answer';
  const sc = msg.result?.structuredContent ?? {};
  if (msg.result && !msg.result.isError) {
    u.opId = sc.charge_id ?? sc.reservation_id;
    const same = u.tool === 'charge_account' ? sc.account === u.args.account && sc.cents === u.args.cents
      : sc.sku === u.args.sku && sc.quantity === u.args.quantity;
    if (!same || !u.opId) violation('mixed_answer', `unkeyed ${short(u.args)}: ${short(sc)}`);
    if (sc[REPLAYED] || msg.result._meta?.[REPLAYED]) violation('unkeyed_replayed', short(msg));
    return 'ok';
  }
  const type = sc.error?.type;
  if (['kill_switch', 'server_busy', 'ledger_busy', 'ledger_error', 'circuit_open', 'timeout'].includes(type)) {
    return type === 'timeout' ? 'timeout' : 'not_run';
  }
  violation('unkeyed_unexpected_answer', short(msg));
  return `unexpected_${type}`;
}

// ---------------------------------------------------------------------------------------
// Reads, timeouts, cancels, flaky backends, tasks, held slots, bad input

async function echo(rng) {
  const n = ++calls.echo;
  const text = rng.chance(0.2) ? `${tag} é✓🚀 ${n} ${'x'.repeat(rng.int(0, 2000))}` : `${tag}-echo-${n}`;
  const r = await answer(call(route(rng), 'echo', { text }, { rng, kind: 'echo' }));
  // Queued behind blocked workers (a jam on B), a call meets the idle clock before it runs.
  if (textOf(r) === text) tally('echo', 'ok');
  else if (expectTimeout('echo', r, ['idle', 'max'])) tally('echo', 'timeout_while_queued');
  else violation('mixed_answer', `echo ${n}: ${short(r)}`);
}

async function ping(rng) {
  const k = route(rng);
  const r = await answer(k.request('ping', undefined, { rng, kind: 'ping' }));
  if (!r?.result || Object.keys(r.result).length !== 0) violation('ping', short(r));
  tally('ping', 'ok');
}

async function sleepShort(rng) {
  const ms = rng.int(0, 300);
  const r = await answer(call(route(rng), 'sleep', { ms }, { rng, kind: 'sleep' }));
  if (textOf(r) === `slept ${ms} ms`) tally('sleep', 'ok');
  else if (expectTimeout('sleep', r, ['idle', 'max'])) tally('sleep', 'timeout_while_queued');
  else violation('mixed_answer', `sleep ${ms}: ${short(r)}`);
}

async function progress(rng) {
  const steps = rng.int(2, 15);
  const interval = rng.int(0, 40);
  const token = rng.chance(0.5) ? `${tag}-p-${nextId}` : nextId * 7;
  const k = route(rng);
  const rec = call(k, 'progress', { steps, interval_ms: interval }, { rng, kind: 'progress', progressToken: token });
  const r = await answer(rec);
  if (textOf(r) === `done ${steps} steps`) tally('progress', 'ok');
  else if (expectTimeout('progress', r, ['idle', 'max'])) tally('progress', 'timeout_while_queued');
  else violation('mixed_answer', `progress ${steps}: ${short(r)}`);
}

async function sleepIdleTimeout(rng) {
  const ms = rng.int(1300, 1800);
  const r = await answer(call(route(rng), 'sleep', { ms }, { rng, kind: 'sleep_idle' }));
  const got = expectTimeout('sleep_idle', r, ['idle', 'max']);
  if (!got) violation('timeout_missed', `sleep ${ms} with a 1000 ms idle clock: ${short(r)}`);
  tally('timeout_idle', got ?? 'missed');
}

async function progressMaxTimeout(rng) {
  const token = `${tag}-pm-${nextId}`;
  const r = await answer(call(route(rng), 'progress', { steps: 30, interval_ms: 150 },
    { rng, kind: 'progress_max', progressToken: token }));
  // idle only if it waited in the queue for a worker longer than the idle clock.
  const got = expectTimeout('progress_max', r, ['max', 'idle']);
  if (!got) violation('timeout_missed', `progress for 4.5 s with a 3000 ms max clock: ${short(r)}`);
  else if (got === 'timeout_max' && r.result.structuredContent.error.elapsed_ms < 3000) violation('timeout_early', short(r));
  tally('timeout_max', got ?? 'missed');
}

// A cancel at a random moment: before, during or after the work (the trace tells which won).
async function cancelRead(rng) {
  const k = route(rng);
  const what = rng.weighted({ sleep: 4, progress: 2, echo: 2, get_job: 1 });
  let rec;
  if (what === 'sleep') rec = call(k, 'sleep', { ms: rng.int(20, 1500) }, { rng, kind: 'cancel_read' });
  else if (what === 'progress') {
    rec = call(k, 'progress', { steps: 20, interval_ms: 20 }, { rng, kind: 'cancel_read', progressToken: `${tag}-cp-${nextId}` });
  } else if (what === 'echo') rec = call(k, 'echo', { text: 'to be cancelled' }, { rng, kind: 'cancel_read' });
  else rec = call(k, 'get_deployment_job', { job_id: 'worker' }, { rng, kind: 'cancel_read' });
  const delay = what === 'echo' ? 0 : rng.int(0, 150);
  if (delay) await sleep(delay);
  k.cancel(rec, 'soak: cancelled at random');
  tally('cancel', what);
}

async function getJob(rng) {
  const k = route(rng);
  const job = rng.chance(0.03) ? 'no-such-job' : rng.pick(JOBS)[0];
  const r = await answer(call(k, 'get_deployment_job', { job_id: job }, { rng, kind: 'get_job' }));
  const sc = r?.result?.structuredContent;
  let outcome;
  if (r?.result && !r.result.isError) {
    outcome = sc.freshness;  // fresh, or cached while the breaker is open (the last good read in `data`)
    if ((outcome === 'cached' ? sc.data?.job_id : sc.job_id) !== job) violation('mixed_answer', `get ${job}: ${short(sc)}`);
    if (!['fresh', 'cached'].includes(outcome)) violation('get_job_freshness', short(sc));
  } else {
    outcome = errorType(r) ?? 'rpc_error';
    if (!['backend_503', 'circuit_open', 'backend_404', 'timeout', 'attempt_timeout'].includes(outcome)) violation('get_job_unexpected', short(r));
    if (outcome === 'backend_404' && job !== 'no-such-job') violation('get_job_404', short(r));
  }
  tally(`get_job_${k.name}`, outcome);
}

const TRANSIENT = ['backend_503', 'transport_unavailable', 'backend_429'];
const AMBIGUOUS = ['attempt_timeout', 'lost_response'];
const flakyChecks = [];

async function flaky(rng) {
  const n = ++calls.flaky;
  const tool = rng.weighted({ flaky_read: 4, flaky_idempotent: 3, flaky_write: 3 });
  const fail = Array.from({ length: Number(rng.weighted({ 0: 2, 1: 4, 2: 3, 3: 1 })) },
    () => rng.pick([...TRANSIENT, ...AMBIGUOUS]));
  const args = { counter: `${tag}-f-${n}`, fail };
  if (rng.chance(0.3)) args.retry_after_ms = rng.int(0, 100);
  const keyed = tool === 'flaky_idempotent' && rng.chance(0.7);
  if (keyed) args.idempotencyKey = `${tag}-fk-${n}`;
  const k = route(rng);
  const rec = call(k, tool, args, { rng, kind: 'flaky' });
  const r = await answer(rec);
  // What keel may retry: reads anything transient or ambiguous, a keyed idempotent write too,
  // an unsafe or unkeyed write only what surely never happened (a transient rejection).
  const unsafe = tool === 'flaky_write' || (tool === 'flaky_idempotent' && !keyed);
  const retryable = (type) => TRANSIENT.includes(type) || (!unsafe && AMBIGUOUS.includes(type));
  let outcome;
  if (r?.result && !r.result.isError) {
    const attempt = r.result.structuredContent?.attempt;
    if (attempt !== fail.length + 1) violation('mixed_answer', `${tool} ${short(args)}: ${short(r)}`);
    if (!fail.every(retryable)) violation('retried_unsafe', `${tool} ${short(fail)} succeeded: it was retried past a failure it must not retry`);
    if (fail.length + 1 > 3) violation('retried_past_max_attempts', `${tool} ${short(fail)}`);
    outcome = fail.length ? 'ok_after_retries' : 'ok';
  } else {
    const e = r?.result?.structuredContent?.error ?? {};
    outcome = e.type ?? 'rpc_error';
    if (!fail.includes(e.type) && !['circuit_open', 'timeout', 'kill_switch'].includes(e.type)) {
      violation('flaky_unexpected_answer', `${tool} ${short(args)}: ${short(r)}`);
    }
    if (unsafe && AMBIGUOUS.includes(e.type) && e.needs_reconciliation !== true) {
      violation('ambiguous_write_without_reconciliation', `${tool} ${short(args)}: ${short(r)}`);
    }
  }
  flakyChecks.push({ rec, tool, fail, unsafe });
  tally(tool, outcome);
}

// Tasks: poll, wait, cancel, cancel the wait, time out, finish after a cancel, list.
function createdTask(msg, what) {
  const task = msg?.result?.task;
  if (!task?.taskId || task.status !== 'working' || msg.result._meta?.[RELATED]?.taskId !== task.taskId) {
    if (msg?.error?.data?.type === 'too_many_tasks') return null;
    violation('task_create', `${what}: ${short(msg)}`);
    return null;
  }
  return task.taskId;
}

async function taskGet(k, rng, taskId) {
  const r = await answer(k.request('tasks/get', { taskId }, { rng, kind: 'tasks/get' }));
  const t = r?.result;
  if (!t || t.taskId !== taskId || !TASK_STATUSES.has(t.status) || t._meta?.[RELATED]?.taskId !== taskId) {
    violation('tasks_get', `${taskId}: ${short(r)}`);
    return null;
  }
  k.noteTaskStatus(taskId, t.status, 'tasks/get');
  return t;
}

async function taskScenario(rng) {
  const kind = rng.weighted({ poll: 3, wait: 3, cancel: 3, cancel_wait: 2, idle: 1, late: 1, list: 1 });
  const k = kind === 'late' ? A : route(rng);
  calls.task++;
  if (kind === 'list') {
    const r = await answer(k.request('tasks/list', {}, { rng, kind: 'tasks/list' }));
    if (!Array.isArray(r?.result?.tasks) || r.result.tasks.some((t) => !t.taskId || !TASK_STATUSES.has(t.status))) {
      violation('tasks_list', short(r));
    }
    tally('task', 'list');
    return;
  }
  if (kind === 'poll') {
    const ms = rng.int(20, 400);
    const useProgress = rng.chance(0.5);
    const token = `${tag}-tp-${nextId}`;
    const msg = await answer(useProgress
      ? call(k, 'progress', { steps: 5, interval_ms: Math.floor(ms / 5) }, { rng, kind: 'task', task: { ttl: 30000 }, progressToken: token })
      : call(k, 'sleep', { ms }, { rng, kind: 'task', task: { ttl: 30000 } }));
    const taskId = createdTask(msg, 'poll');
    if (!taskId) { tally('task', 'not_created'); return; }
    let last;
    for (let i = 0; i < 200; i++) {
      last = await taskGet(k, rng, taskId);
      if (!last || TERMINAL.has(last.status)) break;
      await sleep(rng.int(20, 80));
    }
    const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
    const want = useProgress ? 'done 5 steps' : `slept ${ms} ms`;
    if (last?.status === 'completed' && textOf(r) !== want) violation('task_result', `${taskId}: ${short(r)}`);
    if (r?.result?._meta?.[RELATED]?.taskId !== taskId && r?.result) violation('task_result_without_related_task', short(r));
    tally('task', `poll_${last?.status}`);
  } else if (kind === 'wait' || kind === 'idle') {
    const ms = kind === 'idle' ? rng.int(1300, 1600) : rng.int(20, 600);
    const taskId = createdTask(await answer(call(k, 'task_sleep', { ms }, { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
    if (kind === 'wait') {
      if (textOf(r) !== `slept ${ms} ms` && !expectTimeout('task', r, ['idle', 'max'])) violation('task_result', `${taskId}: ${short(r)}`);
      tally('task', 'wait');
    } else {
      const got = expectTimeout('task', r, ['idle', 'max']);
      if (!got) violation('timeout_missed', `task_sleep ${ms} with a 1000 ms idle clock: ${short(r)}`);
      tally('task', `idle_${got ?? 'missed'}`);
    }
  } else if (kind === 'cancel') {
    const taskId = createdTask(await answer(call(k, 'task_sleep', { ms: rng.int(300, 3000) }, { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    await sleep(rng.int(0, 300));
    const c = await answer(k.request('tasks/cancel', { taskId }, { rng, kind: 'tasks/cancel' }));
    if (c?.result) {
      if (c.result.status !== 'cancelled') violation('task_cancel', `${taskId}: ${short(c)}`);
      k.noteTaskStatus(taskId, 'cancelled', 'tasks/cancel');
      const g = await taskGet(k, rng, taskId);
      if (g && g.status !== 'cancelled') violation('task_status_changed_after_terminal', `${taskId}: get after cancel ${g.status}`);
      const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
      if (r?.error?.code !== -32603 || r.error.data?.status !== 'cancelled') violation('task_cancelled_result', `${taskId}: ${short(r)}`);
      tally('task', 'cancelled');
    } else if (c?.error?.code === -32602) {
      const g = await taskGet(k, rng, taskId);  // it had finished (or timed out) first
      if (g && !TERMINAL.has(g.status)) violation('task_cancel', `${taskId}: refused but ${g.status}`);
      tally('task', 'cancel_too_late');
    } else violation('task_cancel', `${taskId}: ${short(c)}`);
  } else if (kind === 'cancel_wait') {
    // notifications/cancelled for a tasks/result request drops that answer, not the task.
    const ms = rng.int(200, 700);
    const taskId = createdTask(await answer(call(k, 'task_sleep', { ms }, { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    const waiting = k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result_cancelled' });
    await sleep(rng.int(0, 100));
    k.cancel(waiting);
    const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
    if (textOf(r) !== `slept ${ms} ms` && !expectTimeout('task', r, ['idle', 'max'])) violation('task_result', `${taskId}: ${short(r)}`);
    tally('task', 'cancel_wait');
  } else if (kind === 'late') {
    // A tool that ignores the cancel and finishes anyway: the task stays cancelled, and keel
    // records that the work ended after the cancel (TASK-1).
    const name = `${tag}-late-${++calls.latch}`;
    const taskId = createdTask(await answer(call(k, 'latch_wait', { name, ignore_cancel: true, checkpoint: false },
      { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    await sleep(rng.int(10, 100));
    const c = await answer(k.request('tasks/cancel', { taskId }, { rng, kind: 'tasks/cancel' }));
    if (c?.result?.status !== 'cancelled') violation('task_cancel', `${taskId}: ${short(c)}`);
    k.noteTaskStatus(taskId, 'cancelled', 'tasks/cancel');
    await answer(call(k, 'latch_release', { name }, { rng, kind: 'latch_release' }));
    // finished_after_cancel once the released work returns; observed if it never started.
    let r;
    for (let i = 0; i < 100; i++) {
      r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
      if (r?.error?.data?.cancelPhase && r.error.data.cancelPhase !== 'requested') break;
      await sleep(30);
    }
    const phase = r?.error?.data?.cancelPhase;
    if (r?.error?.data?.status !== 'cancelled' || !['finished_after_cancel', 'observed'].includes(phase)) {
      violation('task_late_outcome', `${taskId}: ${short(r)}`);
    }
    if (phase === 'finished_after_cancel' && textOf({ result: r.error.data.lateOutcome }) !== `released ${name}`) {
      violation('task_late_outcome', `${taskId}: late outcome ${short(r.error.data.lateOutcome)}`);
    }
    const g = await taskGet(k, rng, taskId);
    if (g && g.status !== 'cancelled') violation('task_status_changed_after_terminal', `${taskId}: ${g.status}`);
    tally('task', `late_${phase}`);
  }
}

// A tool that ignores its cancel keeps its worker; keel answers nothing, holds the slot and
// starts a replacement thread; the latch opens later and the stray work ends unseen.
async function heldSlot(rng) {
  const name = `${tag}-held-${++calls.latch}`;
  const rec = call(A, 'latch_wait', { name, ignore_cancel: true }, { rng, kind: 'held' });
  await sleep(rng.int(20, 80));
  A.cancel(rec, 'soak: held slot');
  await sleep(rng.int(150, 600));
  const r = await answer(call(A, 'latch_release', { name }, { rng, kind: 'latch_release' }));
  if (textOf(r) !== `released ${name}`) violation('latch_release', short(r));
  tally('held_slot', 'released');
}

async function badInput(rng) {
  const k = route(rng);
  if (rng.chance(0.5)) {
    k.expectedIdless++;
    k.writeRaw(rng.pick(['{"jsonrpc":"2.0","id":', 'not json at all', '{"jsonrpc":"2.0","id":1,"method":"ping"']) + '\n');
    tally('bad_input', 'unparsable');
  } else {
    const r = await answer(k.request(`soak/unknown-${rng.int(1, 9)}`, {}, { rng, kind: 'unknown_method' }));
    if (r?.error?.code !== -32601) violation('unknown_method', short(r));
    tally('bad_input', 'unknown_method');
  }
}

async function lookupKnownKey(rng) {
  const done = intents.filter((i) => i.tries.some((t) => t.outcome === 'ok'));
  if (done.length === 0) return;
  const intent = rng.pick(done);
  const r = await answer(call(route(rng), 'ledger_lookup', { tool: intent.tool, key: intent.key }, { rng, kind: 'ledger_lookup' }));
  const sc = r?.result?.structuredContent;
  if (expectTimeout('ledger_lookup', r, ['idle', 'max'])) { tally('ledger_lookup', 'timeout_while_queued'); return; }
  if (!sc?.found || sc.executions !== 1 || sc.key !== intent.key) violation('ledger_lookup_live', `${intent.key}: ${short(sc)}`);
  tally('ledger_lookup', sc?.state ?? 'error');
}

const SCENARIOS = {
  ping: [8, ping], echo: [10, echo], sleep: [6, sleepShort], progress: [5, progress],
  timeout_idle: [2, sleepIdleTimeout], timeout_max: [1, progressMaxTimeout], cancel: [7, cancelRead],
  get_job: [6, getJob], flaky: [5, flaky],
  charge: [10, (rng) => keyedIntent(rng, 'charge_account')], reserve: [5, (rng) => keyedIntent(rng, 'reserve_inventory')],
  unkeyed: [3, unkeyedWrite], restart: [4, restartIntent], task: [6, taskScenario],
  held_slot: [1, heldSlot], bad_input: [1, badInput], ledger_lookup: [2, lookupKnownKey],
};
const weights = Object.fromEntries(Object.entries(SCENARIOS).map(([k, [w]]) => [k, w]));

// ---------------------------------------------------------------------------------------
// The kill switch for writes, flipped from a shell for 1.5 s now and then: writes in the
// window are refused with kill_switch and run nothing.

let killWindows = 0;
function admin(state) {
  return new Promise((res) => {
    const p = spawn(opts.keel, ['admin', 'block-writes', state, '--db', db], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => {
      if (code !== 0) violation('admin_block_writes', `exit ${code}: ${err}`);
      res();
    });
  });
}

// ---------------------------------------------------------------------------------------
// Run

function watchdog() {
  for (const k of keels) {
    for (const rec of k.outstanding) {
      if (!rec.flagged && now() - rec.sentAt > rec.limitMs) {
        rec.flagged = true;
        violation('no_answer', `${k.name}: ${rec.method} ${rec.tool ?? ''} id ${rec.key} (${rec.kind}) unanswered after ${rec.limitMs} ms`);
      }
    }
  }
}

async function runner(i, deadline) {
  const rng = new Rng((opts.seed ^ Math.imul(i + 1, 0x9E3779B9)) >>> 0);
  while (now() < deadline) {
    const name = rng.weighted(weights);
    try {
      await SCENARIOS[name][1](rng);
    } catch (e) {
      violation('soak_error', `${name}: ${e.stack}`);
    }
    await sleep(rng.int(0, 15));
  }
}

console.log(`keel soak: seed ${opts.seed}, ${opts.seconds} s, ${opts.runners} runners, ` +
  `${B ? 'keel A (4 workers) + keel B (2 workers) on one --db' : 'one keel (4 workers)'}`);
console.log(`  rerun: scripts/soak --seed ${opts.seed} --seconds ${opts.seconds}${opts.single ? ' --single' : ''}`);
console.log(`  binary ${opts.keel}; files in ${dir}${opts.keep ? '' : ' (removed at the end; --keep keeps them)'}`);
console.log(`  faults A: ${faultsA.join(', ')}`);
if (B) console.log(`  faults B: ${faultsB.join(', ')}`);

for (const k of keels) k.start();
try {
  await Promise.all(keels.map(initialize));
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
const watch = setInterval(watchdog, 1000);
const mixStart = now();
const deadline = mixStart + opts.seconds * 1000;
let progressLine = setInterval(() => {
  const sent = keels.reduce((s, k) => s + k.recs.size, 0);
  const rss = keels.map((k) => `${k.name} ${((k.rss.at(-1)?.[1] ?? 0) / 1024).toFixed(1)} MB`).join(', ');
  console.log(`  t=${Math.round((now() - mixStart) / 1000)} s: ${sent} requests, ${keels.reduce((s, k) => s + k.outstanding.size, 0)} open; RSS ${rss}`);
}, 30000);
const killer = (async () => {
  const rng = new Rng(opts.seed ^ 0x5eed);
  const span = opts.seconds * 1000;
  while (now() + 8000 < deadline) {
    await sleep(rng.int(Math.min(15000, span * 0.25), Math.min(40000, span * 0.5)));
    if (now() + 3000 > deadline) break;
    await admin('on');
    killWindows++;
    await sleep(1500);
    await admin('off');
  }
})();
await Promise.all(Array.from({ length: opts.runners }, (_, i) => runner(i, deadline)));
const mixEnd = now();
for (const k of keels) k.cpuMix = k.cpuSeconds();
clearInterval(progressLine);
await killer;
await admin('off');

// Drain: every request not cancelled must be answered.
for (let i = 0; i < 300 && keels.some((k) => k.outstanding.size > 0); i++) await sleep(100);

// ---------------------------------------------------------------------------------------
// Verification through keel itself: ledger_lookup for every keyed intent (its executions),
// lookup_deployment_operation for every restart intent.

const verifier = new Rng(opts.seed ^ 0xface);
async function inBatches(items, size, fn) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}
await inBatches(intents, 16, async (intent) => {
  const k = B && verifier.chance(0.5) ? B : A;
  let r;
  for (let i = 0; i < 3; i++) {  // a read queued past its idle clock is asked again
    r = await answer(call(k, 'ledger_lookup', { tool: intent.tool, key: intent.key }, { rng: verifier, kind: 'verify' }));
    if (!expectTimeout('verify', r, ['idle', 'max'])) break;
  }
  const sc = r?.result?.structuredContent;
  if (!sc || r.result.isError) { violation('verify_lookup_failed', `${intent.key}: ${short(r)}`); return; }
  intent.lookup = sc;
});
await inBatches(restartIntents.filter((ri) => ri.variant !== 'no_approval'), 16, async (ri) => {
  const l = await lookupOp(B ?? A, verifier, ri.key);
  if (!l.known) violation('verify_lookup_failed', `${ri.key}: ${short(l.msg)}`);
  ri.final = l;
});
for (let i = 0; i < 100 && keels.some((k) => k.outstanding.size > 0); i++) await sleep(100);

// Close: stdin EOF, keel must exit 0 by itself within its grace.
const closing = now();
const exits = await Promise.all(keels.map(async (k) => {
  const timer = setTimeout(() => { violation('exit', `${k.name}: still running 10 s after EOF; killed`); k.child.kill('SIGKILL'); }, 10000);
  const e = await k.close();
  clearTimeout(timer);
  if (e.code !== 0) violation('exit', `${k.name}: exit ${JSON.stringify(e)}\n${k.stderrTail}`);
  return { name: k.name, ...e, ms: Math.round(e.at - closing) };
}));
clearInterval(watch);
watchdog();
for (const k of keels) {
  for (const rec of k.outstanding) {
    violation('not_answered', `${k.name}: ${rec.method} ${rec.tool ?? ''} id ${rec.key} (${rec.kind}) never answered`);
  }
  if (k.idless.length !== k.expectedIdless || k.idless.some((c) => c !== -32700)) {
    violation('idless_errors', `${k.name}: sent ${k.expectedIdless} unparsable lines, got id-less errors ${short(k.idless)}`);
  }
}

// ---------------------------------------------------------------------------------------
// Keel's trace: which cancels won (the call ended "cancelled": it must have no answer) and
// which lost (it ended otherwise: exactly one answer); attempts per call.

const traceInfo = new Map();  // `${conn}:${idKey}` -> {end, attempts: [error types]}
async function readTrace(k) {
  const rl = createInterface({ input: createReadStream(k.files.trace), crlfDelay: Infinity });
  let n = 0;
  for await (const line of rl) {
    if (!line) continue;
    n++;
    let r;
    try { r = JSON.parse(line); } catch { violation('trace_line', `${k.name}: ${short(line)}`); continue; }
    const idKey = r.attributes?.['jsonrpc.request.id'];
    if (idKey === undefined) continue;
    const key = `${k.name}:${idKey}`;
    let info = traceInfo.get(key);
    if (!info) traceInfo.set(key, info = { end: null, attempts: [] });
    if (r.event === 'tool.call.end') {
      if (info.end) violation('trace_two_ends', `${key}`);
      info.end = r.attributes.outcome;
      info.reason = r.attributes['keel.reason'];
    } else if (r.event === 'tool.attempt.start') {
      info.attempts.push(null);
    } else if (r.event === 'tool.attempt.end') {
      info.attempts[info.attempts.length - 1] = r.attributes['error.type'] ?? r.attributes.outcome;
    }
  }
  return n;
}
const traceLines = {};
for (const k of keels) traceLines[k.name] = await readTrace(k);

const cancelStats = { sent: 0, won: 0, lostAnswered: 0, notTraced: 0 };
for (const k of keels) {
  for (const rec of k.recs.values()) {
    if (rec.answers > 1) continue;  // reported as it happened
    const info = rec.method === 'tools/call' && !rec.task ? traceInfo.get(`${k.name}:${rec.key}`) : null;
    if (rec.cancelAt !== null) {
      cancelStats.sent++;
      if (info?.end === 'cancelled') {
        cancelStats.won++;
        if (rec.answers !== 0) violation('answered_after_cancel_won', `${k.name}: id ${rec.key} (${rec.kind}) ended cancelled but was answered`);
      } else if (info?.end) {
        cancelStats.lostAnswered++;
        if (rec.answers !== 1) violation('cancel_lost_but_no_answer', `${k.name}: id ${rec.key} (${rec.kind}) ended ${info.end}, answered ${rec.answers} times`);
      } else {
        cancelStats.notTraced++;  // tasks/result, or a call that ended before its trace started
      }
    } else if (rec.answers !== 1) {
      violation('not_exactly_one_answer', `${k.name}: id ${rec.key} (${rec.kind}) answered ${rec.answers} times`);
    }
    if (info?.end === 'cancelled' && rec.cancelAt === null) {
      violation('cancelled_without_cancel', `${k.name}: id ${rec.key} ended cancelled but no cancel was sent`);
    }
  }
}

// An ambiguous failure of an unsafe write is never retried (RET-1).
for (const f of flakyChecks) {
  const info = traceInfo.get(`${f.rec.conn.name}:${f.rec.key}`);
  if (!info) continue;
  if (f.unsafe) {
    for (let i = 0; i + 1 < info.attempts.length; i++) {
      if (AMBIGUOUS.includes(f.fail[i])) violation('retried_unsafe', `${f.tool} ${short(f.fail)}: attempt ${i + 2} after ${f.fail[i]}`);
    }
  }
  if (info.attempts.length > 3) violation('retried_past_max_attempts', `${f.tool} ${short(f.fail)}: ${info.attempts.length} attempts`);
}

// A keyed try that timed out or was cancelled and whose call never started an attempt
// surely did not run (keel's trace says so; the ledger must agree).
for (const intent of intents) {
  for (const t of intent.tries) {
    if (t.outcome === 'cancelled' && t.rec.answers === 1) {
      t.outcome = classifyKeyed(intent, t, t.rec.msg, { probe: t.probe });  // the cancel lost the race
      t.lateAnswer = true;
    }
    if (!t.task && (t.outcome === 'timeout' || t.outcome === 'cancelled')) {
      const info = traceInfo.get(`${t.conn}:${t.rec.key}`);
      if (info?.end && info.attempts.length === 0) t.outcome = 'not_started';
    }
  }
}
for (const ri of restartIntents) {
  for (const t of ri.tries) {
    if (t.outcome === 'cancelled' && t.rec.answers === 1) t.outcome = classifyRestart(ri, t, t.rec.msg);
  }
}
for (const u of unkeyed) {
  if (u.outcome === 'cancelled' && u.rec.answers === 1) u.outcome = classifyUnkeyed(u, u.rec.msg);
}

// ---------------------------------------------------------------------------------------
// The ledger and the backends against the intents.

function sqlJson(query) {
  const r = spawnSync('sqlite3', ['-json', db, query], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) { violation('sqlite3', `${query}: ${r.stderr}`); return []; }
  return r.stdout.trim() ? JSON.parse(r.stdout) : [];
}

const NOT_RUN = new Set(['not_run', 'not_started', 'mismatch']);
const intentStats = { executed: 0, never: 0, unknown: 0, unknownRan: 0, tries: 0, finalFailures: 0 };
const ledgerRows = new Map();
if (HAVE_SQLITE3) {
  for (const row of sqlJson('SELECT tool, key, state, executions, attempts, fingerprint, result FROM ledger')) {
    ledgerRows.set(`${row.tool}\u0000${row.key}`, row);
  }
}
const chargesByKey = new Map();
const reservationsByKey = new Map();
const charges = HAVE_SQLITE3 ? sqlJson('SELECT charge_id, account, cents, idempotency_key FROM charges') : [];
const reservations = HAVE_SQLITE3 ? sqlJson('SELECT reservation_id, tenant, sku, quantity, idempotency_key FROM reservations') : [];
for (const c of charges) if (c.idempotency_key) chargesByKey.set(c.idempotency_key, [...(chargesByKey.get(c.idempotency_key) ?? []), c]);
for (const r of reservations) if (r.idempotency_key) reservationsByKey.set(r.idempotency_key, [...(reservationsByKey.get(r.idempotency_key) ?? []), r]);

const expectedBalance = new Map();   // account -> cents charged by executed keyed intents
const expectedStockUse = new Map();  // tenant/sku -> units reserved by executed keyed intents
for (const intent of intents) {
  intentStats.tries += intent.tries.length;
  const real = intent.tries.filter((t) => !t.probe);
  const oks = real.filter((t) => t.outcome === 'ok');
  const finals = real.filter((t) => t.outcome === 'final_failure');
  const ids = new Set(oks.map((t) => t.opId));
  if (ids.size > 1) violation('executed_twice', `${intent.key}: ${ids.size} different effects answered: ${[...ids]}`);
  // Fresh (not replayed) answers: one execution answers fresh once (a task's result, read
  // again through tasks/result, is one answer).
  const fresh = new Set(oks.concat(finals).filter((t) => !t.replayed).map((t) => t.taskId ?? t.rec.key));
  if (fresh.size > 1) violation('executed_twice', `${intent.key}: ${fresh.size} fresh (not replayed) answers`);
  let expect;
  if (oks.length || finals.length) expect = 'executed';
  else if (real.every((t) => NOT_RUN.has(t.outcome))) expect = 'never';
  else expect = 'unknown';
  intent.expect = expect;
  const lk = intent.lookup;  // keel's ledger_lookup
  const executions = lk?.found ? lk.executions : 0;
  if (lk && lk.found && lk.key !== intent.key) violation('mixed_answer', `ledger_lookup ${intent.key}: ${short(lk)}`);
  if (executions > 1) violation('executed_twice', `${intent.key}: ledger executions ${executions}`);
  if (expect === 'executed') {
    intentStats.executed++;
    if (executions !== 1) violation('executions_mismatch', `${intent.key}: executed (answered), ledger executions ${executions} (${short(lk)})`);
    const storedId = lk?.result?.structuredContent?.charge_id ?? lk?.result?.structuredContent?.reservation_id;
    if (oks.length && storedId !== [...ids][0]) violation('executions_mismatch', `${intent.key}: answered ${[...ids][0]}, ledger holds ${storedId}`);
    if (finals.length && lk?.state !== 'failed') violation('executions_mismatch', `${intent.key}: final failure answered, ledger ${lk?.state}`);
  } else if (expect === 'never') {
    intentStats.never++;
    if (executions !== 0) violation('executions_mismatch', `${intent.key}: surely never run (${real.map((t) => t.outcome)}), ledger executions ${executions}`);
  } else {
    intentStats.unknown++;
    if (executions === 1) intentStats.unknownRan++;
  }
  if (finals.length) intentStats.finalFailures++;
  // What really ran, per the ledger, is what the balances must show.
  const ran = lk?.found && lk.state === 'committed' && executions === 1;
  if (ran && intent.tool === 'charge_account') {
    expectedBalance.set(intent.args.account, (expectedBalance.get(intent.args.account) ?? 0) + intent.args.cents);
  } else if (ran) {
    const combo = `${intent.args.tenant}/${intent.args.sku}`;
    expectedStockUse.set(combo, (expectedStockUse.get(combo) ?? 0) + intent.args.quantity);
  } else if (intent.tool === 'charge_account') {
    expectedBalance.set(intent.args.account, expectedBalance.get(intent.args.account) ?? 0);
  } else {
    const combo = `${intent.args.tenant}/${intent.args.sku}`;
    expectedStockUse.set(combo, expectedStockUse.get(combo) ?? 0);
  }
  if (HAVE_SQLITE3) {
    const row = ledgerRows.get(`${intent.tool}\u0000${intent.key}`);
    const rowExec = row ? row.executions : 0;
    if (rowExec !== executions) violation('ledger_lookup_vs_file', `${intent.key}: ledger_lookup ${executions}, file ${rowExec}`);
    if (row && row.state !== 'committed' && row.state !== 'failed') violation('ledger_state', `${intent.key}: ${row.state}`);
    const effects = (intent.tool === 'charge_account' ? chargesByKey : reservationsByKey).get(intent.key) ?? [];
    const want = row?.state === 'committed' ? 1 : 0;
    if (effects.length !== want) violation('effects_vs_ledger', `${intent.key}: ${effects.length} effect rows, ledger ${row?.state ?? 'none'}`);
    if (effects.length === 1 && oks.length && (effects[0].charge_id ?? effects[0].reservation_id) !== [...ids][0]) {
      violation('effects_vs_ledger', `${intent.key}: effect row ${short(effects[0])}, answered ${[...ids][0]}`);
    }
  }
}

const restartStats = { intents: restartIntents.length, withOperation: 0, nothingDone: 0, unknown: 0, lostAnswers: 0, reconciled: 0 };
const NOTHING_DONE = new Set(['backend_503', 'circuit_open', 'approval_required', 'backend_409', 'kill_switch']);
let opsFound = 0;
for (const ri of restartIntents) {
  restartStats.lostAnswers += ri.tries.filter((t) => t.outcome === 'lost_response').length;
  restartStats.reconciled += ri.lookups.filter((l) => l.known && l.found).length;
  if (ri.ops.size > 1) violation('restart_two_operations', `${ri.key}: ${[...ri.ops]}`);
  const f = ri.final;
  if (f?.known && f.found) opsFound++;
  if (ri.ops.size === 1) {
    restartStats.withOperation++;
    if (!f?.found || !ri.ops.has(f.opId)) violation('restart_operation_missing', `${ri.key}: answered ${[...ri.ops]}, backend ${short(f)}`);
  } else if (ri.tries.every((t) => NOTHING_DONE.has(t.outcome))) {
    restartStats.nothingDone++;
    if (f?.found) violation('restart_ran_after_refusal', `${ri.key}: every try refused (${ri.tries.map((t) => t.outcome)}), yet operation ${f.opId}`);
  } else {
    restartStats.unknown++;
  }
}

const tableChecks = [];
if (HAVE_SQLITE3) {
  const integrity = sqlJson('PRAGMA integrity_check');
  if (integrity[0]?.integrity_check !== 'ok') violation('integrity_check', short(integrity));
  // Balances and stock: opening amount minus what the executed intents and unkeyed calls took.
  const accounts = new Map(sqlJson('SELECT account, balance_cents FROM accounts').map((r) => [r.account, r.balance_cents]));
  for (const [account, cents] of expectedBalance) {
    const have = accounts.get(account) ?? 100000;
    if (have !== 100000 - cents) violation('balance', `${account}: ${have}, expected ${100000 - cents}`);
  }
  const stock = new Map(sqlJson('SELECT tenant, sku, stock FROM inventory').map((r) => [`${r.tenant}/${r.sku}`, r.stock]));
  for (const [combo, used] of expectedStockUse) {
    if ((stock.get(combo) ?? 100) !== 100 - used) violation('inventory', `${combo}: ${stock.get(combo)}, expected ${100 - used}`);
  }
  tableChecks.push(`${expectedBalance.size} keyed accounts and ${expectedStockUse.size} keyed stock lines match the executed intents`);
  // Unkeyed: every answered effect exists; the balances equal the effect rows; no more rows than calls.
  const known = new Set(intents.map((i) => i.key));
  for (const c of charges) {
    if (c.idempotency_key && !known.has(c.idempotency_key)) violation('stray_effect', short(c));
  }
  for (const r of reservations) {
    if (r.idempotency_key && !known.has(r.idempotency_key)) violation('stray_effect', short(r));
  }
  const unkeyedRows = { charge_account: new Set(charges.filter((c) => !c.idempotency_key).map((c) => c.charge_id)),
    reserve_inventory: new Set(reservations.filter((r) => !r.idempotency_key).map((r) => r.reservation_id)) };
  for (const u of unkeyed) {
    if (u.outcome === 'ok' && !unkeyedRows[u.tool].has(u.opId)) violation('unkeyed_effect_missing', short(u.args));
  }
  const unkeyedAccounts = new Set(unkeyed.filter((u) => u.tool === 'charge_account').map((u) => u.args.account));
  for (const account of unkeyedAccounts) {
    const rows = charges.filter((c) => c.account === account);
    if (rows.some((c) => c.idempotency_key)) violation('stray_effect', `${account}: a keyed charge on an unkeyed account`);
    const sum = rows.reduce((s, c) => s + c.cents, 0);
    if ((accounts.get(account) ?? 100000) !== 100000 - sum) violation('balance', `${account}: ${accounts.get(account)} vs rows ${sum}`);
  }
  for (const tool of ['charge_account', 'reserve_inventory']) {
    const sent = unkeyed.filter((u) => u.tool === tool);
    const ok = sent.filter((u) => u.outcome === 'ok').length;
    const notRun = sent.filter((u) => u.outcome === 'not_run').length;
    const rows = unkeyedRows[tool].size;
    if (rows < ok || rows > sent.length - notRun) violation('unkeyed_count', `${tool}: ${rows} rows for ${sent.length} calls (${ok} answered ok, ${notRun} refused)`);
  }
  // Restarts: one operation per key at most, each from one of our intents, and each job's
  // restart counter equals its operations.
  const ops = sqlJson('SELECT operation_id, idempotency_key, job_id, intent_id FROM deploy_operations');
  const byIntent = new Map(restartIntents.map((ri) => [ri.intent_id, ri]));
  const perIntent = new Map();
  for (const op of ops) {
    const ri = byIntent.get(op.intent_id);
    if (!ri) { violation('stray_operation', short(op)); continue; }
    perIntent.set(op.intent_id, (perIntent.get(op.intent_id) ?? 0) + 1);
    if (ri.variant === 'no_approval') violation('restart_without_approval', short(op));
  }
  for (const [intentId, count] of perIntent) if (count > 1) violation('restart_two_operations', `${intentId}: ${count}`);
  if (ops.length !== opsFound) violation('restart_operations_vs_lookup', `${ops.length} operations in the file, lookups found ${opsFound}`);
  const restarts = sqlJson('SELECT sum(restarts) AS n FROM deploy_jobs')[0]?.n ?? 0;
  if (restarts !== ops.length) violation('restart_counter', `deploy_jobs.restarts ${restarts} vs ${ops.length} operations`);
  tableChecks.push(`${ops.length} restart operations = Σ deploy_jobs.restarts = operations found by lookup`);
  const working = sqlJson("SELECT count(*) AS n FROM tasks WHERE status IN ('working','input_required')")[0]?.n ?? 0;
  if (working !== 0) violation('tasks_left_working', `${working} tasks still working after the run`);
  const inProgress = sqlJson("SELECT count(*) AS n FROM ledger WHERE state NOT IN ('committed','failed')")[0]?.n ?? 0;
  if (inProgress !== 0) violation('ledger_state', `${inProgress} ledger rows neither committed nor failed`);
} else {
  tableChecks.push('sqlite3 CLI not installed: balances, inventory and backend tables not read (ledger_lookup checks only)');
}

// ---------------------------------------------------------------------------------------
// Memory: VmRSS each second. After the warm-up, the median of the first window and of the
// last window of the mix (a minute each, less on short runs) may differ by at most
// max(--rss-pct % of the first, --rss-mb MB).

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : NaN; };
function slopeKbPerMin(samples) {
  if (samples.length < 3) return NaN;
  const n = samples.length;
  const mx = samples.reduce((s, [x]) => s + x, 0) / n;
  const my = samples.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0, den = 0;
  for (const [x, y] of samples) { num += (x - mx) * (y - my); den += (x - mx) ** 2; }
  return den ? (num / den) * 60000 : NaN;
}
const warmEnd = mixStart + opts.warmup * 1000;
const windowMs = Math.min(60000, (mixEnd - warmEnd) / 3);
const rssReport = [];
for (const k of keels) {
  const steady = k.rss.filter(([t]) => t >= warmEnd && t <= mixEnd);
  const first = steady.filter(([t]) => t < warmEnd + windowMs).map(([, v]) => v);
  const last = steady.filter(([t]) => t > mixEnd - windowMs).map(([, v]) => v);
  const m1 = median(first), m2 = median(last);
  const allowed = Math.max(m1 * opts.rssPct / 100, opts.rssMb * 1024);
  const grew = m2 - m1;
  const ok = Number.isFinite(grew) && grew <= allowed;
  if (!ok) violation('rss_growth', `${k.name}: first-window median ${(m1 / 1024).toFixed(1)} MB, last ${(m2 / 1024).toFixed(1)} MB (+${(grew / 1024).toFixed(1)} MB > allowed ${(allowed / 1024).toFixed(1)} MB)`);
  const peak = Math.max(...k.rss.filter(([t]) => t <= mixEnd).map(([, v]) => v));
  const peakAll = Math.max(...k.rss.map(([, v]) => v));
  // Growth per request between the windows' midpoints: the leak a request would have to
  // cause for the growth seen (an upper bound: bounded caches fill meanwhile too).
  const mid1 = warmEnd + windowMs / 2, mid2 = mixEnd - windowMs / 2;
  let between = 0;
  for (const rec of k.recs.values()) if (rec.sentAt >= mid1 && rec.sentAt < mid2) between++;
  rssReport.push(`  ${k.name}: start ${(k.rss[0][1] / 1024).toFixed(1)} MB, after warm-up ${((steady[0]?.[1] ?? NaN) / 1024).toFixed(1)} MB, ` +
    `first ${Math.round(windowMs / 1000)} s median ${(m1 / 1024).toFixed(1)} MB, last ${Math.round(windowMs / 1000)} s median ${(m2 / 1024).toFixed(1)} MB ` +
    `(${grew >= 0 ? '+' : ''}${(grew / 1024).toFixed(2)} MB, allowed +${(allowed / 1024).toFixed(1)}: ${ok ? 'ok' : 'FAIL'})`);
  rssReport.push(`     ${between} requests between the windows' midpoints: ${Math.round(grew * 1024 / Math.max(1, between))} bytes/request; ` +
    `slope after warm-up ${(slopeKbPerMin(steady) / 1024).toFixed(2)} MB/min; peak ${(peak / 1024).toFixed(1)} MB in the mix, ` +
    `${(peakAll / 1024).toFixed(1)} MB with the final verification; ${k.rss.length} samples`);
  // A coarse curve: the median of each tenth of the run.
  const tenth = (mixEnd - mixStart) / 10;
  const curve = [];
  for (let i = 0; i < 10; i++) {
    const part = k.rss.filter(([t]) => t >= mixStart + i * tenth && t < mixStart + (i + 1) * tenth).map(([, v]) => v);
    curve.push((median(part) / 1024).toFixed(1));
  }
  rssReport.push(`     curve (MB, each tenth of the mix): ${curve.join(' ')}`);
}

// ---------------------------------------------------------------------------------------
// Report

const pad = (s, n) => String(s).padEnd(n);
console.log(`\n== mix: ${((mixEnd - mixStart) / 1000).toFixed(0)} s, ${opts.runners} runners, kill-switch windows ${killWindows}`);
for (const [kind, m] of [...kinds.entries()].sort()) {
  const total = [...m.values()].reduce((s, v) => s + v, 0);
  console.log(`  ${pad(kind, 26)} ${pad(total, 6)} ${[...m.entries()].sort((a, b) => b[1] - a[1]).map(([o, c]) => `${o} ${c}`).join(', ')}`);
}
for (const k of keels) {
  const c = k.counts;
  console.log(`  keel ${k.name}: ${k.recs.size} requests (${(k.recs.size / ((mixEnd - mixStart) / 1000)).toFixed(0)}/s), ${c.responses} responses, ${c.cancels} cancels sent, ` +
    `${c.progress} progress, ${c.taskStatus} task status notifications, ${(c.bytes / 1e6).toFixed(1)} MB read, ` +
    `${traceLines[k.name]} trace records, ${k.cpuMix.toFixed(1)} CPU s in the mix, exit ${exits.find((e) => e.name === k.name)?.code} ${exits.find((e) => e.name === k.name)?.ms} ms after EOF`);
}
console.log(`  cancels of requests still unanswered: ${cancelStats.sent} (won: ${cancelStats.won} — never answered; ` +
  `lost the race: ${cancelStats.lostAnswered} — answered once; not traced: ${cancelStats.notTraced})`);
console.log(`  keyed intents: ${intents.length} (${intentStats.tries} tries): executed ${intentStats.executed} ` +
  `(of which final failures ${intentStats.finalFailures}), surely never run ${intentStats.never}, ` +
  `unknown to the client ${intentStats.unknown} (the ledger says ${intentStats.unknownRan} ran)`);
console.log(`  unkeyed writes: ${unkeyed.length} (${unkeyed.filter((u) => u.outcome === 'ok').length} answered ok)`);
console.log(`  restart intents: ${restartStats.intents}: one operation ${restartStats.withOperation}, nothing done ${restartStats.nothingDone}, ` +
  `unknown ${restartStats.unknown}; lost answers ${restartStats.lostAnswers}, lookups that found the operation ${restartStats.reconciled}`);
for (const line of tableChecks) console.log(`  ${line}`);

console.log('\n== memory (VmRSS, sampled every second)');
for (const line of rssReport) console.log(line);

for (const k of keels) {
  console.log(`\n== keel trace summary (${k.name})`);
  const s = spawnSync(opts.keel, ['trace', 'summary', k.files.trace], { encoding: 'utf8', maxBuffer: 1 << 26 });
  process.stdout.write(s.stdout);
  if (s.status !== 0) violation('trace_summary', `${k.name}: exit ${s.status} ${s.stderr}`);
  let log = '';
  try { log = readFileSync(k.files.log, 'utf8'); } catch { /* no log written */ }
  const errors = log.split('\n').filter((l) => / E /.test(l));
  const warns = log.split('\n').filter((l) => / W /.test(l));
  console.log(`  keel ${k.name} log: ${warns.length} warnings, ${errors.length} errors`);
  for (const l of errors.slice(0, 5)) console.log(`    ${l}`);
}

const INVARIANTS = [
  ['one answer per request (zero or one after a cancel), no malformed line, ids never mixed',
    ['malformed_line', 'unknown_id', 'duplicate_response', 'not_answered', 'no_answer', 'not_exactly_one_answer', 'mixed_answer', 'idless_errors', 'unknown_method', 'ping']],
  ['no answer after a cancel won; a cancel that lost is answered once',
    ['answered_after_cancel_won', 'cancel_lost_but_no_answer', 'cancelled_without_cancel']],
  ['progress: known token, increasing, never after the answer', ['progress_unknown_token', 'progress_after_response', 'progress_not_increasing', 'task_progress_without_related_task']],
  ['timeouts fire on the right clock', ['timeout_missed', 'timeout_early']],
  ['keyed writes: one execution per intent, ledger = answers = effect rows, mismatches refused',
    ['executed_twice', 'executions_mismatch', 'ledger_lookup_vs_file', 'ledger_state', 'effects_vs_ledger', 'mismatch_executed', 'mismatch_not_refused', 'keyed_unexpected_answer', 'keyed_rpc_error', 'ledger_lookup_live', 'verify_lookup_failed']],
  ['balances and stock = opening − executed intents; unkeyed effects counted', ['balance', 'inventory', 'stray_effect', 'unkeyed_effect_missing', 'unkeyed_count', 'unkeyed_replayed', 'unkeyed_unexpected_answer']],
  ['restarts: at most one operation per intent, lost answers reconciled by key', ['restart_two_operations', 'restart_not_replayed', 'restart_operation_missing', 'restart_ran_after_refusal', 'lost_response_not_found', 'lost_response_shape', 'stray_operation', 'restart_without_approval', 'restart_operations_vs_lookup', 'restart_counter', 'restart_unexpected_answer', 'restart_rpc_error']],
  ['retries: never after an ambiguous unsafe write, never past max attempts', ['retried_unsafe', 'retried_past_max_attempts', 'ambiguous_write_without_reconciliation', 'flaky_unexpected_answer']],
  ['tasks: created, polled, cancelled (cancelled forever), results and late outcomes', ['task_create', 'tasks_get', 'tasks_list', 'task_result', 'task_cancel', 'task_cancelled_result', 'task_status_changed_after_terminal', 'task_late_outcome', 'task_result_without_related_task', 'tasks_left_working']],
  ['memory: RSS after warm-up does not grow', ['rss_growth']],
  ['clean exit, database intact, trace readable', ['exit', 'integrity_check', 'trace_summary', 'trace_line', 'trace_two_ends', 'sqlite3', 'admin_block_writes', 'spawn', 'soak_error', 'get_job_unexpected', 'get_job_404', 'get_job_freshness', 'latch_release']],
];
console.log('\n== invariants');
const listed = new Set(INVARIANTS.flatMap(([, ks]) => ks));
for (const [title, ks] of INVARIANTS) {
  const n = ks.reduce((s, kind) => s + (violations.get(kind)?.count ?? 0), 0);
  console.log(`  ${n === 0 ? 'ok  ' : 'FAIL'} ${title}${n ? ` (${n})` : ''}`);
}
for (const kind of violations.keys()) if (!listed.has(kind)) console.log(`  FAIL ${kind}`);
if (violations.size) {
  console.log('\n== violations (first examples)');
  for (const [kind, v] of violations) {
    console.log(`  ${kind}: ${v.count}`);
    for (const e of v.examples) console.log(`    ${e.length > 600 ? e.slice(0, 600) + '…' : e}`);
  }
  console.log(`\nfiles kept in ${dir}`);
} else if (!opts.keep) {
  rmSync(dir, { recursive: true, force: true });
}
const total = [...violations.values()].reduce((s, v) => s + v.count, 0);
console.log(`\nsoak: seed ${opts.seed}: ${total === 0 ? 'every invariant held' : `${total} violation(s)`}`);
process.exit(total === 0 ? 0 : 1);
