// Interop over Streamable HTTP, modern era: the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client, its StreamableHTTPClientTransport) pinned to 2026-07-28,
// against the real keel binary serving `--http 127.0.0.1:0 --no-stdio` on loopback.
// Run: node --test tests/interop/http_modern.test.mjs   (KEEL_BINARY picks the binary,
// else build/keel). Every test starts its own keel in a fresh temporary directory
// (http_keel.mjs) and stops it.
//
// What is observed: the client's API (what it resolves or rejects with, its handlers), and
// the HTTP traffic itself through a fetch tap (http_keel.mjs tapFetch: every request with
// its headers and JSON body, every response's status, headers and JSON-RPC messages, and
// whether keel ended the body). "The work stopped" is read from keel's --trace-file (the
// call's tool.call.end record, outcome cancelled) and, with --workers 1, from the next call
// running at all. Waits are for conditions with generous deadlines; nothing is ordered by
// sleeping.
//
// The v2 client on a 2026-07-28 connection over HTTP (2.4.0): the pin's server/discover
// probe runs on the session's own transport; each request is its own POST carrying
// MCP-Protocol-Version and the _meta envelope; aborting a request (its AbortSignal) aborts
// that POST (the transport's per-request stream) instead of sending notifications/cancelled,
// and the request rejects with SdkError carrying the abort reason. An input_required result
// is fulfilled by the client's registered handlers and retried as a new POST.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LOG_LEVEL_META_KEY, SdkError } from '@modelcontextprotocol/client';

import { MODERN, httpKeelTest, modernClient, readTrace, traceOf, waitUntil } from './http_keel.mjs';

const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const reqOpts = { timeout: 15000 };
const WAIT_MS = 20000;
const TRACE = 'trace.jsonl';
const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const ALICE = { action: 'accept', content: { name: 'Alice' } };

const dump = (xs) => xs.map((x) => JSON.stringify(x)).join('\n');
const show = (x) => JSON.stringify(x);
// A compact view of the tap's exchanges, for failure messages.
const wire = (tap) => tap.exchanges.map((x) =>
  `${x.n} ${x.method} ${x.body?.method ?? (x.body?.id !== undefined ? `response ${x.body.id}` : '')} -> ${x.status} ${x.contentType} ended=${x.ended} ${dump(x.messages)}`).join('\n');
const callPost = (tap, tool) => tap.posts('tools/call', (x) => x.body.params?.name === tool).at(-1);

// Every POST the v2 client made on a modern connection: the version header, the envelope,
// no session either way.
function assertStatelessModern(tap) {
  const posts = tap.exchanges.filter((x) => x.method === 'POST');
  assert.ok(posts.length > 0, 'no POST on the wire');
  for (const x of posts) {
    assert.equal(x.requestHeaders['mcp-protocol-version'], MODERN, `MCP-Protocol-Version on ${show(x.body)}`);
    assert.equal(x.requestHeaders['mcp-session-id'], undefined, `a session id sent: ${show(x.requestHeaders)}`);
    assert.equal(x.headers['mcp-session-id'], undefined, `keel gave a modern request a session: ${show(x.headers)}`);
    if ('id' in (x.body ?? {}) && 'method' in x.body) {
      assert.equal(x.body.params?._meta?.[PROTOCOL_VERSION_KEY], MODERN, `envelope of ${show(x.body)}`);
    }
  }
}

