// Interop over Streamable HTTP: many clients of the official MCP TypeScript SDKs on one keel
// (the v2 client @modelcontextprotocol/client pinned to 2026-07-28, the v1 client
// @modelcontextprotocol/sdk on 2025-11-25), sharing what keel keeps across requests: the
// idempotency ledger and the durable task store.
// Run: node --test tests/interop/http_many_clients.test.mjs   (KEEL_BINARY picks the
// binary, else build/keel). Every test starts its own keel in a fresh temporary directory
// (http_keel.mjs) and stops it.
//
// Replays are recognised as the ledger tests do (ledger_processes.test.mjs): a replayed
// result carries _meta["dev.keel/replayed"]: true; ledger_lookup tells how often a key's
// effect ran. The slow keyed write of the REC-1 tests is a command-backed catalog tool
// (docs/catalog.md) whose script, written into keel's directory, records its run and its
// effect and then waits for a gate file the test creates; its lookup is the interop fixture
// lookup.sh (the effect happened iff its key is in the effects file). Waits are for
// conditions with generous deadlines; nothing is ordered by sleeping.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SdkError } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { MODERN, httpKeelTest, legacyClient, modernClient, readTrace, traceOf, waitUntil } from './http_keel.mjs';

const REPLAYED = 'dev.keel/replayed';
const KEY_META = 'dev.keel/idempotency-key';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const TASKS = 'io.modelcontextprotocol/tasks';
const OPENING_BALANCE = 100000;
const reqOpts = { timeout: 20000 };
const WAIT_MS = 30000;
const TRACE = 'trace.jsonl';
const LOOKUP = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'commands', 'lookup.sh');

const show = (x) => JSON.stringify(x);
const replayed = (result) => result?._meta?.[REPLAYED] === true;
const ok = (result, what) => {
  assert.notEqual(result.isError, true, `${what}: tool error ${show(result)}`);
  return result;
};
const lines = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

// A permissive Standard Schema for the v2 client's generic request path (tasks/get needs
// one on a 2026-07-28 connection: modern_tasks.test.mjs).
const LOOSE = {
  '~standard': {
    version: 1, vendor: 'keel-interop',
    validate: (value) => (value !== null && typeof value === 'object'
      ? { value } : { issues: [{ message: `not an object: ${JSON.stringify(value)}` }] }),
  },
};

httpKeelTest('8 concurrent v2 clients over HTTP, 50 echo calls each (5 in flight per client): all 400 answer their own text (HTTP-4, ERA-1)', { timeoutMs: 180000 }, async (k) => {
  const CLIENTS = 8;
  const CALLS = 50;
  const IN_FLIGHT = 5;
  const clients = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => modernClient(k, { name: `many-${i}` })));
  const failures = [];
  await Promise.all(clients.map(async ({ client }, c) => {
    for (let batch = 0; batch < CALLS; batch += IN_FLIGHT) {
      await Promise.all(Array.from({ length: IN_FLIGHT }, async (_, j) => {
        const text = `client ${c} call ${batch + j}`;
        try {
          const r = await client.callTool({ name: 'echo', arguments: { text } }, reqOpts);
          if (r.isError || r.content?.[0]?.text !== text) failures.push({ text, r });
        } catch (err) {
          failures.push({ text, err: String(err) });
        }
      }));
    }
  }));
  assert.deepEqual(failures, [], `${failures.length} of ${CLIENTS * CALLS} failed: ${show(failures.slice(0, 5))}`);
  for (const { tap, errors } of clients) {
    const calls = tap.posts('tools/call');
    assert.equal(calls.length, CALLS);
    for (const x of calls) assert.equal(x.status, 200, show(x.messages));
    assert.deepEqual(errors, []);
  }
});

