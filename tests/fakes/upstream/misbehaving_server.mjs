#!/usr/bin/env node
// misbehaving_server: a fake upstream MCP server for the `keel wrap` interop tests
// (tests/interop/wrap_faults.test.mjs). A legacy MCP 2025-11-25 server on stdio, written by hand
// (Node 20, no dependencies, no SDK): newline-delimited JSON-RPC 2.0 on stdin/stdout. Run
// without flags it is well behaved; each flag below adds one misbehaviour, and several may be
// combined. It is the fault keel wraps, never a test itself.
//
// Methods: initialize (protocolVersion: the client's if 2025-11-25 or 2025-06-18, else
// 2025-11-25; capabilities {tools: {listChanged: true}, logging: {}}; serverInfo
// {name: "misbehaving", version: "1"}), notifications/initialized, ping, tools/list,
// tools/call, notifications/cancelled. Any other request gets -32601 (so keel's
// `server/discover` probe falls back to initialize); other notifications are ignored.
// Tools:
//   echo   readOnlyHint: answers the text of arguments.text.
//   slow   readOnlyHint: answers "slept <ms> ms" after arguments.ms (default 500), sending
//          notifications/progress (progress 1, 2, ...) every 50 ms to the request's
//          _meta.progressToken when there is one.
//   write  no annotations (keel classes it unsafe_write): appends one line
//          {"key": arguments.key, "value": arguments.value} to the file $FAKE_EFFECT_FILE, then
//          answers (after arguments.delayMs, default 0, counted AFTER the effect) with the
//          text "wrote <key>=<value> as effect <n> by pid <pid>" (n: the line's number in the
//          file), so a second run of the effect can never look like the first's answer.
//   ask    sends an elicitation/create request to the client (id "fake-ask-<n>", asking for
//          {answer: string}), waits for its answer and answers with JSON.stringify of the
//          answer's content (isError, with the action or the error, unless it was accepted).
//   retool readOnlyHint (a test convenience): changes the tool list, then sends
//          notifications/tools/list_changed and answers "tools: <names>". arguments.add names
//          a tool to add (readOnlyHint; it answers "<name>: <arguments.text>"); arguments.remove
//          names one to take away (a call of it already running still finishes).
// A cancelled call (notifications/cancelled with its id) stops and is never answered, unless
// a flag says otherwise.
//
// Flags:
//   --answer-after-cancel  a cancelled call stops its work but is answered anyway, 100 ms
//                          after the cancel ("answered after cancel").
//   --ignore-cancel        notifications/cancelled is ignored: the call runs on, with its
//                          progress, and is answered when done.
//   --never-answer         tools/call of `slow` is never answered (and sends no progress).
//   --bad-progress         `slow` sends progress that goes backwards and repeats itself, and
//                          one more progress notification after its response.
//   --junk-stdout          writes to stdout, at start and around every response: lines that
//                          are not JSON, JSON that is not JSON-RPC, a response to an id
//                          nobody sent, and a half line whose newline comes in a later write
//                          (always completed before the next real message).
//   --crash-mid-call       exits with status 3 in the middle of `slow` (after half its ms)
//                          and of `write` (after the effect is written, before answering).
//                          With $FAKE_CRASH_ONCE_FILE set, only the first crash happens: the
//                          instance that creates that file crashes, later ones run normally.
//   --crash-on-start       exits with status 1 before reading anything.
//   --ignore-eof           keeps running after stdin closes (a timer holds the event loop).
//   --ignore-sigterm       SIGTERM is ignored.
//   --flood-progress       during `slow`, sends progress notifications as fast as stdout takes
//                          them (tens of thousands), to the call's token (or "no-token").
//   --never-read-answer    `ask` sends its elicitation/create, then stops reading stdin for
//                          good (stdin paused; a timer keeps the process alive) and never
//                          answers.
//   --spawn-grandchild     at start, spawns `sleep 300` (stdio ignored, in this process's
//                          process group; with --ignore-sigterm it ignores SIGTERM too) and
//                          appends "grandchild <pid>" to $FAKE_PID_FILE.
//   --stderr-noise         writes "noise: ..." lines to stderr at start and for every message.
//
// Environment:
//   FAKE_PID_FILE        one line "<pid>" appended per start (before anything else), so
//                        restarts are visible; also the grandchild's line.
//   FAKE_EFFECT_FILE     where `write` appends its effect lines (required by `write`).
//   FAKE_LOG_FILE        one line per event, "<pid> <event> ...", appended as it happens, for
//                        tests to wait on instead of sleeping: "start",
//                        "call <id> <tool> <its _meta as JSON>", "cancelled <id>",
//                        "answer <id> <tool> cancelled=<bool>", "late-progress <id>" (after
//                        the response, --bad-progress), "flooded <id> <count>", "elicit <id>",
//                        "elicit-answer <id>", "stdin-paused", "eof", "sigterm-ignored",
//                        "crash <tool>". <id> is the request's JSON-RPC id as JSON.
//   FAKE_CRASH_ONCE_FILE see --crash-mid-call.
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync } from 'node:fs';

