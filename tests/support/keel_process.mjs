// keel_process: keel (or any server speaking newline-delimited JSON-RPC on stdio) as a child
// process. The one client the interop tests, the benches, the soak, the demos and the
// transcript runner (scripts/run_conformance) share; the SDK-based tests use the official
// MCP client instead (tests/interop/sdk_keel.mjs). Not a test file itself.
//
// Two layers, each usable alone:
//   spawnLines(cmd, args, options) -> p   the process and its framing: stdout split into
//     lines (strings, or Buffers with binary), stdin writes, stderr kept as a bounded tail,
//     the exit. Nothing is parsed, so a bench can scan lines itself at full speed.
//   rpcClient(p, options) -> c            JSON-RPC over p: every line parsed into c.messages,
//     requests with ids matched to their responses, waits for any message.
// Plus KEEL (the binary: $KEEL_BINARY, else build/keel), REPO, withTimeout(), and
// lineSplitter() (the framing alone, for its unit tests: keel_process.test.mjs).
//
// p (spawnLines):
//   p.child, p.pid; p.startedAt (performance.now() just before spawn()), p.spawnMs (the
//   spawn() call alone);
//   p.onLine(line) (settable at any time: called for each complete stdout line, in order,
//   without its '\n'); p.afterChunk() (settable, or null: after the lines of each chunk);
//   p.bytesRead (stdout, in chunk lengths); p.stdout (all of it, with keepStdout);
//   p.stderr (the last stderrKeep characters once stderrLimit is passed, with stderr 'pipe');
//   p.exit (null, then {code, signal, at: performance.now()}), p.exited (its promise);
//   p.stdoutEnded and p.closed (promises: stdout read to its end; every stdio stream closed
//   and the process gone); p.spawnError, p.stdinError (the first of each, else null);
//   p.write(data) (stdin.write: returns false when the pipe is full), p.send(object) (one
//   JSON line), p.end() (EOF on stdin), p.kill(signal = 'SIGKILL') (with detached, the
//   whole process group), p.waitExit(ms) (the exit, or null after ms).
// options: cwd; env (the whole environment; default process.env); detached (the child
//   leads a new process group); stderr (stdio for fd 2, default 'pipe'); captureStderr
//   (default true: read a piped stderr into p.stderr; false leaves p.child.stderr unread);
//   stderrLimit (default 16000) and stderrKeep (default stderrLimit); binary (lines as
//   Buffers, split on the byte 0x0a); keepStdout; onLine; afterChunk; onEnd(rest) (stdout
//   ended; rest is the unterminated tail, '' or an empty Buffer when the output ended with
//   '\n'); onError(error, where) (where: 'spawn' or 'stdin'; errors are recorded either way).
//
// c (rpcClient):
//   c.proc (p), c.child, c.pid, c.messages (every line parsed, in order), c.nextId;
//   c.send(message) writes {"jsonrpc":"2.0", ...message}; c.notify(method, params);
//   c.request(method, params, {id, waitMs}) sends now and resolves with the response (a
//     JSON-RPC error resolves too); rejects when the process exits first or after waitMs
//     (Infinity: never). Without an id, ids count up from firstId;
//   c.response(id, {waitMs}) the same for a request written some other way (p.write);
//   c.waitFor(match, {ms, what}) the first message, seen already or still to come, for
//     which match(message) holds; rejects after ms (default 5000; Infinity: never);
//   c.initialize({protocolVersion, clientName, clientVersion, capabilities}) initialize (the
//     client's capabilities default to {}), then notifications/initialized; returns the
//     result (throws on an error response);
//   c.close(ms) EOF on stdin, then the exit (rejects if it takes longer than ms).
// options: waitMs (default 20000), name (in error messages; default 'keel'), firstId
//   (default 1). A line that is not JSON throws from the stdout handler (JSON.parse).
// Single-threaded like all of Node: callbacks run on the event loop, in stdout order.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const KEEL = process.env.KEEL_BINARY ? resolve(process.env.KEEL_BINARY) : join(REPO, 'build', 'keel');