httpKeelTest('v2 client pinned to 2026-07-28 over HTTP: server/discover, tools/list and echo are stateless POSTs (MCP-Protocol-Version on each, no Mcp-Session-Id either way), each answered by one JSON body with resultType complete (ERA-1, ERA-4, HTTP-1)', {}, async (k) => {
  const { client, tap, errors } = await modernClient(k);
  assert.equal(client.getProtocolEra(), 'modern');
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getServerVersion()?.name, 'keel');
  assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: true }, logging: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });

  const discovered = await client.discover(reqOpts);
  assert.ok(discovered.supportedVersions.includes(MODERN), show(discovered));
  const { tools } = await client.listTools(undefined, reqOpts);
  const names = tools.map((x) => x.name);
  for (const name of ['echo', 'sleep', 'progress', 'latch_wait', 'ask_name']) assert.ok(names.includes(name), `${name} missing from ${show(names)}`);
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'over http' } }, reqOpts);
  assert.notEqual(echo.isError, true, show(echo));
  assert.deepEqual(echo.content, [{ type: 'text', text: 'over http' }]);
  assert.equal(echo._meta?.[SERVER_INFO_KEY]?.name, 'keel');

  assertStatelessModern(tap);
  const methods = tap.exchanges.filter((x) => x.method === 'POST').map((x) => x.body.method);
  assert.deepEqual(methods.filter((m) => m !== 'server/discover'), ['tools/list', 'tools/call'], wire(tap));
  assert.ok(methods.includes('server/discover'), wire(tap));
  for (const x of tap.exchanges.filter((e) => e.method === 'POST')) {
    assert.equal(x.status, 200, wire(tap));
    assert.match(x.contentType ?? '', /^application\/json/, `a request without progress or logs streamed:\n${wire(tap)}`);
    assert.equal(x.ended, 'eof', wire(tap));
    assert.equal(x.messages.length, 1, wire(tap));
    const [answer] = x.messages;
    assert.equal(answer.id, x.body.id, wire(tap));
    assert.equal(answer.result?.resultType, 'complete', wire(tap));
    assert.equal(answer.result._meta?.[SERVER_INFO_KEY]?.name, 'keel', wire(tap));
  }
  assert.deepEqual(errors, []);
});

httpKeelTest('progress over HTTP: a modern call with a progressToken is answered on an SSE stream carrying progress 1..3 with its token, then the result, then keel ends the stream; onprogress sees them in order; without a token one JSON body (ERA-5, PRG-1, SSE-1, HTTP-1)', {}, async (k, t) => {
  const { client, tap, errors } = await modernClient(k);
  // Steps 150 ms apart: keel sends at most one progress per 50 ms per call (PRG-1).
  const args = { steps: 3, interval_ms: 150 };
  const quiet = await client.callTool({ name: 'progress', arguments: args }, reqOpts);
  assert.deepEqual(quiet.content, [{ type: 'text', text: 'done 3 steps' }]);
  const quietX = callPost(tap, 'progress');
  assert.match(quietX.contentType ?? '', /^application\/json/, wire(tap));
  assert.equal(quietX.messages.length, 1, wire(tap));

  const updates = [];
  const result = await client.callTool({ name: 'progress', arguments: args }, { ...reqOpts, onprogress: (p) => updates.push(p) });
  assert.deepEqual(result.content, [{ type: 'text', text: 'done 3 steps' }]);
  const x = callPost(tap, 'progress');
  assert.notEqual(x, quietX);
  const token = x.body.params._meta?.progressToken;
  assert.notEqual(token, undefined, show(x.body));
  assert.equal(x.status, 200);
  assert.match(x.contentType ?? '', /^text\/event-stream/, wire(tap));
  assert.equal(x.headers['cache-control'], 'no-cache', show(x.headers));
  assert.equal(x.headers['x-accel-buffering'], 'no', show(x.headers));
  await x.done;
  assert.equal(x.ended, 'eof', `keel did not end the stream after the result:\n${wire(tap)}`);
  const progress = x.messages.filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(progress.map((m) => m.params.progress), [1, 2, 3], wire(tap));
  for (const m of progress) {
    assert.equal(m.params.progressToken, token, show(m));
    assert.equal(m.params.total, 3, show(m));
  }
  const last = x.messages.at(-1);
  assert.equal(last.id, x.body.id, `the result is not the stream's last message:\n${wire(tap)}`);
  assert.equal(last.result?.resultType, 'complete', show(last));
  // onprogress: the same values in order; the v2 client may drop a progress it reads in the
  // same chunk as the response (modern_client.test.mjs), reporting it to onerror.
  t.diagnostic(`onprogress: ${show(updates.map((p) => p.progress))}; onerror: ${show(errors)}`);
  const got = updates.map((p) => p.progress);
  assert.ok(got.length >= 2, show(updates));
  assert.deepEqual(got, [1, 2, 3].slice(0, got.length));
  const lost = errors.filter((e) => e.includes('unknown token'));
  assert.equal(lost.length, 3 - got.length, show(errors));
  assertStatelessModern(tap);
});