httpKeelTest('idempotency across eras over HTTP: a v1 legacy client and a v2 modern client race the same idempotency key on charge_account, 10 rounds: each round one execution (one answer replayed, the same charge_id, the balance fell once), ledger_lookup says executions 1 (IDEM-3, HTTP-4: one ledger for all clients)', { timeoutMs: 120000 }, async (k, t) => {
  // Each client's charge_account POST is held until the other's is ready too, then both go,
  // in turn first (the v1 client reaches fetch sooner: without this it always arrived first).
  let waiting = [];
  let releases = 0;
  let racing = true;
  const together = (url, init) => {
    let body;
    try { body = JSON.parse(init?.body ?? 'null'); } catch {}
    if (!racing || body?.method !== 'tools/call' || body.params?.name !== 'charge_account') return fetch(url, init);
    const isModern = 'io.modelcontextprotocol/protocolVersion' in (body.params._meta ?? {});
    return new Promise((resolve) => {
      waiting.push({ resolve, isModern });
      if (waiting.length === 2) {
        const go = waiting;
        waiting = [];
        const modernGoesFirst = releases++ % 2 === 1;
        go.sort((x, y) => Number(y.isModern === modernGoesFirst) - Number(x.isModern === modernGoesFirst));
        // (after this executor returns, so that both continuations are attached)
        setImmediate(() => { for (const { resolve: release } of go) release(); });
      }
    }).then(() => fetch(url, init));
  };
  const legacy = await legacyClient(k, { name: 'racer-v1', innerFetch: together });
  const modern = await modernClient(k, { name: 'racer-v2', innerFetch: together });
  const ROUNDS = 10;
  const executedBy = { legacy: 0, modern: 0 };
  for (let i = 0; i < ROUNDS; i++) {
    const key = `http-race-${i}`;
    const params = { name: 'charge_account', arguments: { account: `race-${i}`, cents: 1200 }, _meta: { [KEY_META]: key } };
    // The two POSTs race for the key.
    const [a, b] = await Promise.all([
      legacy.client.callTool(params, undefined, reqOpts),
      modern.client.callTool(params, reqOpts),
    ]);
    ok(a, `round ${i} v1`);
    ok(b, `round ${i} v2`);
    assert.equal(a.structuredContent?.charge_id, b.structuredContent?.charge_id, `round ${i}: two charge_ids ${show([a, b])}`);
    assert.equal(a.structuredContent.balance_cents, OPENING_BALANCE - 1200, `round ${i}: ${show(a)}`);
    assert.equal(b.structuredContent.balance_cents, OPENING_BALANCE - 1200, `round ${i}: ${show(b)}`);
    assert.equal([a, b].filter(replayed).length, 1, `round ${i}: exactly one answer replayed: ${show(a._meta)} / ${show(b._meta)}`);
    executedBy[replayed(a) ? 'modern' : 'legacy'] += 1;
    // Each era's result shape: the modern one carries serverInfo, the legacy one does not.
    assert.equal(b._meta?.[SERVER_INFO_KEY]?.name, 'keel', show(b));
    assert.equal(a._meta?.[SERVER_INFO_KEY], undefined, show(a));
    const lookup = ok(await modern.client.callTool({ name: 'ledger_lookup', arguments: { tool: 'charge_account', key } }, reqOpts), 'lookup').structuredContent;
    assert.equal(lookup.state, 'committed', show(lookup));
    assert.equal(lookup.executions, 1, `round ${i}: ${show(lookup)}`);
    assert.equal(lookup.result.structuredContent.charge_id, a.structuredContent.charge_id);
  }
  racing = false;
  t.diagnostic(`executed by the v1 client's request: ${executedBy.legacy}, by the v2 client's: ${executedBy.modern}`);
  // A third look from either client replays; an unkeyed charge runs (the balance fell once per round).
  const third = ok(await legacy.client.callTool({ name: 'charge_account', arguments: { account: 'race-0', cents: 1200 }, _meta: { [KEY_META]: 'http-race-0' } }, undefined, reqOpts), 'third');
  assert.ok(replayed(third), show(third));
  const unkeyed = ok(await modern.client.callTool({ name: 'charge_account', arguments: { account: 'race-0', cents: 1 } }, reqOpts), 'unkeyed');
  assert.equal(unkeyed.structuredContent.balance_cents, OPENING_BALANCE - 1201, show(unkeyed));
});

// The slow keyed write: records its run and its effect at once, then waits for DIR/gate
// (at most 60 s), then prints its result.
function gatedWriteArgs(dir) {
  const script = join(dir, 'gated_write.sh');
  writeFileSync(script, `#!/bin/sh
# gated_write.sh DIR: a keyed write whose effect is recorded at once and whose answer waits for DIR/gate.
dir=$1
echo "attempt=$KEEL_ATTEMPT key=$KEEL_IDEMPOTENCY_KEY" >> "$dir/runs"
echo "$KEEL_IDEMPOTENCY_KEY" >> "$dir/effects"
n=0
while [ ! -e "$dir/gate" ]; do
  n=$((n + 1))
  if [ $n -gt 1200 ]; then exit 3; fi
  sleep 0.05
done
printf '{"written": true, "by": "command", "key": "%s"}\\n' "$KEEL_IDEMPOTENCY_KEY"
`, { mode: 0o755 });
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({
    tools: [{
      name: 'gated_write',
      description: 'interop: a slow keyed write (its command waits for a gate file)',
      inputSchema: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
      effect: 'unsafe_write',
      timeouts: { idleMs: 0, maxMs: 50000, attemptMs: 50000 },
      retry: { maxAttempts: 1 },
      run: {
        command: [script, dir],
        killGraceMs: 200,
        lookup: { command: [LOOKUP, dir, 'effects', '{idempotency_key}'], timeoutMs: 5000 },
      },
    }],
  }, null, 2));
  return ['--catalog', catalog, '--trace-file', TRACE];
}