// `promise`, or a rejection "timed out waiting for <what>" after `ms`.
export function withTimeout(promise, what, ms) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms); }),
  ]);
}

// Splits string chunks on '\n'. The scan is the bench's hot loop: indexOf and slice only,
// no array of lines, the partial line kept apart.
function textSplitter(p) {
  let pending = '';
  return {
    push(chunk) {
      let start = 0;
      let nl = chunk.indexOf('\n');
      if (nl < 0) { pending += chunk; return; }
      if (pending) {
        p.onLine(pending + chunk.slice(0, nl));
        pending = '';
        start = nl + 1;
        nl = chunk.indexOf('\n', start);
      }
      while (nl >= 0) {
        p.onLine(chunk.slice(start, nl));
        start = nl + 1;
        nl = chunk.indexOf('\n', start);
      }
      if (start < chunk.length) pending = chunk.slice(start);
    },
    rest: () => pending,
  };
}

// Splits Buffer chunks on the byte 0x0a, so that a caller can check each line's UTF-8 itself.
function bufferSplitter(p) {
  let pending = Buffer.alloc(0);
  return {
    push(chunk) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let nl;
      while ((nl = pending.indexOf(0x0a)) !== -1) {
        p.onLine(pending.subarray(0, nl));
        pending = pending.subarray(nl + 1);
      }
    },
    rest: () => pending,
  };
}

// A splitter calling p.onLine(line) for each complete line pushed into it; rest() is the
// unterminated tail. Exported for the unit tests; spawnLines uses it on stdout.
export function lineSplitter(p, { binary = false } = {}) {
  return binary ? bufferSplitter(p) : textSplitter(p);
}

function captureStderr(p, child, limit, keep) {
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    p.stderr += d;
    if (p.stderr.length > limit) p.stderr = p.stderr.slice(-keep);
  });
}

function watchEnds(p, child, splitter, onEnd) {
  p.exited = new Promise((res) => child.once('exit', (code, signal) => {
    p.exit = { code, signal, at: performance.now() };
    res(p.exit);
  }));
  p.stdoutEnded = new Promise((res) => child.stdout.once('end', () => {
    if (onEnd) onEnd(splitter.rest());
    res();
  }));
  p.closed = new Promise((res) => child.once('close', () => res()));
}

export function spawnLines(cmd, args = [], {
  cwd, env = process.env, detached = false, stderr = 'pipe', captureStderr: capture = true,
  stderrLimit = 16000, stderrKeep = stderrLimit, binary = false, keepStdout = false,
  onLine = () => {}, afterChunk = null, onEnd = null, onError = null,
} = {}) {
  const startedAt = performance.now();
  const child = spawn(cmd, args, { cwd, env, detached, stdio: ['pipe', 'pipe', stderr] });
  const p = {
    child, pid: child.pid, startedAt, spawnMs: performance.now() - startedAt,
    onLine, afterChunk, bytesRead: 0, stdout: '', stderr: '', exit: null, spawnError: null, stdinError: null,
  };
  child.once('error', (e) => { p.spawnError ??= e; if (onError) onError(e, 'spawn'); });
  child.stdin.on('error', (e) => { p.stdinError ??= e; if (onError) onError(e, 'stdin'); });
  if (stderr === 'pipe' && capture) captureStderr(p, child, stderrLimit, stderrKeep);
  const splitter = lineSplitter(p, { binary });
  if (!binary) child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    p.bytesRead += chunk.length;
    if (keepStdout) p.stdout += chunk;
    splitter.push(chunk);
    if (p.afterChunk) p.afterChunk();
  });
  watchEnds(p, child, splitter, onEnd);
  p.write = (data) => child.stdin.write(data);
  p.send = (message) => child.stdin.write(JSON.stringify(message) + '\n');
  p.end = () => child.stdin.end();
  p.kill = (signal = 'SIGKILL') => {
    if (detached && child.pid !== undefined) {
      try { process.kill(-child.pid, signal); } catch { /* the group is gone */ }
    }
    try { child.kill(signal); } catch { /* gone */ }
  };
  p.waitExit = async (ms) => {
    let timer;
    const exit = await Promise.race([p.exited, new Promise((r) => { timer = setTimeout(r, ms, null); })]);
    clearTimeout(timer);
    return exit;
  };
  return p;
}