// CAN-5 with a call answered by one JSON body: the client's abort closes the connection
// keel would answer on; keel must cancel the call. --workers 1: while the sleep holds the
// one worker no other call runs, so the echo after the abort runs only if the sleep stopped.
httpKeelTest('aborting a modern sleep 20000 (AbortController) rejects at once, and keel cancels the work — the trace ends the call cancelled ("exchange closed") long before 20 s, and with --workers 1 the next echo runs — and never answers it (CAN-5, CAN-2)', { args: ['--workers', '1', '--trace-file', TRACE] }, async (k) => {
  const trace = join(k.dir, TRACE);
  const { client, tap } = await modernClient(k);
  const controller = new AbortController();
  const call = client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, { timeout: 60000, signal: controller.signal });
  const outcome = call.then((r) => ({ resolved: r }), (err) => ({ err, at: performance.now() }));
  // The sleep holds the worker: its attempt started (keel traces it as the tool runs).
  await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.attempt.start'), 'the sleep\'s attempt to start', { ms: WAIT_MS });
  const x = callPost(tap, 'sleep');
  assert.ok(x, wire(tap));
  const id = x.body.id;

  const abortedAt = performance.now();
  controller.abort('user pressed stop');
  const { err, resolved, at } = await outcome;
  assert.equal(resolved, undefined, `the aborted call resolved: ${show(resolved)}`);
  assert.ok(err instanceof SdkError, `not an SdkError: ${err?.constructor?.name} ${err}`);
  assert.equal(err.message, 'user pressed stop');
  assert.ok(at - abortedAt < 5000, `rejected ${(at - abortedAt).toFixed(0)} ms after the abort`);
  // The client cancelled by closing the stream: no notifications/cancelled was POSTed.
  assert.deepEqual(tap.posts('notifications/cancelled'), [], wire(tap));

  // The work stopped: the call's end record says cancelled, because its exchange closed.
  const end = await waitUntil(() => traceOf(readTrace(trace), 'sleep', id).find((r) => r.event === 'tool.call.end'),
    'the sleep\'s tool.call.end record', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'cancelled', show(end));
  assert.equal(end.attributes['keel.reason'], 'exchange closed', show(end));
  assert.ok(end.attributes.duration_ms < 15000, `the sleep ran ${end.attributes.duration_ms} ms`);
  const attemptEnd = traceOf(readTrace(trace), 'sleep', id).find((r) => r.event === 'tool.attempt.end');
  if (attemptEnd) assert.equal(attemptEnd.attributes.outcome, 'cancelled', show(attemptEnd));
  // ... and its worker is free: with one worker, this echo runs only after the sleep returned.
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'after abort' } }, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'after abort' }]);
  const records = readTrace(trace);
  const sleepStart = traceOf(records, 'sleep', id).find((r) => r.event === 'tool.attempt.start');
  const echoStart = traceOf(records, 'echo').find((r) => r.event === 'tool.attempt.start');
  assert.ok(sleepStart && echoStart, dump(records));
  assert.ok(echoStart.ts_unix_ms - sleepStart.ts_unix_ms < 20000,
    `the echo ran ${echoStart.ts_unix_ms - sleepStart.ts_unix_ms} ms after the sleep started: only once the sleep could have ended by itself`);
  // keel never answered the aborted call (the tap saw its body until the abort).
  assert.deepEqual(x.messages.filter((m) => m.id === id), [], wire(tap));
  assert.equal(x.ended, 'error', wire(tap));
});