// Re-issues `params` until keel no longer says the key is in progress (the first call may
// still be settling); returns the first other answer.
async function reissue(call, what) {
  return waitUntil(async () => {
    const r = await call();
    return r.structuredContent?.error?.type === 'idempotency_in_progress' ? false : r;
  }, what, { ms: WAIT_MS, everyMs: 100 });
}

httpKeelTest('reconnect, legacy: a v1 client loses its stream mid-call of a slow keyed write (its transport closes; no notifications/cancelled), keel finishes the write anyway, and the client, back in its session, re-issuing the same key gets the stored result replayed: one run, one effect (REC-1, IDEM-2)', { args: gatedWriteArgs, timeoutMs: 120000 }, async (k) => {
  const effects = join(k.dir, 'effects');
  const KEY = 'rec1-legacy';
  const params = { name: 'gated_write', arguments: { target: 'web' }, _meta: { [KEY_META]: KEY } };
  const first = await legacyClient(k, { name: 'loses-stream' });
  const call = first.client.callTool(params, undefined, { timeout: 60000 });
  const lost = assert.rejects(call, McpError);
  await waitUntil(() => lines(effects).includes(KEY), 'the write\'s effect', { ms: WAIT_MS });
  // The stream is lost: the client's transport goes away with the call's POST open.
  const sessionId = first.transport.sessionId;
  await first.client.close();
  await lost;
  assert.deepEqual(first.tap.posts('notifications/cancelled'), [], 'the client cancelled; this test is about a lost stream');

  // The client comes back: a new transport resuming its session (the v1 client skips
  // initialize for a transport given a session id).
  const second = await legacyClient(k, { name: 're-issues', transportOptions: { sessionId, protocolVersion: '2025-11-25' } });
  assert.deepEqual(second.tap.posts('initialize'), []);
  // While the first call's write still runs, the key is held: nothing runs a second time.
  const held = await second.client.callTool(params, undefined, reqOpts);
  assert.equal(held.structuredContent?.error?.type, 'idempotency_in_progress', show(held));
  writeFileSync(join(k.dir, 'gate'), '');
  const again = await reissue(() => second.client.callTool(params, undefined, reqOpts), 'the re-issue to be answered');
  ok(again, 're-issue');
  assert.ok(replayed(again), `not a replay: ${show(again)}`);
  assert.deepEqual(again.structuredContent, { written: true, by: 'command', key: KEY }, 'the command\'s own result: keel did not cancel the legacy call');
  assert.deepEqual(lines(join(k.dir, 'runs')), [`attempt=1 key=${KEY}`]);
  assert.deepEqual(lines(effects), [KEY]);
  // The lost call itself ended ok (the trace's first gated_write call; the request ids of
  // the two sessions coincide, the call ids do not).
  const end = await waitUntil(() => {
    const records = traceOf(readTrace(join(k.dir, TRACE)), 'gated_write');
    const callId = records.find((r) => r.event === 'tool.call.start')?.attributes['keel.call.id'];
    return records.find((r) => r.event === 'tool.call.end' && r.attributes['keel.call.id'] === callId);
  }, 'the lost call\'s tool.call.end record', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'ok', show(end));
});