const FLAGS = new Set(process.argv.slice(2));
const KNOWN = [
  '--answer-after-cancel', '--ignore-cancel', '--never-answer', '--bad-progress', '--junk-stdout',
  '--crash-mid-call', '--crash-on-start', '--ignore-eof', '--ignore-sigterm', '--flood-progress',
  '--never-read-answer', '--spawn-grandchild', '--stderr-noise',
];
for (const f of FLAGS) {
  if (!KNOWN.includes(f)) {
    process.stderr.write(`misbehaving_server: unknown flag ${f}\n`);
    process.exit(2);
  }
}
const flag = (name) => FLAGS.has(name);

const SUPPORTED = ['2025-11-25', '2025-06-18'];
const PROGRESS_EVERY_MS = 50;
const LATE_ANSWER_MS = 100;

function log(event) {
  if (process.env.FAKE_LOG_FILE) appendFileSync(process.env.FAKE_LOG_FILE, `${process.pid} ${event}\n`);
}

function noise(text) {
  if (flag('--stderr-noise')) process.stderr.write(`noise: ${text}\n`);
}

if (process.env.FAKE_PID_FILE) appendFileSync(process.env.FAKE_PID_FILE, `${process.pid}\n`);
log('start');
if (flag('--crash-on-start')) {
  process.stderr.write('misbehaving_server: --crash-on-start, exiting 1\n');
  process.exit(1);
}
if (flag('--ignore-sigterm')) process.on('SIGTERM', () => { log('sigterm-ignored'); });
if (flag('--ignore-eof')) setInterval(() => {}, 1 << 30);
if (flag('--spawn-grandchild')) {
  const child = flag('--ignore-sigterm')
    ? spawn('sh', ['-c', 'trap "" TERM; exec sleep 300'], { stdio: 'ignore' })
    : spawn('sleep', ['300'], { stdio: 'ignore' });
  child.unref();
  if (process.env.FAKE_PID_FILE) appendFileSync(process.env.FAKE_PID_FILE, `grandchild ${child.pid}\n`);
}
noise(`misbehaving server ${process.pid} starting`);
noise('a second line of noise');

// stdout ---------------------------------------------------------------------------------
// Every write goes through here, so that a half line of junk is always completed before a
// real message follows it (else the two would make one line, and the real one would be lost).
let halfLineOpen = false;
let halfLineTimer = null;

function rawWrite(text) {
  return process.stdout.write(text);
}

function closeHalfLine() {
  if (!halfLineOpen) return;
  halfLineOpen = false;
  clearTimeout(halfLineTimer);
  rawWrite(' ...and the rest of the half line\n');
}

function send(message) {
  closeHalfLine();
  return rawWrite(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
}

let junkCount = 0;
function junk(where) {
  if (!flag('--junk-stdout')) return;
  closeHalfLine();
  const n = ++junkCount;
  rawWrite(`this is not JSON (${where} ${n})\n`);
  rawWrite(`{"not": "json-rpc", "n": ${n}}\n[1, 2, 3]\n{"jsonrpc": "2.0"}\n`);
  rawWrite(`{"jsonrpc":"2.0","id":"junk-${n}","result":{"content":[{"type":"text","text":"nobody asked"}]}}\n`);
  rawWrite('\n   \n');
  rawWrite(`{"half line ${n}`);  // no newline: completed in a later write
  halfLineOpen = true;
  halfLineTimer = setTimeout(closeHalfLine, 30);
}

function respond(id, result) {
  junk('before response');
  send({ id, result });
  junk('after response');
}

function respondError(id, code, message) {
  junk('before error');
  send({ id, error: { code, message } });
  junk('after error');
}

junk('start');

// Tools ----------------------------------------------------------------------------------
const TOOLS = [
  {
    name: 'echo',
    description: 'Answers with the text it was given.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'slow',
    description: 'Sleeps arguments.ms, reporting progress every 50 ms.',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0 } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'write',
    description: 'Appends {key, value} to the effect file.',
    inputSchema: {
      type: 'object',
      properties: { key: { type: 'string' }, value: { type: 'string' }, delayMs: { type: 'integer', minimum: 0 } },
      required: ['key', 'value'],
    },
  },
  {
    name: 'ask',
    description: 'Asks the client (elicitation/create) and answers with what it said.',
    inputSchema: { type: 'object', properties: { question: { type: 'string' } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'retool',
    description: 'Adds or removes a tool, then says the tool list changed.',
    inputSchema: { type: 'object', properties: { add: { type: 'string' }, remove: { type: 'string' } } },
    annotations: { readOnlyHint: true },
  },
];
const added = new Set();  // names of the tools retool added

function retool(id, args) {
  if (typeof args.add === 'string' && !TOOLS.some((t) => t.name === args.add)) {
    TOOLS.push({
      name: args.add,
      description: 'Added at run time.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      annotations: { readOnlyHint: true },
    });
    added.add(args.add);
  }
  if (typeof args.remove === 'string') {
    const at = TOOLS.findIndex((t) => t.name === args.remove);
    if (at >= 0) TOOLS.splice(at, 1);
    added.delete(args.remove);
  }
  send({ method: 'notifications/tools/list_changed' });
  return finish(id, 'retool', text(`tools: ${TOOLS.map((t) => t.name).join(',')}`));
}

const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });

