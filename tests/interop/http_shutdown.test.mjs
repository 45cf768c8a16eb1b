// Interop over Streamable HTTP: keel's shutdown on SIGTERM with calls in flight, seen by the
// official MCP TypeScript SDK clients (v2 @modelcontextprotocol/client pinned to 2026-07-28,
// v1 @modelcontextprotocol/sdk on 2025-11-25) and by raw TCP connects.
// Run: node --test tests/interop/http_shutdown.test.mjs   (KEEL_BINARY picks the binary,
// else build/keel). The test starts its own keel in a fresh temporary directory
// (http_keel.mjs).
//
// keel on SIGTERM (keel --help): it stops reading — the listening socket closes, so new
// connections are refused — lets in-flight calls finish within --shutdown-grace, ends the
// rest with an error, and exits 0. The durations are chosen so the outcome does not depend
// on the machine's speed: the short call (3 s) is in flight when SIGTERM comes (the test
// sends it as soon as the trace shows every call running) and ends well within the grace
// (8 s); the long calls (60 s) cannot. Waits are for conditions with deadlines.
import assert from 'node:assert/strict';
import net from 'node:net';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { httpKeelTest, legacyClient, modernClient, readTrace, traceOf, waitUntil, withTimeout } from './http_keel.mjs';

const GRACE_MS = 8000;
const SHORT_MS = 3000;
const LONG_MS = 60000;
const TRACE = 'trace.jsonl';
const show = (x) => JSON.stringify(x);

// 'connected' or the connect error's code (ECONNREFUSED once keel stopped listening).
function tryConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve('connected'); });
    socket.once('error', (err) => resolve(err.code ?? String(err)));
  });
}

// The settlement of a request: {ok: value} or {err}, with the time it came.
const settle = (p) => p.then((value) => ({ ok: value, at: performance.now() }), (err) => ({ err, at: performance.now() }));