httpKeelTest('reconnect, modern: a v2 client\'s stream is lost (AbortController) mid-call of a slow keyed write after its effect: keel cancels it (CAN-5), the lookup finds the effect, and a new client re-issuing the same key gets that stored result replayed: one run, one effect, nothing re-run (REC-1, CAN-5, IDEM-5)', { args: gatedWriteArgs, timeoutMs: 120000 }, async (k) => {
  const effects = join(k.dir, 'effects');
  const KEY = 'rec1-modern';
  const params = { name: 'gated_write', arguments: { target: 'web' }, _meta: { [KEY_META]: KEY } };
  const first = await modernClient(k, { name: 'loses-stream' });
  const controller = new AbortController();
  const call = first.client.callTool(params, { timeout: 60000, signal: controller.signal });
  const lost = assert.rejects(call, SdkError);
  await waitUntil(() => lines(effects).includes(KEY), 'the write\'s effect', { ms: WAIT_MS });
  controller.abort('connection lost');
  await lost;
  await first.client.close();

  const second = await modernClient(k, { name: 're-issues' });
  const again = await reissue(() => second.client.callTool(params, reqOpts), 'the re-issue to be answered');
  ok(again, 're-issue');
  assert.ok(replayed(again), `not a replay: ${show(again)}`);
  // The command never finished (its gate never opened): the stored result is the lookup's.
  assert.deepEqual(again.structuredContent, { restarted: true, by: 'lookup', key: KEY }, show(again));
  assert.equal(again._meta?.[SERVER_INFO_KEY]?.name, 'keel');
  assert.deepEqual(lines(join(k.dir, 'runs')), [`attempt=1 key=${KEY}`]);
  assert.deepEqual(lines(effects), [KEY]);
  const records = traceOf(readTrace(join(k.dir, TRACE)), 'gated_write');
  const callId = records.find((r) => r.event === 'tool.call.start')?.attributes['keel.call.id'];
  const end = records.find((r) => r.event === 'tool.call.end' && r.attributes['keel.call.id'] === callId);
  assert.equal(end?.attributes.outcome, 'cancelled', show(records));
  assert.equal(end.attributes['keel.reason'], 'exchange closed', show(end));
});

httpKeelTest('a modern call promoted to a task (--task-after 200, the tasks extension declared) is answered with a CreateTaskResult; after that client is gone a NEW client polls tasks/get to completed with the sleep\'s result (TASKX-1, HTTP-4: one task store for all clients)', { args: ['--task-after', '200', '--task-poll-interval', '50'], timeoutMs: 120000 }, async (k) => {
  const DECLARING = { extensions: { [TASKS]: {} } };
  const first = await modernClient(k, { name: 'starts-task', capabilities: DECLARING });
  await assert.rejects(first.client.callTool({ name: 'sleep', arguments: { ms: 1500 } }, reqOpts), (err) => {
    assert.ok(err instanceof SdkError, `${err?.constructor?.name} ${err}`);
    assert.equal(err.code, 'UNSUPPORTED_RESULT_TYPE', err.message);
    return true;
  });
  // The v2 client hides the task; its id is on the wire.
  const x = first.tap.posts('tools/call').at(-1);
  const created = x.messages.find((m) => m.id === x.body.id)?.result;
  assert.equal(created?.resultType, 'task', show(x.messages));
  assert.equal(created.status, 'working', show(created));
  assert.match(created.taskId, /^[0-9a-f]{32}$/, show(created));
  await first.client.close();

  const second = await modernClient(k, { name: 'polls-task', capabilities: DECLARING });
  const statuses = [];
  const done = await waitUntil(async () => {
    const got = await second.client.request({ method: 'tasks/get', params: { taskId: created.taskId } }, LOOSE, reqOpts);
    statuses.push(got.status);
    return got.status !== 'working' && got;
  }, 'the task to leave working', { ms: WAIT_MS, everyMs: 50 });
  assert.equal(done.status, 'completed', `statuses ${show(statuses)}: ${show(done)}`);
  assert.equal(done.taskId, created.taskId);
  assert.deepEqual(done.result?.content, [{ type: 'text', text: 'slept 1500 ms' }], show(done));
  assert.notEqual(done.result.isError, true, show(done));
  for (const y of second.tap.posts('tasks/get')) {
    assert.equal(y.requestHeaders['mcp-protocol-version'], MODERN);
    assert.equal(y.requestHeaders['mcp-session-id'], undefined);
  }
});

