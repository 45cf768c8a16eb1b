// keel wrap --upstream-url: a Streamable HTTP upstream behind keel (http_upstream.h). The
// upstream is another keel (`keel --test-tools --http 127.0.0.1:0 --no-stdio`, which serves
// both eras: 2025-11-25 with sessions, 2026-07-28 stateless); the client speaks raw
// JSON-RPC (2025-11-25) to `keel wrap --upstream-url URL` over stdio.
//   - tools/list through keel is the upstream's list; echo works;
//   - a cancel of a long call reaches the upstream (its sleep ends early: the upstream's
//     trace records the call's end long before the sleep would) and no answer comes back
//     for the cancelled id;
//   - all of it with --upstream-protocol legacy, modern and auto;
//   - exit codes: no upstream or two upstreams: 64; an upstream nobody listens on: 69.
// Run: node --test tests/interop/wrap_http_upstream.test.mjs   (or: npm run test:interop)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { startHttpKeel, legacyClient, readTrace, traceOf, waitUntil } from './http_keel.mjs';
import { KEEL, freshDir, startRawKeel } from './raw_keel.mjs';

const TEST_TIMEOUT_MS = 60000;
const SLEEP_MS = 30000;

// The upstream keel (its trace in <dir>/trace.jsonl) and `keel wrap` in front of it.
async function wrapped(t, protocol) {
  const upstream = await startHttpKeel({ args: (dir) => ['--trace-file', join(dir, 'trace.jsonl')] });
  t.after(() => upstream.stop());
  const dir = freshDir(t, 'keel-wrap-http-');
  const k = startRawKeel(t, {
    binary: KEEL,
    args: ['wrap', '--upstream-url', upstream.url.href, '--upstream-protocol', protocol,
      '--db', join(dir, 'wrap.db'), '--log-level', 'info'],
    cwd: dir,
    clientName: `wrap-http-${protocol}`,
  });
  await k.initialize();
  return { upstream, k };
}

const byName = (tools) => Object.fromEntries(tools.map((tool) => [tool.name, tool]));

for (const protocol of ['legacy', 'modern', 'auto']) {
  test(`through keel wrap --upstream-url (${protocol}) the upstream's tools are listed and echo works`,
    { timeout: TEST_TIMEOUT_MS }, async (t) => {
      const { upstream, k } = await wrapped(t, protocol);
      const direct = await legacyClient(upstream);
      const theirs = byName((await direct.client.listTools()).tools);
      const listed = await k.request('tools/list', {});
      assert.ok(listed.result, JSON.stringify(listed));
      const ours = byName(listed.result.tools);
      assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
      for (const [name, tool] of Object.entries(theirs)) {
        assert.equal(ours[name].description, tool.description, name);
        assert.deepEqual(ours[name].inputSchema, tool.inputSchema, name);
      }
      const echo = await k.request('tools/call', { name: 'echo', arguments: { text: 'through HTTP' } });
      assert.deepEqual(echo.result?.content, [{ type: 'text', text: 'through HTTP' }], JSON.stringify(echo));
      assert.notEqual(echo.result.isError, true);
      await k.close();
      assert.equal(k.exit.code, 0, k.stderr);
      if (protocol === 'legacy') {
        // A 2025-11-25 session: keel asked for the GET stream, which keel's HTTP refuses.
        assert.match(k.stderr, /no GET stream \(HTTP 405\)/);
      }
    });

  test(`a cancel through keel wrap --upstream-url (${protocol}) stops the upstream's call and nothing answers it`,
    { timeout: TEST_TIMEOUT_MS }, async (t) => {
      const { upstream, k } = await wrapped(t, protocol);
      const trace = () => traceOf(readTrace(join(upstream.dir, 'trace.jsonl')), 'sleep');
      const sent = performance.now();
      k.send({ id: 'long', method: 'tools/call', params: { name: 'sleep', arguments: { ms: SLEEP_MS } } });
      await waitUntil(() => trace().some((r) => r.event === 'tool.call.start'), 'the upstream to start sleep');
      k.notify('notifications/cancelled', { requestId: 'long', reason: 'test' });
      const end = await waitUntil(() => trace().find((r) => r.event === 'tool.call.end'),
        'the upstream call to end', { ms: 10000 });
      const took = performance.now() - sent;
      assert.ok(took < SLEEP_MS / 3, `the upstream's sleep ended after ${Math.round(took)} ms`);
      assert.ok(end.attributes['keel.reason'], JSON.stringify(end));
      // An echo and a ping after it: everything keel had to say about 'long' came before.
      const echo = await k.request('tools/call', { name: 'echo', arguments: { text: 'after' } });
      assert.deepEqual(echo.result?.content, [{ type: 'text', text: 'after' }], JSON.stringify(echo));
      await k.request('ping', {});
      assert.deepEqual(k.messages.filter((m) => m.id === 'long'), [], 'no answer for the cancelled id');
      t.diagnostic(`${protocol}: upstream call ended ${Math.round(took)} ms after it was sent (${end.attributes['keel.reason']})`);
      await k.close();
    });
}

test('keel wrap without an upstream, or with a command and --upstream-url, exits 64', () => {
  const none = spawnSync(KEEL, ['wrap'], { encoding: 'utf8', input: '' });
  assert.equal(none.status, 64, none.stderr);
  assert.match(none.stderr, /--upstream-url/);
  const both = spawnSync(KEEL, ['wrap', '--upstream-url', 'http://127.0.0.1:9/mcp', '--', 'true'],
    { encoding: 'utf8', input: '' });
  assert.equal(both.status, 64, both.stderr);
  assert.match(both.stderr, /not both/);
  const scheme = spawnSync(KEEL, ['wrap', '--upstream-url', 'ftp://127.0.0.1/mcp'], { encoding: 'utf8', input: '' });
  assert.notEqual(scheme.status, 0, scheme.stderr);
});

test('keel wrap --upstream-url with nobody listening exits 69 and says why', { timeout: TEST_TIMEOUT_MS }, (t) => {
  const dir = freshDir(t, 'keel-wrap-http-');
  const r = spawnSync(KEEL, ['wrap', '--upstream-url', 'http://127.0.0.1:1/mcp', '--db', join(dir, 'w.db')],
    { encoding: 'utf8', input: '', cwd: dir, timeout: 30000 });
  assert.equal(r.status, 69, r.stderr);
  assert.match(r.stderr, /upstream HTTP: .*(refused|connect)/i);
});