httpKeelTest('SIGTERM with calls in flight over HTTP (--shutdown-grace 8000): new connections are refused at once, a request on an open connection is refused, the short call (sleep 3000) completes normally, the long ones (sleep 60000: modern JSON, modern SSE, legacy SSE) each get an error response on their own stream after the grace, and keel exits 0 (DC-2, HTTP-1)', {
  args: ['--shutdown-grace', String(GRACE_MS), '--workers', '4', '--trace-file', TRACE, '--log-level', 'info'],
  timeoutMs: 90000,
}, async (k, t) => {
  const trace = join(k.dir, TRACE);
  const short = await modernClient(k, { name: 'short' });
  const longJson = await modernClient(k, { name: 'long-json' });
  const longSse = await modernClient(k, { name: 'long-sse' });
  const longLegacy = await legacyClient(k, { name: 'long-legacy' });
  const idle = await modernClient(k, { name: 'idle' });
  const warm = await idle.client.callTool({ name: 'echo', arguments: { text: 'warm' } }, { timeout: 15000 });
  assert.deepEqual(warm.content, [{ type: 'text', text: 'warm' }]);

  const opts = { timeout: 120000 };
  const shortCall = settle(short.client.callTool({ name: 'sleep', arguments: { ms: SHORT_MS } }, opts));
  const longCalls = {
    'modern JSON': settle(longJson.client.callTool({ name: 'sleep', arguments: { ms: LONG_MS } }, opts)),
    // With a progressToken the modern call streams (SSE), though sleep reports nothing.
    'modern SSE': settle(longSse.client.callTool({ name: 'sleep', arguments: { ms: LONG_MS } }, { ...opts, onprogress: () => {} })),
    'legacy SSE': settle(longLegacy.client.callTool({ name: 'sleep', arguments: { ms: LONG_MS } }, undefined, opts)),
  };
  let longSettled = false;
  Promise.all(Object.values(longCalls)).then(() => { longSettled = true; });
  await waitUntil(() => traceOf(readTrace(trace), 'sleep').filter((r) => r.event === 'tool.attempt.start').length >= 4,
    'all four sleeps to run', { ms: 30000 });
  assert.equal(await tryConnect(k.port), 'connected', 'keel was not listening before SIGTERM');

  const sigtermWall = Date.now();
  const sigtermAt = performance.now();
  k.child.kill('SIGTERM');

  // New connections are refused while the grace runs (keel still up, the long calls on).
  await waitUntil(async () => (await tryConnect(k.port)) === 'ECONNREFUSED', 'a new connection to be refused', { ms: 5000, everyMs: 20 });
  const refusedAt = performance.now();
  assert.equal(k.exit, null, 'keel had already exited: the refusal proves nothing about the grace');
  assert.equal(longSettled, false, 'the long calls were already answered');

  // A request on a connection opened before SIGTERM is not served either: an error, at once.
  const late = await settle(idle.client.callTool({ name: 'echo', arguments: { text: 'too late' } }, { timeout: 15000 }));
  assert.equal(late.ok, undefined, `keel served a call after SIGTERM: ${show(late.ok)}`);
  t.diagnostic(`request on an open connection after SIGTERM: ${late.err?.constructor?.name} ${late.err?.code ?? ''} ${late.err?.message}`);
  assert.equal(longSettled, false, 'the late request was refused only once the grace was over');

  // The short call completes normally; it was in flight at SIGTERM.
  const s = await shortCall;
  assert.equal(s.err, undefined, `the short call failed: ${s.err}`);
  assert.notEqual(s.ok.isError, true, show(s.ok));
  assert.deepEqual(s.ok.content, [{ type: 'text', text: `slept ${SHORT_MS} ms` }]);
  const shortEnd = traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.call.end' && r.attributes.outcome === 'ok');
  assert.ok(shortEnd && shortEnd.ts_unix_ms >= sigtermWall, `the short call ended before SIGTERM: ${show(shortEnd)}`);
  assert.equal(longSettled, false, 'a long call was answered before the short one completed');

  // The long calls: an error response each, on its own stream, once the grace is over.
  for (const [what, p] of Object.entries(longCalls)) {
    const r = await p;
    assert.equal(r.ok, undefined, `${what}: resolved ${show(r.ok)}`);
    if (what === 'legacy SSE') assert.ok(r.err instanceof McpError, `${what}: ${r.err?.constructor?.name} ${r.err}`);
    else assert.ok(r.err instanceof ProtocolError, `${what}: ${r.err?.constructor?.name} ${r.err}`);
    assert.equal(r.err.code, -32603, `${what}: ${r.err.message}`);
    assert.match(r.err.message, /shutting down/i, what);
    assert.ok(r.at - sigtermAt >= GRACE_MS * 0.9, `${what}: the error came ${(r.at - sigtermAt).toFixed(0)} ms after SIGTERM, before the ${GRACE_MS} ms grace`);
  }
  for (const [what, c] of [['modern JSON', longJson], ['modern SSE', longSse], ['legacy SSE', longLegacy]]) {
    const x = c.tap.posts('tools/call', (e) => e.body.params.name === 'sleep').at(-1);
    await withTimeout(x.done, `${what}: the end of its response`, 10000);
    assert.equal(x.ended, 'eof', `${what}: keel did not end the response: ${x.error}`);
    const answers = x.messages.filter((m) => m.id === x.body.id);
    assert.equal(answers.length, 1, `${what}: ${show(x.messages)}`);
    assert.equal(answers[0].error?.code, -32603, `${what}: ${show(answers[0])}`);
    assert.match(x.contentType ?? '', what.endsWith('SSE') ? /^text\/event-stream/ : /^application\/json/, `${what}: ${x.contentType}`);
  }

  const exit = await withTimeout(k.exited, 'keel to exit', 20000);
  assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, k.stderr());
  assert.equal(await tryConnect(k.port), 'ECONNREFUSED');
  t.diagnostic(`refused ${(refusedAt - sigtermAt).toFixed(0)} ms after SIGTERM; exited ${(exit.at - sigtermAt).toFixed(0)} ms after it`);
  const inFlight = /shutting down \(SIGTERM\); (\d+) call\(s\) in flight/.exec(k.stderr());
  t.diagnostic(`keel: ${inFlight?.[0] ?? '(no shutdown line)'}`);
});