// CAN-5 with a call that streams (SSE): closing that stream mid-progress cancels it.
httpKeelTest('aborting a modern progress call mid-stream (SSE, after its 2nd progress) rejects, keel stops the work (trace: cancelled, "exchange closed") and sends it nothing more; the next call works (CAN-5, CAN-2)', { args: ['--trace-file', TRACE] }, async (k) => {
  const trace = join(k.dir, TRACE);
  const { client, tap } = await modernClient(k);
  const controller = new AbortController();
  const updates = [];
  const call = client.callTool({ name: 'progress', arguments: { steps: 200, interval_ms: 100 } },
    { timeout: 60000, signal: controller.signal, onprogress: (p) => updates.push(p.progress) });
  const outcome = call.then((r) => ({ resolved: r }), (err) => ({ err }));
  await waitUntil(() => updates.length >= 2, 'two progress notifications', { ms: WAIT_MS });
  const x = callPost(tap, 'progress');
  assert.match(x.contentType ?? '', /^text\/event-stream/, wire(tap));
  controller.abort('enough');
  const { err, resolved } = await outcome;
  assert.equal(resolved, undefined, show(resolved));
  assert.ok(err instanceof SdkError, `${err?.constructor?.name} ${err}`);

  const end = await waitUntil(() => traceOf(readTrace(trace), 'progress', x.body.id).find((r) => r.event === 'tool.call.end'),
    'the progress call\'s tool.call.end record', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'cancelled', show(end));
  assert.equal(end.attributes['keel.reason'], 'exchange closed', show(end));
  assert.ok(end.attributes.duration_ms < 15000, `ran ${end.attributes.duration_ms} ms of 20000`);
  assert.deepEqual(x.messages.filter((m) => 'id' in m && !('method' in m)), [], `keel answered the aborted call:\n${wire(tap)}`);
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'next' } }, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'next' }]);
});

{
  const asked = [];
  httpKeelTest('MRTR over HTTP: ask_name answered input_required in one POST, the v2 client\'s elicitation/create handler answers, the retry is a new POST with inputResponses.user_name and the requestState, and the tool greets (MRTR-1)', {}, async (k) => {
    const { client, tap, errors } = await modernClient(k, {
      capabilities: { elicitation: {} },
      setup: (c) => c.setRequestHandler('elicitation/create', async (request, ctx) => {
        asked.push({ key: ctx.mcpReq.id, params: request.params });
        return ALICE;
      }),
    });
    const result = await client.callTool({ name: 'ask_name', arguments: {} }, reqOpts);
    assert.notEqual(result.isError, true, show(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Alice!' }]);
    assert.equal(asked.length, 1, show(asked));
    assert.equal(asked[0].key, 'user_name');
    assert.deepEqual(asked[0].params, { mode: 'form', message: 'What is your name?', requestedSchema: NAME_SCHEMA });

    const legs = tap.posts('tools/call', (x) => x.body.params.name === 'ask_name');
    assert.equal(legs.length, 2, wire(tap));
    const [first, retry] = legs;
    for (const x of legs) {
      assert.deepEqual(x.body.params._meta?.[CLIENT_CAPABILITIES_KEY], { elicitation: {} }, show(x.body));
      assert.equal(x.status, 200);
      assert.equal(x.messages.length, 1, wire(tap));
    }
    const asking = first.messages[0].result;
    assert.equal(asking?.resultType, 'input_required', wire(tap));
    assert.deepEqual(Object.keys(asking.inputRequests), ['user_name']);
    assert.deepEqual(asking.inputRequests.user_name, { method: 'elicitation/create', params: asked[0].params });
    assert.equal(typeof asking.requestState, 'string');
    assert.notEqual(retry.body.id, first.body.id, 'the retry reused the JSON-RPC id');
    assert.deepEqual(retry.body.params.inputResponses, { user_name: ALICE });
    assert.equal(retry.body.params.requestState, asking.requestState, 'requestState not echoed byte for byte');
    assert.equal(retry.messages[0].result?.resultType, 'complete', wire(tap));
    // Nothing else went over the wire for it: no server-to-client request, no response POST.
    assert.deepEqual(tap.exchanges.filter((x) => x.method === 'POST' && !x.body?.method), [], wire(tap));
    assertStatelessModern(tap);
    assert.deepEqual(errors, []);
  });
}

httpKeelTest('the trace of a call that came over HTTP names its transport tcp, not pipe (OTel network.transport; OBS-1)', {
  args: ['--trace-file', TRACE],
}, async (k) => {
  const { client } = await modernClient(k);
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'traced' } }, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'traced' }]);
  const records = await waitUntil(() => {
    const r = traceOf(readTrace(join(k.dir, TRACE)), 'echo');
    return r.some((x) => x.event === 'tool.call.end') && r;
  }, 'the echo\'s trace records', { ms: WAIT_MS });
  for (const r of records) assert.equal(r.attributes['network.transport'], 'tcp', `${r.event}: ${show(r.attributes)}`);
});

