// Driver for `scripts/bench --http` and `scripts/bench --http-cancel`: keel serving MCP over
// Streamable HTTP, measured from outside, against the official TypeScript SDK v2 server
// (@modelcontextprotocol/server, sdk_http_echo_server.mjs: createMcpHandler, stateless, on
// node:http) in the same run on the same machine. Like the other benches it prints figures
// and asserts nothing: goals are printed as PASS/MISS for information, and the exit status
// is 0 unless a server fails to run (spawn error, no "listening on" line within 15 s, an
// early exit, a stall of 15 s with requests outstanding). Error responses are counted and
// printed, not raised.
//
// Servers, each started by this Node driver with spawn() in a fresh temp dir, with the
// environment minus KEEL_* variables, and told to listen on 127.0.0.1:0 (the port is read
// from the "listening on http://HOST:PORT/mcp" line each prints on stderr):
//   keel  keel --http 127.0.0.1:0 --no-stdio --db <dir>/keel.db --max-inflight 256
//         (its built-in `echo` tool; keel's other settings at their defaults: --workers =
//         hardware threads, at least 2)
//   sdk   node sdk_http_echo_server.mjs 127.0.0.1:0 (the same `echo` tool: McpServer +
//         registerTool with a zod schema, one fresh McpServer per request from the factory,
//         as createMcpHandler works; its MCP 2026-07-28 path answers these requests)
// Both get the same request, and both answer it with a single JSON body (no SSE):
//   POST /mcp  Content-Type: application/json; Accept: application/json, text/event-stream;
//   MCP-Protocol-Version: 2026-07-28; Mcp-Method: tools/call; Mcp-Name: echo
//   {"jsonrpc":"2.0","id":N,"method":"tools/call","params":{"name":"echo","arguments":
//    {"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
//    "io.modelcontextprotocol/clientCapabilities":{}}}}
//
// Throughput (--http): for each repetition (--reps), for each client count C (--clients),
// keel and the SDK server take turns (keel first in odd repetitions, the SDK first in even
// ones), each on a FRESH server process per (server, C, repetition), so each row has its own
// peak RSS and machine noise lands on both. One run:
//   spawn -> "listening" line -> a client with C keep-alive connections (undici Pool,
//   connections C, pipelining 1, when undici is in node_modules; else node:http Agent
//   keepAlive, maxSockets C; --client raw: the driver's own minimal HTTP/1.1 client, one
//   net.Socket per connection, about a third of undici's CPU per request) -> warm-up (--warmup requests, C at a time) -> utime+stime from
//   /proc/<pid>/stat -> measured phase (--requests requests: C loops, each sending its next
//   request when its previous response body has been read, so exactly C are outstanding) ->
//   /proc/<pid>/stat again and VmHWM from /proc/<pid>/status -> client closed -> SIGTERM ->
//   exit awaited (SIGKILL after 5 s, reported).
//   Every response is checked: status 200, and a body carrying the echo ("text":"hi") with no
//   "error" member and no "isError":true (the first body of each run is parsed in full); any
//   other answer or a transport error (reset, refused) counts as an error, and a row with
//   errors says so. Latency: request issued -> response body read (performance.now()).
//   req/s = requests / wall time of the measured phase. CPU per request = the server's
//   utime+stime over the measured phase / requests (clock ticks, usually 10 ms, so short
//   phases round). Printed per (server, C): the MEDIAN over repetitions of each figure (peak
//   RSS: median and worst), with the driver's own CPU per request (it shares the 2 cores:
//   where it exceeds the server's, the driver bounds req/s, and with C outstanding the
//   latency too, as latency ~ C / req/s). Connections opened or lost during the measured
//   phases are counted (undici and raw clients; with keep-alive and no resets: none).
//
// Cancel by disconnect (--http-cancel alone; also run after the throughput runs of --http
//   unless --no-cancel): one keel with --test-tools --trace-file <dir>/trace.jsonl (and the
//   flags above). One iteration, one at a time, each on a new TCP connection:
//     1. POST a `sleep` tools/call {"ms":20000} (the modern request above, Mcp-Name: sleep);
//     2. poll the trace file (every 1 ms) until its tool.attempt.start record for this
//        JSON-RPC id is there: the sleep is running on a worker (a deterministic signal);
//     3. t_disconnect = the wall clock just before socket.destroy() (close(2): a FIN);
//     4. poll the trace until the call's tool.attempt.end record (the worker's sleep has
//        returned: the work stopped) and tool.call.end (keel's loop ended the call; reason
//        "exchange closed") are there.
//   Figures: "work stopped" = attempt.end ts - t_disconnect, "call ended" = call.end ts -
//   t_disconnect; p50/p99/max of each (goal: work stopped p99 <= 10 ms). The trace's `ts`
//   is keel's wall clock (RFC 3339, microseconds); the driver's wall clock is
//   performance.now() anchored to Date.now() at its millisecond edges (calibrateWall;
//   calibrated before and after the iterations; the drift between the two is printed).
//   Each record is written when its event happens, so its ts is the event's time up to the
//   write. Every iteration must end with outcome "cancelled" and no response; anything else
//   (a response, another outcome, no start or end within 5 s) is counted and printed.
//   --cancel-warmup iterations first, unrecorded.
import { readFileSync, existsSync, mkdtempSync, rmSync, openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { createConnection } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { backgroundLoad } from './machine_load.mjs';
import { forEachArg, table } from './cli.mjs';
import { spawnLines } from '../../tests/support/keel_process.mjs';
import { log, die, ServerFailed, cleanEnv, summary, fmt, backgroundLines, goalLines } from './coordinator_bench.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

const GOAL_RPS_X = 3;          // keel req/s >= 3x the SDK's, at 16 and 64 clients
const GOAL_CPU_RATIO = 0.25;   // keel CPU per request <= 1/4 of the SDK's
const GOAL_P99_MS = 2;         // keel p99 at 16 clients
const GOAL_RSS_MB = 32;        // keel peak RSS at 64 clients
const GOAL_CANCEL_MS = 10;     // disconnect -> work stopped, p99
const STALL_MS = 15000;

export const USAGE = `usage: scripts/bench --http [--requests N] [--warmup N] [--clients 1,16,64] [--reps N]
                            [--servers keel,sdk] [--client undici|node|raw] [--no-cancel] [--iterations N]
                            [--cancel-warmup N] [--keel PATH] [--sdk-modules DIR] [--json]
       scripts/bench --http-cancel [--iterations N] [--cancel-warmup N] [--keel PATH] [--json]
  --http            MCP over Streamable HTTP: keel vs the official TypeScript SDK v2 server,
                    C keep-alive clients sending echo tools/call back to back; then cancel by
                    disconnect (method: scripts/bench_support/http_bench.mjs)
  --http-cancel     only the cancel-by-disconnect part
    --requests N    measured requests per (server, C, repetition) run (default 2000)
    --warmup N      warm-up requests before each measured phase (default 200)
    --clients L     comma-separated client (connection) counts (default 1,16,64)
    --reps N        repetitions; keel and the SDK take turns in each (default 5)
    --servers L     keel,sdk (default both; the ratios need both)
    --client K      undici (default: an undici Pool if node_modules has undici, else node:http),
                    node (node:http Agent, keepAlive, maxSockets = C) or raw (the driver's own
                    minimal HTTP/1.1 client on net sockets, prebuilt request bytes: the cheapest
                    driver, so the servers rather than the client bound req/s)
    --no-cancel     skip the cancel-by-disconnect part
    --iterations N  disconnects measured (default 200)
    --cancel-warmup N  unrecorded disconnects first (default 10)
  --keel PATH       keel binary (default $KEEL_BINARY or build/keel)
  --sdk-modules DIR node_modules holding @modelcontextprotocol/server and zod for the SDK
                    peer (default: the repository's node_modules)
  --json            print the results as JSON on stdout instead of the tables
Progress goes to stderr. Exit 0 unless a server fails to run.`;

function parseArgs(argv) {
  const o = {
    throughput: false,
    cancel: false,
    requests: 2000,
    warmup: 200,
    clients: [1, 16, 64],
    reps: 5,
    servers: ['keel', 'sdk'],
    client: 'undici',
    noCancel: false,
    iterations: 200,
    cancelWarmup: 10,
    keel: process.env.KEEL_BINARY || join(repo, 'build', 'keel'),
    sdkModules: join(repo, 'node_modules'),
    json: false,
  };
  forEachArg(argv, USAGE, die, (a, val, int) => {
    switch (a) {
      case '--http': o.throughput = true; break;
      case '--http-cancel': o.cancel = true; break;
      case '--requests': o.requests = int(val(), 1); break;
      case '--warmup': o.warmup = int(val()); break;
      case '--clients': o.clients = val().split(',').map((s) => int(s, 1)); break;
      case '--reps': o.reps = int(val(), 1); break;
      case '--servers': o.servers = val().split(','); break;
      case '--no-cancel': o.noCancel = true; break;
      case '--client': o.client = val(); if (!['undici', 'node', 'raw'].includes(o.client)) die('--client: undici, node or raw'); break;
      case '--iterations': o.iterations = int(val(), 1); break;
      case '--cancel-warmup': o.cancelWarmup = int(val()); break;
      case '--keel': o.keel = resolve(val()); break;
      case '--sdk-modules': o.sdkModules = resolve(val()); break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0);
      default: die(`unknown argument: ${a}\n${USAGE}`);
    }
  });
  for (const s of o.servers) if (!['keel', 'sdk'].includes(s)) die(`unknown server: ${s}`);
  if (o.throughput && !o.noCancel) o.cancel = true;
  if (o.cancel && !o.throughput && o.noCancel) die('--http-cancel with --no-cancel measures nothing');
  if (o.throughput && o.servers.includes('sdk')) {
    for (const pkg of ['@modelcontextprotocol/server', 'zod']) {
      if (!existsSync(join(o.sdkModules, ...pkg.split('/'), 'package.json'))) {
        die(`the SDK peer needs ${pkg} in ${o.sdkModules} (package.json devDependencies:` +
          ' "@modelcontextprotocol/server": "2.4.0", then npm ci; or --sdk-modules DIR; or --servers keel)', 1);
      }
    }
  }
  if ((o.throughput && o.servers.includes('keel')) || o.cancel) {
    if (!existsSync(o.keel)) die(`no keel binary at ${o.keel} (run scripts/build)`, 1);
  }
  return o;
}