// JSON-RPC ids are the client's: two sessions (or two modern requests) may use the same one
// at once, and keel keys its calls by (peer, id) — a cancel names an id only in its own scope.
httpKeelTest('ids are scoped per legacy session: two v1 clients\' calls share a JSON-RPC id; notifications/cancelled for that id in one session cancels only its own call (trace), the other\'s latch_wait completes when released (CAN-1, HTTP-5)', { args: ['--trace-file', TRACE] }, async (k) => {
  const trace = join(k.dir, TRACE);
  const a = await legacyClient(k, { name: 'cancels' });
  const b = await legacyClient(k, { name: 'keeps' });
  const latch = 'http-same-id';
  const controller = new AbortController();
  const aCall = a.client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, undefined, { timeout: 60000, signal: controller.signal });
  const aRejected = assert.rejects(aCall, McpError);
  const bCall = b.client.callTool({ name: 'latch_wait', arguments: { name: latch } }, undefined, { timeout: 60000 });
  let bSettled = false;
  bCall.finally(() => { bSettled = true; }).catch(() => {});
  await waitUntil(() => {
    const records = readTrace(trace);
    return traceOf(records, 'sleep').some((r) => r.event === 'tool.attempt.start') &&
      traceOf(records, 'latch_wait').some((r) => r.event === 'tool.attempt.start');
  }, 'both calls to run', { ms: WAIT_MS });
  const aId = a.tap.posts('tools/call').at(-1).body.id;
  const bId = b.tap.posts('tools/call').at(-1).body.id;
  assert.equal(aId, bId, 'the two sessions\' calls do not share an id: the test proves nothing');

  controller.abort('only mine');
  await aRejected;
  const cancel = await waitUntil(() => a.tap.posts('notifications/cancelled').find((x) => x.status !== null), 'the cancel POST', { ms: WAIT_MS });
  assert.equal(cancel.body.params.requestId, aId);
  const end = await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.call.end'), 'the sleep\'s end', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'cancelled', show(end));
  // b's call with the same id is untouched: no end record, not settled.
  assert.equal(traceOf(readTrace(trace), 'latch_wait').find((r) => r.event === 'tool.call.end'), undefined, 'the other session\'s call ended');
  assert.equal(bSettled, false);

  const opener = await modernClient(k, { name: 'opener' });
  const released = await opener.client.callTool({ name: 'latch_release', arguments: { name: latch } }, reqOpts);
  assert.deepEqual(released.content, [{ type: 'text', text: `released ${latch}` }]);
  const done = await bCall;
  assert.deepEqual(done.content, [{ type: 'text', text: `released ${latch}` }], show(done));
});

httpKeelTest('closing one modern request\'s stream cancels only that request: another v2 client\'s call with the same JSON-RPC id runs on and completes (CAN-5)', { args: ['--trace-file', TRACE] }, async (k) => {
  const trace = join(k.dir, TRACE);
  const a = await modernClient(k, { name: 'aborts' });
  const b = await modernClient(k, { name: 'keeps' });
  const latch = 'http-same-id-modern';
  const controller = new AbortController();
  const aRejected = assert.rejects(a.client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, { timeout: 60000, signal: controller.signal }), SdkError);
  const bCall = b.client.callTool({ name: 'latch_wait', arguments: { name: latch } }, { timeout: 60000 });
  await waitUntil(() => {
    const records = readTrace(trace);
    return traceOf(records, 'sleep').some((r) => r.event === 'tool.attempt.start') &&
      traceOf(records, 'latch_wait').some((r) => r.event === 'tool.attempt.start');
  }, 'both calls to run', { ms: WAIT_MS });
  assert.equal(a.tap.posts('tools/call').at(-1).body.id, b.tap.posts('tools/call').at(-1).body.id, 'no shared id: the test proves nothing');
  controller.abort('only mine');
  await aRejected;
  const end = await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.call.end'), 'the sleep\'s end', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'cancelled', show(end));
  assert.equal(traceOf(readTrace(trace), 'latch_wait').find((r) => r.event === 'tool.call.end'), undefined, 'the other request ended');
  const released = await a.client.callTool({ name: 'latch_release', arguments: { name: latch } }, reqOpts);
  assert.deepEqual(released.content, [{ type: 'text', text: `released ${latch}` }]);
  const done = await bCall;
  assert.deepEqual(done.content, [{ type: 'text', text: `released ${latch}` }], show(done));
});

