// Closing the response stream of a modern HTTP call of a command-backed tool kills the
// command's whole process group, a SIGTERM-ignoring grandchild included, as
// notifications/cancelled does on stdio (CAN-5, CAN-2); a call still waiting out a retry
// backoff is cancelled the same way and never starts its next attempt.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { httpKeelTest, waitUntil, readTrace, traceOf, MODERN } from './http_keel.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const fixture = (name) => join(HERE, 'fixtures', 'commands', name);
const WAIT_MS = 20000;

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code === 'ESRCH') return false;
    throw e;
  }
  try {  // a zombie has exited; only its parent's wait is missing
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function pidFile(dir, name) {
  const file = join(dir, name);
  return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0;
}

// A modern tools/call POSTed with fetch, aborted by the caller.
function post(k, id, name, signal) {
  return fetch(k.url, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0', id, method: 'tools/call',
      params: { name, arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } },
    }),
  });
}

function catalogArgs(tools) {
  return (dir) => {
    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ tools: tools(dir) }, null, 2));
    return ['--catalog', catalog, '--trace-file', join(dir, 'trace.jsonl')];
  };
}

httpKeelTest('closing the HTTP response stream of a command tool call kills its whole process group, a SIGTERM-ignoring grandchild included, and nothing is answered (CAN-5, CAN-2)', {
  args: catalogArgs((dir) => [{
    name: 'grouped', description: 'holds a process group', inputSchema: { type: 'object' }, effect: 'read',
    timeouts: { idleMs: 0, maxMs: 30000, attemptMs: 30000 }, retry: { maxAttempts: 1 },
    run: { command: [fixture('group.sh'), dir, 'hold'], killGraceMs: 200 },
  }]),
}, async (k) => {
  const controller = new AbortController();
  const pending = post(k, 1, 'grouped', controller.signal).then((r) => r.text()).catch((e) => e);
  await waitUntil(() => pidFile(k.dir, 'child.pid') > 0 && pidFile(k.dir, 'grandchild.pid') > 0, 'the command and its grandchild to start', { ms: WAIT_MS });
  const child = pidFile(k.dir, 'child.pid');
  const grandchild = pidFile(k.dir, 'grandchild.pid');
  assert.ok(alive(child) && alive(grandchild));
  controller.abort();
  const outcome = await pending;
  assert.equal(outcome?.name, 'AbortError', String(outcome));
  await waitUntil(() => !alive(child) && !alive(grandchild), 'the whole process group to be gone', { ms: WAIT_MS });
  await waitUntil(() => traceOf(readTrace(join(k.dir, 'trace.jsonl')), 'grouped').some((r) => r.event === 'tool.call.end'), 'the call end record', { ms: WAIT_MS });
  const end = traceOf(readTrace(join(k.dir, 'trace.jsonl')), 'grouped').find((r) => r.event === 'tool.call.end');
  assert.equal(end.attributes.outcome, 'cancelled', JSON.stringify(end));
  assert.equal(end.attributes['keel.reason'], 'exchange closed');
});

httpKeelTest('closing the HTTP response stream while the call waits out a retry backoff cancels it: no further attempt starts (CAN-5, RET-1)', {
  args: catalogArgs((dir) => [{
    name: 'failing', description: 'fails retryably, then would run again', inputSchema: { type: 'object' }, effect: 'read',
    timeouts: { idleMs: 0, maxMs: 50000, attemptMs: 5000 },
    retry: { maxAttempts: 3, baseMs: 20000, capMs: 20000 },
    run: { command: ['/bin/sh', '-c', `echo run >> ${join(dir, 'runs')}; exit 75`] },
  }]),
}, async (k) => {
  const controller = new AbortController();
  const pending = post(k, 1, 'failing', controller.signal).then((r) => r.text()).catch((e) => e);
  const trace = () => traceOf(readTrace(join(k.dir, 'trace.jsonl')), 'failing');
  await waitUntil(() => trace().some((r) => r.event === 'retry.scheduled'), 'the first attempt to fail and a retry to be scheduled', { ms: WAIT_MS });
  controller.abort();
  assert.equal((await pending)?.name, 'AbortError');
  await waitUntil(() => trace().some((r) => r.event === 'tool.call.end'), 'the call end record', { ms: WAIT_MS });
  const end = trace().find((r) => r.event === 'tool.call.end');
  assert.equal(end.attributes.outcome, 'cancelled', JSON.stringify(trace()));
  // No attempt starts after the cancel (full jitter may, rarely, have started the second one
  // before the abort: then there is no backoff left to cut, and the rule still holds).
  const attempts = () => trace().filter((r) => r.event === 'tool.attempt.start');
  await waitUntil(() => attempts().length === trace().filter((r) => r.event === 'tool.attempt.end').length, 'the attempts to end', { ms: WAIT_MS });
  // ts is ISO 8601 with microseconds, one format: its order is the string order.
  for (const start of attempts()) assert.ok(start.ts < end.ts, `an attempt started after the cancel: ${JSON.stringify(trace())}`);
  const runs = readFileSync(join(k.dir, 'runs'), 'utf8').trim().split('\n');
  assert.equal(runs.length, attempts().length);
});