const CLK_TCK = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; }
})();

function cpuSeconds(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // f[0] is field 3 (state)
}
function peakRssMB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

// ---------------------------------------------------------------------------------------
// the request

const ECHO_TEXT = 'hi';
const META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const echoBody = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${ECHO_TEXT}"},${META}}}`;
const sleepBody = (id, ms) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"sleep","arguments":{"ms":${ms}},${META}}}`;
const headersFor = (name) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': name,
});
const ECHO_HEADERS = headersFor('echo');

// A body that answers echo request `id`: cheap scans on every one, a full parse when `full`.
function echoProblem(status, text, full) {
  if (status !== 200) return `HTTP ${status}: ${text.slice(0, 200)}`;
  if (text.indexOf(`"text":"${ECHO_TEXT}"`) < 0 || text.indexOf('"error":') >= 0 || text.indexOf('"isError":true') >= 0) {
    return `unexpected body: ${text.slice(0, 300)}`;
  }
  if (full) {
    let m;
    try {
      // An SSE answer would be "data: {...}" lines; both servers answer echo with JSON.
      m = JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: ')).slice(6));
    } catch { return `not JSON: ${text.slice(0, 300)}`; }
    if (m?.result?.content?.[0]?.text !== ECHO_TEXT) return `no echo in: ${text.slice(0, 300)}`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// the client: C keep-alive connections

let undiciMod; // undefined: not looked up yet; null: not available
let clientChoice = 'undici'; // --client
async function loadUndici() {
  if (clientChoice !== 'undici') return null;
  if (undiciMod !== undefined) return undiciMod;
  try {
    const req = createRequire(join(repo, 'package.json'));
    undiciMod = await import(pathToFileURL(req.resolve('undici')).href);
  } catch {
    undiciMod = null;
  }
  return undiciMod;
}

async function clientKind() {
  if (clientChoice === 'raw') return 'raw: the driver\'s own minimal HTTP/1.1 client, one net.Socket per client';
  const u = await loadUndici();
  if (!u) return 'node:http Agent (keepAlive, maxSockets = C)';
  const v = (() => {
    try { return JSON.parse(readFileSync(join(repo, 'node_modules', 'undici', 'package.json'), 'utf8')).version; } catch { return '?'; }
  })();
  return `undici ${v} Pool (connections = C, pipelining 1)`;
}

// post(body) -> Promise<{status, text}>; close(); destroy().
async function makeClient(url, C) {
  const u = new URL(url);
  if (clientChoice === 'raw') return rawClient(u, C);
  const undici = await loadUndici();
  if (undici) {
    const pool = new undici.Pool(u.origin, { connections: C, pipelining: 1 });
    const conn = { connects: 0, disconnects: 0, disconnectReasons: {} };
    pool.on('connect', () => { conn.connects++; });
    pool.on('disconnect', (origin, targets, err) => {
      conn.disconnects++;
      const k = err?.code ?? err?.message ?? 'closed';
      conn.disconnectReasons[k] = (conn.disconnectReasons[k] ?? 0) + 1;
    });
    pool.on('connectionError', (origin, targets, err) => {
      const k = `connect failed: ${err?.code ?? err?.message}`;
      conn.disconnectReasons[k] = (conn.disconnectReasons[k] ?? 0) + 1;
    });
    return {
      conn,
      post: async (body) => {
        const r = await pool.request({ path: u.pathname, method: 'POST', headers: ECHO_HEADERS, body });
        return { status: r.statusCode, text: await r.body.text() };
      },
      close: () => pool.close(),
      destroy: () => pool.destroy(),
    };
  }
  const agent = new Agent({ keepAlive: true, maxSockets: C });
  return {
    conn: null,
    post: (body) => new Promise((res, rej) => {
      const req = httpRequest(u, { method: 'POST', agent, headers: { ...ECHO_HEADERS, 'content-length': Buffer.byteLength(body) } }, (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c) => { text += c; });
        r.on('end', () => res({ status: r.statusCode, text }));
        r.on('error', rej);
      });
      req.on('error', rej);
      req.end(body);
    }),
    close: async () => agent.destroy(),
    destroy: async () => agent.destroy(),
  };
}

// A minimal HTTP/1.1 keep-alive client: up to C net.Sockets, each carrying one request at a
// time (request bytes built once per body, no header objects); responses framed by
// Content-Length or chunked transfer coding. The same {post, close, destroy, conn} face.
function rawClient(u, C) {
  const head = `POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\n` +
    Object.entries(ECHO_HEADERS).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const conn = { connects: 0, disconnects: 0, disconnectReasons: {} };
  const idle = [];
  const all = new Set();
  let closed = false;
  const lost = (c, err) => {
    if (c.dead) return;
    c.dead = true;
    all.delete(c);
    const i = idle.indexOf(c);
    if (i >= 0) idle.splice(i, 1);
    conn.disconnects++;
    const k = err?.code ?? (err ? err.message : 'closed');
    conn.disconnectReasons[k] = (conn.disconnectReasons[k] ?? 0) + 1;
    if (c.pending) {
      const p = c.pending;
      c.pending = null;
      const e = err ?? Object.assign(new Error('connection closed by the server'), { code: 'ECLOSED' });
      p.reject(e);
    }
  };
  // Parses c.buf; returns {status, text, close} when a whole response is there.
  const parse = (c) => {
    const end = c.buf.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const headText = c.buf.slice(0, end).toString('latin1');
    const status = Number(headText.slice(9, 12));
    const lower = headText.toLowerCase();
    const close = /\r\nconnection:\s*close/.test(lower);
    let body;
    let used;
    const cl = /\r\ncontent-length:\s*(\d+)/.exec(lower);
    if (cl) {
      const n = Number(cl[1]);
      if (c.buf.length < end + 4 + n) return null;
      body = c.buf.subarray(end + 4, end + 4 + n);
      used = end + 4 + n;
    } else if (/\r\ntransfer-encoding:\s*chunked/.test(lower)) {
      const parts = [];
      let pos = end + 4;
      for (;;) {
        const le = c.buf.indexOf('\r\n', pos);
        if (le < 0) return null;
        const size = parseInt(c.buf.toString('latin1', pos, le), 16);
        if (c.buf.length < le + 2 + size + 2) return null;
        if (size === 0) { used = le + 4; break; }
        parts.push(c.buf.subarray(le + 2, le + 2 + size));
        pos = le + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      return null; // a body up to the close: not expected from either server
    }
    c.buf = c.buf.subarray(used);
    return { status, text: body.toString('utf8'), close };
  };
  const open = () => new Promise((res, rej) => {
    const sock = createConnection({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) });
    sock.setNoDelay(true);
    const c = { sock, buf: Buffer.alloc(0), pending: null, dead: false };
    sock.once('connect', () => { conn.connects++; all.add(c); res(c); });
    sock.on('data', (d) => {
      c.buf = c.buf.length ? Buffer.concat([c.buf, d]) : d;
      const r = c.pending && parse(c);
      if (!r) return;
      const p = c.pending;
      c.pending = null;
      if (r.close) { sock.destroy(); lost(c, null); } else if (!closed) idle.push(c);
      p.resolve({ status: r.status, text: r.text });
    });
    sock.on('error', (e) => { if (!all.has(c)) rej(e); lost(c, e); });
    sock.on('close', () => lost(c, null));
  });
  return {
    conn,
    post: async (body) => {
      const c = idle.pop() ?? await open();
      return new Promise((resolve, reject) => {
        c.pending = { resolve, reject };
        c.sock.write(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
    },
    close: async () => { closed = true; for (const c of all) c.sock.end(); },
    destroy: async () => { closed = true; for (const c of [...all]) { c.sock.destroy(); lost(c, null); } },
  };
}

// ---------------------------------------------------------------------------------------
// the servers

// Starts `name` and waits for its "listening on http://..." line. Returns
// { name, pid, url, startMs, p, stop(), describe(e) }.
async function startServer(name, o, dir, extraArgs = []) {
  let cmd, args;
  if (name === 'keel') {
    cmd = o.keel;
    args = ['--http', '127.0.0.1:0', '--no-stdio', '--db', join(dir, 'keel.db'), '--max-inflight', '256', ...extraArgs];
  } else {
    cmd = process.execPath;
    args = [join(here, 'sdk_http_echo_server.mjs'), '127.0.0.1:0', o.sdkModules];
  }
  let failure = null;
  const p = spawnLines(cmd, args, {
    cwd: dir, env: cleanEnv(), stderrLimit: 8000,
    onError: (e, where) => { failure ??= where === 'spawn' ? `spawn failed: ${e.message}` : `stdin: ${e.message}`; },
  });
  const s = { name, args, pid: p.pid, p, closing: false, url: null, startMs: NaN };
  s.failure = () => failure ?? (p.exit && !s.closing ? `exited early (code ${p.exit.code}, signal ${p.exit.signal})` : null);
  s.describe = (msg) => {
    let m = `${name}: ${msg}`;
    if (p.exit) m += ` [process exited: code ${p.exit.code}, signal ${p.exit.signal}]`;
    if (p.stderr.trim()) m += `\n--- ${name} stderr (tail) ---\n${p.stderr}`;
    return m;
  };
  s.stop = async () => {
    s.closing = true;
    if (p.exit) return { ...p.exit, ms: 0, killed: false, early: true };
    const t = performance.now();
    p.child.kill('SIGTERM');
    let ex = await p.waitExit(5000);
    let killed = false;
    if (!ex) { killed = true; p.child.kill('SIGKILL'); ex = await p.waitExit(5000); }
    return { code: ex?.code ?? null, signal: ex?.signal ?? null, ms: performance.now() - t, killed };
  };
  const t0 = performance.now();
  while (!s.url) {
    const m = /listening on (http:\/\/\S+)/.exec(p.stderr);
    if (m) { s.url = m[1]; break; }
    const f = s.failure();
    if (f) throw new ServerFailed(s.describe(f));
    if (performance.now() - t0 > 15000) { p.child.kill('SIGKILL'); throw new ServerFailed(s.describe('no "listening on" line within 15 s')); }
    await new Promise((r) => setTimeout(r, 2));
  }
  s.startMs = performance.now() - p.startedAt;
  return s;
}

// ---------------------------------------------------------------------------------------
// throughput

// `count` echo requests from C loops; ids base..base+count-1. Latencies (ms) into lat.
async function phase(server, client, C, count, base, lat, what) {
  let next = 0, done = 0, errors = 0, firstError = null, stalled = false;
  const kinds = new Map();
  const bad = (kind, msg) => {
    errors++;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    firstError ??= msg;
  };
  const loop = async () => {
    while (next < count && !stalled) {
      const idx = next++;
      const t = performance.now();
      try {
        const r = await client.post(echoBody(base + idx));
        const problem = echoProblem(r.status, r.text, idx === 0);
        if (problem) bad(r.status === 200 ? 'bad body' : `HTTP ${r.status}`, problem);
      } catch (e) {
        if (stalled) return;
        const f = server.failure();
        if (f) { why = f; stalled = true; return; }
        bad(e.code ?? e.name ?? 'error', `${e.code ?? ''} ${e.message}`.trim());
      }
      if (lat) lat[idx] = performance.now() - t;
      done++;
    }
  };
  let last = -1, why = null;
  const watchdog = setInterval(() => {
    const f = server.failure();
    if (f || done === last) {
      why = f ?? `stalled for ${STALL_MS / 1000} s during ${what} (${done} of ${count} answered)`;
      stalled = true;
      client.destroy().catch(() => {});
    }
    last = done;
  }, STALL_MS);
  const t = performance.now();
  await Promise.all(Array.from({ length: Math.min(C, count) }, loop));
  const wall = performance.now() - t;
  clearInterval(watchdog);
  if (stalled) throw new ServerFailed(server.describe(why));
  const f = server.failure();
  if (f) throw new ServerFailed(server.describe(f));
  return { wall, errors, firstError, errorKinds: Object.fromEntries(kinds) };
}

async function runOne(name, C, rep, o) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-http-bench-'));
  let server = null, client = null;
  try {
    server = await startServer(name, o, dir);
    client = await makeClient(server.url, C);
    let id = 1;
    const warm = o.warmup > 0 ? await phase(server, client, C, o.warmup, id, null, 'warm-up') : { errors: 0 };
    id += o.warmup;
    const lat = new Float64Array(o.requests);
    const conn0 = client.conn ? { ...client.conn, disconnectReasons: { ...client.conn.disconnectReasons } } : null;
    const cpu0 = cpuSeconds(server.pid);
    const drv0 = process.cpuUsage();
    const m = await phase(server, client, C, o.requests, id, lat, 'measured requests');
    const drv = process.cpuUsage(drv0);
    const cpu1 = cpuSeconds(server.pid);
    const rss = peakRssMB(server.pid);
    // Connections opened and lost during the measured phase (undici only): with keep-alive
    // and no resets, 0 and 0.
    const conn = conn0 && {
      connects: client.conn.connects - conn0.connects,
      disconnects: client.conn.disconnects - conn0.disconnects,
      reasons: Object.fromEntries(Object.entries(client.conn.disconnectReasons)
        .map(([k, v]) => [k, v - (conn0.disconnectReasons[k] ?? 0)]).filter(([, v]) => v > 0)),
      warmup_connects: conn0.connects,
    };
    await client.close().catch(() => {});
    client = null;
    const exit = await server.stop();
    const l = summary(lat);
    return {
      server: name, clients: C, rep, requests: o.requests,
      req_per_s: o.requests / (m.wall / 1000),
      p50_us: l.p50 * 1000, p90_us: l.p90 * 1000, p99_us: l.p99 * 1000, max_us: l.max * 1000,
      cpu_us_per_req: ((cpu1 - cpu0) * 1e6) / o.requests,
      driver_cpu_us_per_req: (drv.user + drv.system) / o.requests,
      peak_rss_mb: rss,
      start_ms: server.startMs,
      errors: m.errors, warmup_errors: warm.errors, first_error: m.firstError ?? warm.firstError ?? null,
      error_kinds: m.errorKinds,
      connections: conn,
      exit,
    };
  } finally {
    if (client) await client.destroy().catch(() => {});
    if (server && !server.p.exit) { server.closing = true; server.p.child.kill('SIGKILL'); }
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function aggregate(runs, o) {
  const rows = [];
  for (const C of o.clients) {
    for (const name of o.servers) {
      const rs = runs.filter((r) => r.server === name && r.clients === C);
      if (!rs.length) continue;
      const med = (k) => median(rs.map((r) => r[k]));
      rows.push({
        server: name, clients: C, reps: rs.length,
        req_per_s: med('req_per_s'),
        req_per_s_min: Math.min(...rs.map((r) => r.req_per_s)), req_per_s_max: Math.max(...rs.map((r) => r.req_per_s)),
        p50_us: med('p50_us'), p99_us: med('p99_us'), max_us: Math.max(...rs.map((r) => r.max_us)),
        cpu_us_per_req: med('cpu_us_per_req'), driver_cpu_us_per_req: med('driver_cpu_us_per_req'),
        peak_rss_mb: med('peak_rss_mb'), peak_rss_mb_max: Math.max(...rs.map((r) => r.peak_rss_mb)),
        start_ms: med('start_ms'),
        errors: rs.reduce((a, r) => a + r.errors + r.warmup_errors, 0),
        runs_with_errors: rs.filter((r) => r.errors + r.warmup_errors > 0).length,
        first_error: rs.find((r) => r.first_error)?.first_error ?? null,
        reconnects: rs.some((r) => r.connections) ? rs.reduce((a, r) => a + (r.connections?.connects ?? 0), 0) : null,
        lost_connections: rs.some((r) => r.connections) ? rs.reduce((a, r) => a + (r.connections?.disconnects ?? 0), 0) : null,
        lost_reasons: rs.reduce((acc, r) => {
          for (const [k, v] of Object.entries(r.connections?.reasons ?? {})) acc[k] = (acc[k] ?? 0) + v;
          return acc;
        }, {}),
        odd_exits: rs.filter((r) => r.exit.killed || r.exit.early || (r.exit.code !== 0 && r.exit.signal !== 'SIGTERM'))
          .map((r) => ({ rep: r.rep, ...r.exit })),
      });
    }
  }
  return rows;
}

async function runThroughput(o) {
  const runs = [];
  for (let rep = 1; rep <= o.reps; rep++) {
    for (const C of o.clients) {
      const order = rep % 2 ? o.servers : [...o.servers].reverse();
      for (const name of order) {
        const r = await runOne(name, C, rep, o);
        log(`rep ${rep}/${o.reps}, ${name}, ${C} client(s): ${fmt(r.req_per_s)} req/s, p99 ${fmt(r.p99_us)} us, ` +
          `CPU ${fmt(r.cpu_us_per_req, 1)} us/req, peak RSS ${fmt(r.peak_rss_mb, 1)} MB` + (r.errors ? `, ${r.errors} ERRORS` : ''));
        runs.push(r);
      }
    }
  }
  return runs;
}

// ---------------------------------------------------------------------------------------
// cancel by disconnect

// The offset (us) that turns performance.now() into microseconds since the epoch, anchored to
// Date.now() millisecond edges: at an edge the wall clock is d.000 ms. Being descheduled
// between the reads can only make an offset come out too small, so the largest of 9 edges
// (edges that skipped a millisecond are not used) is taken; busy-waits about 9 ms.
function calibrateWall() {
  let best = -Infinity;
  for (let i = 0; i < 9; i++) {
    const d0 = Date.now();
    let d, p;
    do { d = Date.now(); p = performance.now(); } while (d === d0);
    if (d === d0 + 1) best = Math.max(best, d * 1000 - p * 1000);
  }
  return best;
}

// RFC 3339 with microseconds ("2026-12-02T06:20:10.455439Z") -> microseconds since the epoch.
function tsMicros(ts) {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(ts);
  if (!m) return NaN;
  const frac = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  return Date.parse(`${m[1]}Z`) * 1000 + Number(frac);
}

// Reads the trace file as it grows: per JSON-RPC id, the records of interest.
class TraceTail {
  constructor(path) { this.path = path; this.fd = null; this.rest = ''; this.byId = new Map(); this.lines = 0; }
  poll() {
    if (this.fd === null) {
      if (!existsSync(this.path)) return;
      this.fd = openSync(this.path, 'r');
      this.pos = 0;
    }
    const size = fstatSync(this.fd).size;
    if (size <= this.pos) return;
    const buf = Buffer.allocUnsafe(size - this.pos);
    const n = readSync(this.fd, buf, 0, buf.length, this.pos);
    this.pos += n;
    const text = this.rest + buf.toString('utf8', 0, n);
    const lines = text.split('\n');
    this.rest = lines.pop();
    for (const line of lines) {
      if (!line) continue;
      this.lines++;
      const r = JSON.parse(line);
      const id = r.attributes?.['jsonrpc.request.id'];
      if (id === undefined) continue;
      let e = this.byId.get(String(id));
      if (!e) this.byId.set(String(id), (e = {}));
      e[r.event] = { us: tsMicros(r.ts), outcome: r.attributes.outcome, reason: r.attributes['keel.reason'], attrs: r.attributes };
    }
  }
  get(id) { return this.byId.get(String(id)) ?? {}; }
  close() { if (this.fd !== null) closeSync(this.fd); }
}

async function pollUntil(trace, pred, ms) {
  const t = performance.now();
  for (;;) {
    trace.poll();
    if (pred()) return true;
    if (performance.now() - t > ms) return false;
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function runCancel(o) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-http-bench-'));
  const tracePath = join(dir, 'trace.jsonl');
  const server = await startServer('keel', o, dir, ['--test-tools', '--trace-file', tracePath]);
  const trace = new TraceTail(tracePath);
  const u = new URL(server.url);
  const body = (id) => sleepBody(id, 20000);
  const headers = headersFor('sleep');
  const stopped = [], ended = [], destroyMs = [], startWaitMs = [];
  const problems = new Map();
  const problem = (kind, detail) => {
    const p = problems.get(kind) ?? { count: 0, first: detail };
    p.count++;
    problems.set(kind, p);
  };
  const reasons = new Map();
  let wallBase;
  const wall = () => wallBase + performance.now() * 1000;
  try {
    wallBase = calibrateWall();
    const base0 = wallBase;
    const total = o.cancelWarmup + o.iterations;
    for (let i = 0; i < total; i++) {
      const id = i + 1;
      const measured = i >= o.cancelWarmup;
      let response = null;
      const req = httpRequest(u, { method: 'POST', agent: false, headers: { ...headers, 'content-length': Buffer.byteLength(body(id)) } }, (r) => {
        let text = '';
        r.on('data', (c) => { text += c; });
        r.on('end', () => { response = `HTTP ${r.statusCode}: ${text.slice(0, 200)}`; });
        r.on('error', () => {});
        response ??= `HTTP ${r.statusCode} (headers)`;
      });
      req.on('error', () => {});
      const tSend = performance.now();
      req.end(body(id));
      const started = await pollUntil(trace, () => trace.get(id)['tool.attempt.start'] || response, 5000);
      const f = server.failure();
      if (f) throw new ServerFailed(server.describe(f));
      if (response) { if (measured) problem('a response before the disconnect', response); req.destroy(); continue; }
      if (!started) { if (measured) problem('no tool.attempt.start within 5 s', `id ${id}`); req.destroy(); continue; }
      if (measured) startWaitMs.push(performance.now() - tSend);
      // Disconnect: close the socket (destroy() closes the fd at once: FIN to keel).
      const sock = req.socket;
      const tDisc = wall();
      const d0 = performance.now();
      if (sock) sock.destroy(); else req.destroy();
      const dMs = performance.now() - d0;
      req.destroy();
      const fin = await pollUntil(trace, () => trace.get(id)['tool.attempt.end'] && trace.get(id)['tool.call.end'], 5000);
      if (!measured) continue;
      destroyMs.push(dMs);
      const e = trace.get(id);
      if (!fin) {
        problem('no tool.attempt.end / tool.call.end within 5 s of the disconnect', `id ${id}: ${Object.keys(e).join(', ')}`);
        continue;
      }
      const reason = `${e['tool.call.end'].outcome} (${e['tool.call.end'].reason ?? '-'})`;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      if (e['tool.attempt.end'].outcome !== 'cancelled') problem(`attempt outcome ${e['tool.attempt.end'].outcome}`, `id ${id}`);
      if (response) problem('a response after the disconnect', response);
      stopped.push((e['tool.attempt.end'].us - tDisc) / 1000);
      ended.push((e['tool.call.end'].us - tDisc) / 1000);
    }
    const base1 = calibrateWall();
    // Is keel still answering? One echo on a fresh connection.
    const c = await makeClient(server.url, 1);
    let after;
    try {
      const r = await c.post(echoBody(total + 1));
      after = echoProblem(r.status, r.text, true) ?? 'ok';
    } catch (e) { after = `${e.code ?? ''} ${e.message}`; }
    await c.close().catch(() => {});
    trace.poll();
    const exit = await server.stop();
    return {
      iterations: o.iterations, warmup: o.cancelWarmup, keel_args: server.args,
      work_stopped_ms: stopped.length ? summary(stopped) : null,
      call_ended_ms: ended.length ? summary(ended) : null,
      start_wait_ms: startWaitMs.length ? summary(startWaitMs) : null,
      destroy_call_ms: destroyMs.length ? summary(destroyMs) : null,
      clock_drift_us: base1 - base0,
      call_end_reasons: Object.fromEntries(reasons),
      problems: Object.fromEntries([...problems].map(([k, v]) => [k, v])),
      echo_after: after,
      trace_lines: trace.lines,
      exit,
    };
  } finally {
    trace.close();
    if (!server.p.exit) { server.closing = true; server.p.child.kill('SIGKILL'); }
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------
// report

function report(r, o) {
  const lines = [];
  const goals = [];
  const ratio = (a, b) => (a && b ? a / b : NaN);
  if (r.throughput) {
    const { rows } = r.throughput;
    const row = (s, C) => rows.find((x) => x.server === s && x.clients === C);
    lines.push(`keel HTTP bench: ${o.requests} measured tools/call echo requests per run after ${o.warmup} warm-up requests,`);
    lines.push(`C keep-alive connections each sending its next request when the last is answered (${r.client}).`);
    lines.push(`A fresh server process per (server, C, repetition); ${o.reps} repetition(s), keel and the SDK server taking`);
    lines.push(`turns within each. Medians over the repetitions. ${cpus().length} CPU core(s), shared by the driver (Node) and the server.`);
    if (o.servers.includes('sdk')) {
      lines.push('Peer: the official TypeScript SDK v2 server (@modelcontextprotocol/server ' + r.sdk_version +
        ', createMcpHandler, stateless, node:http).');
      lines.push('Both get the same MCP 2026-07-28 request (headers Mcp-Method/Mcp-Name, _meta envelope) and answer it with JSON.');
    }
    lines.push(...backgroundLines(r.background_load));
    lines.push('');
    const head = ['server', 'clients', 'req/s', 'req/s min-max', 'p50 us', 'p99 us', 'CPU us/req', 'peak RSS MB (max)', 'driver CPU us/req', 'errors'];
    lines.push(...table(head, rows.map((x) => [x.server, String(x.clients), fmt(x.req_per_s), `${fmt(x.req_per_s_min)}-${fmt(x.req_per_s_max)}`,
      fmt(x.p50_us), fmt(x.p99_us), fmt(x.cpu_us_per_req, 1), `${fmt(x.peak_rss_mb, 1)} (${fmt(x.peak_rss_mb_max, 1)})`,
      fmt(x.driver_cpu_us_per_req, 1), x.errors ? `${x.errors} in ${x.runs_with_errors} run(s)` : '0'])));
    lines.push('');
    lines.push(`CPU us/req: the server's utime+stime (/proc/<pid>/stat, ${fmt(1000 / CLK_TCK)} ms ticks) over the measured phase / requests.`);
    lines.push('peak RSS: VmHWM after the measured phase (warm-up included). Latency: request issued -> response body read.');
    lines.push('Where the driver\'s CPU per request exceeds the server\'s, req/s (and latency) are bounded by the driver more');
    lines.push('than by the server: the two share the cores.');
    for (const x of rows) {
      if (x.lost_connections || x.reconnects) {
        lines.push(`connections: ${x.server} @${x.clients}: ${x.lost_connections} lost and ${x.reconnects} opened during measured phases ` +
          `(${Object.entries(x.lost_reasons).map(([k, v]) => `${k} x${v}`).join(', ') || 'no reason given'})`);
      }
      if (x.errors) lines.push(`ERRORS: ${x.server} @${x.clients}: ${x.errors} (first: ${x.first_error})`);
      for (const e of x.odd_exits) {
        lines.push(`odd exit: ${x.server} @${x.clients} rep ${e.rep}: code ${e.code}, signal ${e.signal}` +
          `${e.killed ? ', SIGKILLed after 5 s of SIGTERM' : ''}${e.early ? ', had exited before SIGTERM' : ''}`);
      }
    }
    if (o.servers.includes('keel') && o.servers.includes('sdk')) {
      lines.push('');
      lines.push('ratios (keel / SDK, medians):');
      const cpuRatios = [];
      for (const C of o.clients) {
        const k = row('keel', C), s = row('sdk', C);
        const t = ratio(k?.req_per_s, s?.req_per_s), c = ratio(k?.cpu_us_per_req, s?.cpu_us_per_req);
        cpuRatios.push(c);
        lines.push(`  @${C} client(s): req/s ${fmt(t, 2)}x; CPU/req ${fmt(c, 3)} (SDK/keel ${fmt(1 / c, 1)}x); ` +
          `p99 ${fmt(ratio(k?.p99_us, s?.p99_us), 3)}; peak RSS ${fmt(ratio(k?.peak_rss_mb, s?.peak_rss_mb), 3)}`);
      }
      for (const C of [16, 64]) {
        if (!o.clients.includes(C)) continue;
        const t = ratio(row('keel', C)?.req_per_s, row('sdk', C)?.req_per_s);
        goals.push({ goal: `keel req/s @${C} clients >= ${GOAL_RPS_X}x SDK`, value: `${fmt(t, 2)}x`, pass: t >= GOAL_RPS_X });
      }
      const worst = Math.max(...cpuRatios);
      goals.push({ goal: 'keel CPU per request <= 1/4 of SDK (worst client count)', value: fmt(worst, 3), pass: worst <= GOAL_CPU_RATIO });
    }
    if (o.servers.includes('keel')) {
      if (o.clients.includes(16)) {
        const p99 = row('keel', 16).p99_us / 1000;
        goals.push({ goal: `keel p99 @16 clients <= ${GOAL_P99_MS} ms`, value: `${fmt(p99, 3)} ms`, pass: p99 <= GOAL_P99_MS });
      }
      if (o.clients.includes(64)) {
        const rss = row('keel', 64).peak_rss_mb_max;
        goals.push({ goal: `keel peak RSS @64 clients <= ${GOAL_RSS_MB} MB (worst rep)`, value: `${fmt(rss, 1)} MB`, pass: rss <= GOAL_RSS_MB });
      }
      const errs = rows.filter((x) => x.server === 'keel').reduce((a, x) => a + x.errors, 0);
      goals.push({ goal: 'every keel response 200 with the echo', value: errs ? `${errs} errors` : 'yes', pass: errs === 0 });
    }
  }
  if (r.cancel) {
    const c = r.cancel;
    if (lines.length) lines.push('');
    lines.push(`cancel by disconnect: ${c.iterations} sleep calls (20 s) after ${c.warmup} unrecorded, one at a time, each on a new`);
    lines.push('connection closed once keel\'s trace shows its attempt started; keel ' + c.keel_args.join(' '));
    if (!r.throughput) lines.push(...backgroundLines(r.background_load));
    const s = (x, d = 3) => (x ? `p50 ${fmt(x.p50, d)}  p99 ${fmt(x.p99, d)}  max ${fmt(x.max, d)}  (n ${x.n})` : 'n/a');
    lines.push(`  disconnect -> work stopped (tool.attempt.end ts) ms  ${s(c.work_stopped_ms)}`);
    lines.push(`  disconnect -> call ended   (tool.call.end ts) ms     ${s(c.call_ended_ms)}`);
    lines.push(`  POST -> attempt start seen in the trace ms           ${s(c.start_wait_ms)}`);
    lines.push(`  socket.destroy() call itself ms                      ${s(c.destroy_call_ms)}`);
    lines.push(`  driver wall clock drift over the iterations: ${fmt(c.clock_drift_us, 0)} us; call.end outcomes: ` +
      (Object.entries(c.call_end_reasons).map(([k, v]) => `${k} x${v}`).join(', ') || 'none'));
    for (const [k, v] of Object.entries(c.problems)) lines.push(`  PROBLEM: ${k}: ${v.count} (first: ${v.first})`);
    lines.push(`  an echo after the iterations: ${c.echo_after}; keel exit after SIGTERM: code ${c.exit.code}, signal ${c.exit.signal}, ${fmt(c.exit.ms, 0)} ms`);
    const p99 = c.work_stopped_ms?.p99;
    goals.push({ goal: `disconnect -> work stopped p99 <= ${GOAL_CANCEL_MS} ms`, value: `${fmt(p99, 3)} ms`, pass: p99 <= GOAL_CANCEL_MS });
    const nprob = Object.values(c.problems).reduce((a, v) => a + v.count, 0);
    goals.push({ goal: 'every disconnected call cancelled, none answered', value: nprob ? `${nprob} problems` : 'yes', pass: nprob === 0 });
  }
  if (goals.length) {
    lines.push('');
    lines.push(...goalLines(goals));
  }
  return { text: lines.join('\n') + '\n', goals };
}