httpKeelTest('a queued call: with --workers 1 held by a latch_wait, a modern sleep waiting for the worker is aborted; keel settles it cancelled before it ever starts (no attempt in the trace), and the latch_wait, released, completes (CAN-5, CAN-2)', { args: ['--workers', '1', '--trace-file', TRACE] }, async (k) => {
  const trace = join(k.dir, TRACE);
  const holder = await modernClient(k, { name: 'holder' });
  const { client, tap } = await modernClient(k, { name: 'queued' });
  const latch = 'http-queued-cancel';
  const held = holder.client.callTool({ name: 'latch_wait', arguments: { name: latch } }, { timeout: 60000 });
  await waitUntil(() => traceOf(readTrace(trace), 'latch_wait').find((r) => r.event === 'tool.attempt.start'), 'latch_wait to hold the worker', { ms: WAIT_MS });
  const controller = new AbortController();
  const queued = client.callTool({ name: 'sleep', arguments: { ms: 100 } }, { timeout: 60000, signal: controller.signal });
  const rejected = assert.rejects(queued, SdkError);
  // keel admitted it (its call record exists) but cannot run it: the one worker is held.
  await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.call.start'), 'the sleep to be admitted', { ms: WAIT_MS });
  const id = callPost(tap, 'sleep').body.id;
  controller.abort('no longer needed');
  await rejected;
  const end = await waitUntil(() => traceOf(readTrace(trace), 'sleep', id).find((r) => r.event === 'tool.call.end'), 'the sleep\'s end record', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'cancelled', show(end));
  assert.equal(end.attributes['keel.reason'], 'exchange closed', show(end));

  const released = await client.callTool({ name: 'latch_release', arguments: { name: latch } }, reqOpts);
  assert.deepEqual(released.content, [{ type: 'text', text: `released ${latch}` }]);
  const done = await held;
  assert.deepEqual(done.content, [{ type: 'text', text: `released ${latch}` }]);
  // The worker went from the latch_wait to nothing: the cancelled sleep never ran.
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'after' } }, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'after' }]);
  assert.deepEqual(traceOf(readTrace(trace), 'sleep').filter((r) => r.event === 'tool.attempt.start'), [], 'the cancelled sleep ran');
});