// Calls still running, by JSON-RPC id (as JSON, so 1 and "1" differ): {tool, cancelled, stop}.
const running = new Map();
// Our elicitation requests waiting for the client's answer: id -> resolve.
const asking = new Map();
let askCount = 0;

function crashNow(why) {
  const once = process.env.FAKE_CRASH_ONCE_FILE;
  if (once) {
    try {
      closeSync(openSync(once, 'wx'));
    } catch (e) {
      if (e.code === 'EEXIST') return false;  // the one crash already happened
      throw e;
    }
  }
  log(`crash ${why}`);
  process.exit(3);
}

function finish(id, tool, result) {
  const key = JSON.stringify(id);
  const call = running.get(key);
  if (!call) return;
  running.delete(key);
  log(`answer ${key} ${tool} cancelled=${call.cancelled}`);
  respond(id, result);
}

function progress(token, value, message) {
  return send({ method: 'notifications/progress', params: { progressToken: token, progress: value, ...(message ? { message } : {}) } });
}

function runSlow(id, args, meta, call) {
  const ms = Number.isFinite(args.ms) ? args.ms : 500;
  const token = meta?.progressToken;
  if (flag('--never-answer')) return;
  if (flag('--flood-progress')) return floodSlow(id, ms, token ?? 'no-token', call);
  let tick = 0;
  const sendTick = () => {
    tick++;
    if (token === undefined) return;
    if (!flag('--bad-progress')) return progress(token, tick);
    progress(token, tick);
    if (tick % 3 === 0) progress(token, tick);  // a duplicate
    if (tick % 4 === 0) progress(token, tick - 1.5);  // backwards
  };
  const interval = setInterval(sendTick, PROGRESS_EVERY_MS);
  const crash = flag('--crash-mid-call') ? setTimeout(() => crashNow('slow'), Math.floor(ms / 2)) : null;
  const done = setTimeout(() => {
    clearInterval(interval);
    clearTimeout(crash);
    finish(id, 'slow', text(`slept ${ms} ms`));
    if (flag('--bad-progress') && token !== undefined) {
      progress(token, tick + 10, 'after the response');
      log(`late-progress ${JSON.stringify(id)}`);
    }
  }, ms);
  call.stop = () => { clearInterval(interval); clearTimeout(crash); clearTimeout(done); };
}

// Progress as fast as stdout takes it until ms have passed, then the answer.
function floodSlow(id, ms, token, call) {
  const end = Date.now() + ms;
  let value = 0;
  let stopped = false;
  call.stop = () => { stopped = true; };
  const pump = () => {
    if (stopped) return;
    if (Date.now() >= end) {
      log(`flooded ${JSON.stringify(id)} ${value}`);
      return finish(id, 'slow', text(`slept ${ms} ms`));
    }
    for (let i = 0; i < 500; i++) {
      if (!progress(token, ++value)) return process.stdout.once('drain', pump);
    }
    setImmediate(pump);
  };
  pump();
}

function runWrite(id, args, call) {
  const file = process.env.FAKE_EFFECT_FILE;
  if (!file) return finish(id, 'write', text('FAKE_EFFECT_FILE is not set', true));
  appendFileSync(file, JSON.stringify({ key: args.key, value: args.value }) + '\n');
  const n = readLines(file);
  if (flag('--crash-mid-call')) crashNow('write');
  const answer = () => finish(id, 'write', text(`wrote ${args.key}=${args.value} as effect ${n} by pid ${process.pid}`));
  const delay = Number.isFinite(args.delayMs) ? args.delayMs : 0;
  if (delay <= 0) return answer();
  const timer = setTimeout(answer, delay);
  call.stop = () => clearTimeout(timer);
}

