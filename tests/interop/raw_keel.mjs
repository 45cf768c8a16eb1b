// keel as a child process speaking raw JSON-RPC lines, for tests that must decide when each
// line is written and watch a process die (the SDK client hides both). Shared by the
// interop tests; not a test file itself. The process and its framing are
// tests/support/keel_process.mjs; this adds what a node:test test needs around them.
//
// startRawKeel(t, {binary, args, env, cwd, clientName, waitMs}) returns k, an rpcClient of
// keel_process.mjs (k.request, k.response, k.send, k.notify, k.waitFor, k.messages, k.nextId,
// k.child, k.pid) with:
//   k.stdout (every byte keel wrote), k.stderr (tail), k.exit ({code, signal, at} once exited,
//   else null), k.exited (its promise);
//   k.initialize(options) does initialize (2025-11-25) + notifications/initialized, returns the
//   result; options as for rpcClient's initialize (capabilities: the client's, default {});
//   k.close() closes stdin and waits for the exit.
// Requests reject if keel exits first or after waitMs. keel is SIGKILLed after the test if it
// is still running.
// Also: KEEL (the binary: $KEEL_BINARY, else build/keel), freshDir(t, prefix) (a temporary
// directory removed after the test), HAVE_SQLITE3 and sql(db, query) (the sqlite3 CLI, to
// read a database file while no keel runs on it), withTimeout(promise, what, ms).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { KEEL, rpcClient, spawnLines, withTimeout } from '../support/keel_process.mjs';

export { KEEL, withTimeout };

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
  const p = spawnLines(binary, args, {
    cwd, env: { ...process.env, ...env }, keepStdout: true,
    onError: (e, where) => { if (where === 'spawn') throw e; },  // stdin: EPIPE after keel died, the exit is what the test checks
  });
  const k = rpcClient(p, { waitMs });
  Object.defineProperties(k, {
    stdout: { get: () => p.stdout, enumerable: true },
    stderr: { get: () => p.stderr, enumerable: true },
    exit: { get: () => p.exit, enumerable: true },
  });
  k.exited = p.exited;
  const initialize = k.initialize;
  k.initialize = (options = {}) => initialize({ clientName, ...options });
  t.after(() => { if (p.exit === null) p.child.kill('SIGKILL'); });
  return k;
}