export async function main(argv) {
  const o = parseArgs(argv);
  clientChoice = o.client;
  const t = performance.now();
  const before = await backgroundLoad();
  const r = {};
  try {
    if (o.throughput) {
      r.client = await clientKind();
      try {
        r.sdk_version = JSON.parse(readFileSync(join(o.sdkModules, '@modelcontextprotocol', 'server', 'package.json'), 'utf8')).version;
      } catch { r.sdk_version = '?'; }
      const runs = await runThroughput(o);
      r.throughput = { runs, rows: aggregate(runs, o) };
    }
    if (o.cancel) {
      log(`cancel by disconnect: ${o.iterations} iterations ...`);
      r.cancel = await runCancel(o);
    }
  } catch (e) {
    if (e instanceof ServerFailed) die(`a server failed to run: ${e.message}`, 1);
    throw e;
  }
  r.background_load = { before_cores: before, after_cores: await backgroundLoad(), loadavg: readFileSync('/proc/loadavg', 'utf8').trim() };
  const { text, goals } = report(r, o);
  if (o.json) {
    process.stdout.write(JSON.stringify({
      mode: o.throughput ? 'http' : 'http-cancel',
      ...(o.throughput && {
        requests: o.requests, warmup: o.warmup, clients: o.clients, reps: o.reps, servers: o.servers,
        note: 'a fresh server process per (server, clients, repetition); keel and the SDK take turns; figures in rows are medians over repetitions',
      }),
      cpus: cpus().length, clk_tck: CLK_TCK, keel: o.keel,
      ...r, goals,
    }, null, 2) + '\n');
  } else {
    process.stdout.write(text);
  }
  log(`done in ${fmt((performance.now() - t) / 1000, 1)} s`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main(process.argv.slice(2));