// Waiters for one future message each, keyed by request id.
function pendingAnswers(name) {
  const pending = new Map();
  const add = (id, what, waitMs) => new Promise((res, rej) => {
    const timer = Number.isFinite(waitMs) ? setTimeout(() => {
      if (pending.delete(id)) rej(new Error(`no answer to ${what} id ${JSON.stringify(id)} within ${waitMs} ms`));
    }, waitMs) : null;
    pending.set(id, {
      resolve: (m) => { clearTimeout(timer); res(m); },
      reject: (e) => { clearTimeout(timer); rej(e); },
    });
  });
  const answer = (msg) => {
    const p = pending.get(msg.id);
    if (p && ('result' in msg || 'error' in msg)) { pending.delete(msg.id); p.resolve(msg); }
  };
  const failAll = (exit) => {
    for (const [, p] of pending) p.reject(new Error(`${name} exited (${exit.code ?? exit.signal}) before answering`));
    pending.clear();
  };
  return { add, answer, failAll };
}

// Waiters for the first message that matches, kept in the order they were added.
function messageWaiters(c) {
  const waiters = [];
  const add = (match, { ms = 5000, what = 'a message' } = {}) => new Promise((res, rej) => {
    const found = c.messages.find(match);
    if (found) return res(found);
    const w = { match, resolve: res };
    if (Number.isFinite(ms)) {
      w.timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(w), 1);
        rej(new Error(`timed out waiting for ${what}`));
      }, ms);
    }
    waiters.push(w);
  });
  const offer = (msg) => {
    for (const w of [...waiters]) {
      if (!w.match(msg)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      clearTimeout(w.timer);
      w.resolve(msg);
    }
  };
  return { add, offer };
}

export function rpcClient(p, { waitMs = 20000, name = 'keel', firstId = 1 } = {}) {
  const c = { proc: p, child: p.child, pid: p.pid, messages: [], nextId: firstId };
  const pending = pendingAnswers(name);
  const waiters = messageWaiters(c);
  p.onLine = (line) => {
    const msg = JSON.parse(line);
    c.messages.push(msg);
    pending.answer(msg);
    waiters.offer(msg);
  };
  p.exited.then((exit) => pending.failAll(exit));
  c.send = (message) => p.send({ jsonrpc: '2.0', ...message });
  c.notify = (method, params) => c.send({ method, params });
  c.response = (id, { waitMs: ms = waitMs, what = 'request' } = {}) => pending.add(id, what, ms);
  c.request = (method, params, { id = c.nextId++, waitMs: ms = waitMs } = {}) => {
    const answered = pending.add(id, method, ms);
    c.send({ id, method, params });
    return answered;
  };
  c.waitFor = (match, options) => waiters.add(match, options);
  c.initialize = async ({
    protocolVersion = '2025-11-25', clientName = 'raw', clientVersion = '0', capabilities = {},
  } = {}) => {
    const r = await c.request('initialize', {
      protocolVersion, capabilities, clientInfo: { name: clientName, version: clientVersion },
    });
    if (!r.result) throw new Error(`initialize failed: ${JSON.stringify(r)}`);
    c.notify('notifications/initialized');
    return r.result;
  };
  c.close = (ms = waitMs) => {
    p.end();
    return withTimeout(p.exited, `${name} to exit after EOF`, ms);
  };
  return c;
}