httpKeelTest('progress is routed per session: two v1 clients run progress at once under the same request id and progress token (3 and 5 steps); each onprogress and each call stream sees only its own steps and total (PRG-1, HTTP-5)', {}, async (k) => {
  const a = await legacyClient(k, { name: 'three' });
  const b = await legacyClient(k, { name: 'five' });
  const seen = { a: [], b: [] };
  const [ra, rb] = await Promise.all([
    a.client.callTool({ name: 'progress', arguments: { steps: 3, interval_ms: 150 } }, undefined, { ...reqOpts, onprogress: (p) => seen.a.push(p) }),
    b.client.callTool({ name: 'progress', arguments: { steps: 5, interval_ms: 150 } }, undefined, { ...reqOpts, onprogress: (p) => seen.b.push(p) }),
  ]);
  assert.deepEqual(ra.content, [{ type: 'text', text: 'done 3 steps' }]);
  assert.deepEqual(rb.content, [{ type: 'text', text: 'done 5 steps' }]);
  const xa = a.tap.posts('tools/call').at(-1);
  const xb = b.tap.posts('tools/call').at(-1);
  assert.equal(xa.body.params._meta.progressToken, xb.body.params._meta.progressToken, 'no shared token: the test proves nothing');
  assert.deepEqual(seen.a.map((p) => [p.progress, p.total]), [[1, 3], [2, 3], [3, 3]], show(seen.a));
  assert.deepEqual(seen.b.map((p) => [p.progress, p.total]), [[1, 5], [2, 5], [3, 5], [4, 5], [5, 5]], show(seen.b));
  const totals = (x) => [...new Set(x.messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.total))];
  assert.deepEqual(totals(xa), [3]);
  assert.deepEqual(totals(xb), [5]);
});

httpKeelTest('--http-idle-timeout 1000 with no SSE keep-alives never cuts a call keel is still computing: modern JSON, modern SSE and legacy SSE sleeps of 2500 ms all answer, and the next requests work (HTTP-3)', { args: ['--http-idle-timeout', '1000', '--sse-keepalive', '0', '--workers', '3'] }, async (k) => {
  const modern = await modernClient(k, { name: 'idle-modern' });
  const legacy = await legacyClient(k, { name: 'idle-legacy' });
  const opts = { timeout: 30000 };
  const results = await Promise.all([
    modern.client.callTool({ name: 'sleep', arguments: { ms: 2500 } }, opts),
    modern.client.callTool({ name: 'sleep', arguments: { ms: 2500 } }, { ...opts, onprogress: () => {} }),
    legacy.client.callTool({ name: 'sleep', arguments: { ms: 2500 } }, undefined, opts),
  ]);
  for (const r of results) assert.deepEqual(r.content, [{ type: 'text', text: 'slept 2500 ms' }], show(r));
  const streams = [...modern.tap.posts('tools/call'), ...legacy.tap.posts('tools/call')].map((x) => x.contentType?.split(';')[0]);
  assert.deepEqual(streams, ['application/json', 'text/event-stream', 'text/event-stream']);
  const echoes = await Promise.all([
    modern.client.callTool({ name: 'echo', arguments: { text: 'm' } }, opts),
    legacy.client.callTool({ name: 'echo', arguments: { text: 'l' } }, undefined, opts),
  ]);
  assert.deepEqual(echoes.map((r) => r.content[0].text), ['m', 'l']);
});

// HTTP-4 asks for a per-client share of --max-inflight: many clients share one coordinator,
// so one client must not be able to take every slot and starve the others.
httpKeelTest('one client cannot take every --max-inflight slot: a legacy session sending 4 latch_waits under --max-inflight 4 --max-inflight-per-client 3 gets 3 admitted, and another session\'s echo is admitted (HTTP-4: per-client share)', {
  args: ['--max-inflight', '4', '--max-inflight-per-client', '3', '--workers', '8', '--trace-file', TRACE],
}, async (k) => {
  const greedy = await legacyClient(k, { name: 'greedy' });
  const other = await legacyClient(k, { name: 'other' });
  const latch = 'http-share';
  const held = Array.from({ length: 4 }, () => greedy.client.callTool({ name: 'latch_wait', arguments: { name: latch } }, undefined, { timeout: 60000 }));
  try {
    await waitUntil(() => traceOf(readTrace(join(k.dir, TRACE)), 'latch_wait').filter((r) => r.event === 'tool.call.start').length >= 1,
      'the greedy session\'s calls to be admitted', { ms: WAIT_MS });
    // Wait until keel has admitted or refused all four (whichever its share rule says).
    await waitUntil(() => greedy.tap.posts('tools/call').length === 4 && greedy.tap.posts('tools/call').every((x) => x.status !== null),
      'keel to take all four calls', { ms: WAIT_MS });
    const echo = await other.client.callTool({ name: 'echo', arguments: { text: 'my share' } }, undefined, reqOpts);
    assert.notEqual(echo.isError, true, show(echo));
    assert.deepEqual(echo.content, [{ type: 'text', text: 'my share' }]);
  } finally {
    await other.client.callTool({ name: 'latch_release', arguments: { name: latch } }, undefined, reqOpts).catch(() => {});
    await Promise.allSettled(held);
  }
});