httpKeelTest('logging over HTTP, modern: test_tool_with_logging with _meta logLevel info streams (SSE) its three info messages to the client\'s handler before the result; at logLevel warning, or without one, one JSON body and no messages (ERA-5)', { args: ['--conformance-fixtures'] }, async (k) => {
  const messages = [];
  const { client, tap } = await modernClient(k, {
    setup: (c) => c.setNotificationHandler('notifications/message', (n) => { messages.push(n.params); }),
  });
  const call = (meta) => client.callTool({ name: 'test_tool_with_logging', arguments: {}, ...(meta && { _meta: meta }) }, reqOpts);
  for (const meta of [undefined, { [LOG_LEVEL_META_KEY]: 'warning' }]) {
    const r = await call(meta);
    assert.notEqual(r.isError, true, show(r));
    const x = callPost(tap, 'test_tool_with_logging');
    assert.deepEqual(x.messages.filter((m) => m.method === 'notifications/message'), [], wire(tap));
  }
  assert.deepEqual(messages, []);
  const r = await call({ [LOG_LEVEL_META_KEY]: 'info' });
  assert.notEqual(r.isError, true, show(r));
  const x = callPost(tap, 'test_tool_with_logging');
  assert.equal(x.body.params._meta[LOG_LEVEL_META_KEY], 'info');
  assert.match(x.contentType ?? '', /^text\/event-stream/, wire(tap));
  await x.done;
  assert.equal(x.ended, 'eof', wire(tap));
  const logs = x.messages.filter((m) => m.method === 'notifications/message');
  assert.deepEqual(logs.map((m) => m.params.level), ['info', 'info', 'info'], wire(tap));
  assert.equal(x.messages.at(-1).id, x.body.id, `the result is not the stream's last message:\n${wire(tap)}`);
  await waitUntil(() => messages.length >= 3, 'the handler to get three messages', { ms: WAIT_MS });
  assert.deepEqual(messages.map((m) => m.level), ['info', 'info', 'info'], show(messages));
});

httpKeelTest('--max-inflight 1 over HTTP: while a latch_wait holds the one slot, another modern client\'s echo is answered at once with isError server_busy (a modern result), and once the latch opens echo works again (HTTP-4, ERA-4)', { args: ['--max-inflight', '1', '--trace-file', TRACE] }, async (k) => {
  const holder = await modernClient(k, { name: 'holder' });
  const { client, tap } = await modernClient(k, { name: 'refused' });
  const latch = 'http-busy';
  const held = holder.client.callTool({ name: 'latch_wait', arguments: { name: latch } }, { timeout: 60000 });
  await waitUntil(() => traceOf(readTrace(join(k.dir, TRACE)), 'latch_wait').find((r) => r.event === 'tool.call.start'), 'the latch_wait to be admitted', { ms: WAIT_MS });
  const busy = await client.callTool({ name: 'echo', arguments: { text: 'no room' } }, reqOpts);
  assert.equal(busy.isError, true, show(busy));
  assert.equal(busy.structuredContent?.error?.type, 'server_busy', show(busy));
  const raw = callPost(tap, 'echo').messages[0];
  assert.equal(raw.result?.resultType, 'complete', show(raw));
  assert.equal(raw.result._meta?.[SERVER_INFO_KEY]?.name, 'keel', show(raw));
  // latch_release runs on the loop: it needs no slot.
  const released = await client.callTool({ name: 'latch_release', arguments: { name: latch } }, reqOpts);
  assert.deepEqual(released.content, [{ type: 'text', text: `released ${latch}` }], show(released));
  await held;
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'room again' } }, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'room again' }]);
});

httpKeelTest('SSE keep-alive comments never reset a semantic timeout: a quiet modern sleep 20000 on an SSE stream (progressToken, --sse-keepalive 200) gets ":" comments, and still ends with the idle-timeout result at --idle-timeout 1500 (SSE-1, TMO-2)', { args: ['--sse-keepalive', '200', '--idle-timeout', '1500'] }, async (k) => {
  const { client, tap } = await modernClient(k);
  const result = await client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, { timeout: 30000, onprogress: () => {} });
  assert.equal(result.isError, true, show(result));
  const error = result.structuredContent?.error;
  assert.equal(error?.type, 'timeout', show(result));
  assert.equal(error.layer, 'idle', show(result));
  assert.equal(error.limit_ms, 1500, show(result));
  assert.ok(error.elapsed_ms < 15000, `ran ${error.elapsed_ms} ms: the comments kept it alive`);
  const x = callPost(tap, 'sleep');
  assert.match(x.contentType ?? '', /^text\/event-stream/, wire(tap));
  await x.done;
  assert.equal(x.ended, 'eof', wire(tap));
  // 1500 ms at least, a comment every 200 ms: several, each a lone ':' line.
  assert.ok(x.comments.length >= 2, `keep-alive comments: ${show(x.comments)}`);
  assert.deepEqual(x.messages.filter((m) => m.method), [], wire(tap));
});
