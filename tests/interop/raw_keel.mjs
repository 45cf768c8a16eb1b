// keel as a child process speaking raw JSON-RPC lines, for tests that must decide when each
// line is written and watch a process die (the SDK client hides both). Shared by the
// interop tests; not a test file itself.
//
// startRawKeel(t, {binary, args, env, cwd, clientName, waitMs}) returns k with:
//   k.child, k.pid, k.messages (every line keel wrote, parsed, in order), k.stderr (tail),
//   k.exit ({code, signal} once exited, else null), k.exited (its promise);
//   k.send(msg) writes {"jsonrpc":"2.0", ...msg};
//   k.request(method, params) sends now and resolves with the response (a JSON-RPC error
//     resolves too), rejects if keel exits first or after waitMs;
//   k.initialize() does initialize (2025-11-25) + notifications/initialized, returns the result;
//   k.close() closes stdin and waits for the exit.
// keel is SIGKILLed after the test if it is still running.
// Also: KEEL (the binary: $KEEL_BINARY, else build/keel), freshDir(t, prefix) (a temporary
// directory removed after the test), HAVE_SQLITE3 and sql(db, query) (the sqlite3 CLI, to
// read a database file while no keel runs on it).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const KEEL = process.env.KEEL_BINARY ? resolve(process.env.KEEL_BINARY) : join(repo, 'build', 'keel');

if (!existsSync(KEEL)) {
  throw new Error(`keel binary not found at ${KEEL}: run scripts/build or set KEEL_BINARY`);
}

export const HAVE_SQLITE3 = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' }).status === 0;

export function sql(db, query) {
  const r = spawnSync('sqlite3', [db, query], { encoding: 'utf8' });
  assert.equal(r.status, 0, `sqlite3 ${query}: ${r.stderr}`);
  return r.stdout.trim();
}

export function freshDir(t, prefix = 'keel-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function startRawKeel(t, { binary, args = [], env = {}, cwd, clientName = 'raw', waitMs = 20000 }) {
  const child = spawn(binary, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const k = { child, pid: child.pid, stdout: '', stderr: '', messages: [], pending: new Map(), nextId: 1, exit: null };
  k.exited = new Promise((res) => child.on('exit', (code, signal) => {
    k.exit = { code, signal };
    for (const [, p] of k.pending) p.reject(new Error(`keel exited (${code ?? signal}) before answering`));
    k.pending.clear();
    res(k.exit);
  }));
  child.on('error', (e) => { throw e; });
  child.stdin.on('error', () => {});  // EPIPE after keel died: the exit is what the test checks
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { k.stderr = (k.stderr + d).slice(-16000); });
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    k.stdout += d;
    const lines = (partial + d).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      const msg = JSON.parse(line);
      k.messages.push(msg);
      const p = k.pending.get(msg.id);
      if (p && ('result' in msg || 'error' in msg)) { k.pending.delete(msg.id); p.resolve(msg); }
    }
  });
  k.send = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
  k.request = (method, params) => {
    const id = k.nextId++;
    const answered = new Promise((res, rej) => {
      const timer = setTimeout(() => {
        if (k.pending.delete(id)) rej(new Error(`no answer to ${method} id ${id} within ${waitMs} ms`));
      }, waitMs);
      k.pending.set(id, {
        resolve: (m) => { clearTimeout(timer); res(m); },
        reject: (e) => { clearTimeout(timer); rej(e); },
      });
    });
    k.send({ id, method, params });
    return answered;
  };
  k.initialize = async () => {
    const r = await k.request('initialize', {
      protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: clientName, version: '0' },
    });
    assert.ok(r.result, `initialize failed: ${JSON.stringify(r)}`);
    k.send({ method: 'notifications/initialized' });
    return r.result;
  };
  k.close = async () => {
    child.stdin.end();
    return withTimeout(k.exited, 'keel to exit after EOF', waitMs);
  };
  t.after(() => { if (k.exit === null) child.kill('SIGKILL'); });
  return k;
}

export function withTimeout(promise, what, ms) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms); }),
  ]);
}