// The number of lines in a (small) file.
const readLines = (file) => readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').length;

async function runAsk(id, args) {
  const askId = `fake-ask-${++askCount}`;
  const answered = new Promise((resolve) => asking.set(askId, resolve));
  log(`elicit ${askId}`);
  send({
    id: askId,
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: args.question ?? 'What is your answer?',
      requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    },
  });
  if (flag('--never-read-answer')) {
    deaf = true;
    process.stdin.pause();
    // A paused stdin does not keep Node's event loop alive: without this the process would
    // simply end (status 0) instead of living on deaf.
    setInterval(() => {}, 1 << 30);
    log('stdin-paused');
    return;
  }
  const reply = await answered;
  if (reply.error) return finish(id, 'ask', text(`elicitation failed: ${JSON.stringify(reply.error)}`, true));
  const result = reply.result ?? {};
  if (result.action !== 'accept') return finish(id, 'ask', text(`not accepted: ${result.action}`, true));
  finish(id, 'ask', text(JSON.stringify(result.content ?? null)));
}

function callTool(id, params) {
  const name = params?.name;
  const args = params?.arguments ?? {};
  const key = JSON.stringify(id);
  log(`call ${key} ${name} ${JSON.stringify(params?._meta ?? {})}`);
  const call = { tool: name, cancelled: false, stop: () => {} };
  running.set(key, call);
  switch (name) {
    case 'echo': return finish(id, 'echo', text(String(args.text ?? '')));
    case 'slow': return runSlow(id, args, params._meta, call);
    case 'write': return runWrite(id, args, call);
    case 'ask': return runAsk(id, args);
    case 'retool': return retool(id, args);
    default:
      if (added.has(name)) return finish(id, name, text(`${name}: ${args.text ?? ''}`));
      running.delete(key);
      return respondError(id, -32602, `Unknown tool: ${name}`);
  }
}

function onCancelled(params) {
  const key = JSON.stringify(params?.requestId);
  log(`cancelled ${key}`);
  const call = running.get(key);
  if (!call) return;
  call.cancelled = true;
  if (flag('--ignore-cancel')) return;
  call.stop();
  if (flag('--answer-after-cancel')) {
    setTimeout(() => finish(params.requestId, call.tool, text('answered after cancel')), LATE_ANSWER_MS);
    return;
  }
  running.delete(key);  // stopped, never answered
}

// stdin ----------------------------------------------------------------------------------
function onMessage(msg) {
  noise(`got ${msg.method ?? `answer ${JSON.stringify(msg.id)}`}`);
  if (msg.method === undefined) {
    // A response to one of our requests.
    const resolve = asking.get(msg.id);
    if (resolve) {
      asking.delete(msg.id);
      log(`elicit-answer ${msg.id}`);
      resolve(msg);
    }
    return;
  }
  const isRequest = 'id' in msg;
  switch (msg.method) {
    case 'initialize': {
      const asked = msg.params?.protocolVersion;
      return respond(msg.id, {
        protocolVersion: SUPPORTED.includes(asked) ? asked : SUPPORTED[0],
        capabilities: { tools: { listChanged: true }, logging: {} },
        serverInfo: { name: 'misbehaving', version: '1' },
      });
    }
    case 'ping': return respond(msg.id, {});
    case 'tools/list': return respond(msg.id, { tools: TOOLS });
    case 'tools/call': return callTool(msg.id, msg.params);
    case 'notifications/cancelled': return onCancelled(msg.params);
    default:
      if (isRequest) respondError(msg.id, -32601, `Method not found: ${msg.method}`);
  }
}

let pending = '';
let deaf = false;  // --never-read-answer: stdin paused for good, and nothing more handled
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  if (deaf) return;
  pending += chunk;
  let nl;
  while (!deaf && (nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl).trim();
    pending = pending.slice(nl + 1);
    if (line === '') continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      send({ id: null, error: { code: -32700, message: 'Parse error' } });
      continue;
    }
    onMessage(msg);
  }
});
process.stdin.on('end', () => {
  log('eof');
  if (!flag('--ignore-eof')) process.exit(0);
});
// A client that went away: nothing more can be said.
process.stdout.on('error', () => { if (!flag('--ignore-eof')) process.exit(0); });
