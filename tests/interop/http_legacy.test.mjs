// Interop over Streamable HTTP, legacy era: the official MCP TypeScript SDK v1 client
// (@modelcontextprotocol/sdk, StreamableHTTPClientTransport) on 2025-11-25 against the real
// keel binary serving `--http 127.0.0.1:0 --no-stdio` on loopback.
// Run: node --test tests/interop/http_legacy.test.mjs   (KEEL_BINARY picks the binary,
// else build/keel). Every test starts its own keel in a fresh temporary directory
// (http_keel.mjs) and stops it.
//
// What is observed: the client's API, and the HTTP traffic through a fetch tap
// (http_keel.mjs tapFetch: each request with its headers and JSON body, each response's
// status, headers and JSON-RPC messages, and whether keel ended the body). "The work
// stopped" is read from keel's --trace-file and, with --workers 1, from the next call
// running at all. Waits are for conditions with generous deadlines.
//
// The v1 client (1.32.2) over HTTP: initialize, then notifications/initialized, then a GET
// for a standalone SSE stream (keel has none: 405, which the client accepts). Each request
// is a POST carrying Mcp-Session-Id and MCP-Protocol-Version; keel answers a tools/call on
// an SSE stream (its progress, logs and keel's own requests travel on it), anything else
// with one JSON body. Aborting a request sends notifications/cancelled (its own POST) and
// rejects it with McpError -32001; the POST's stream is left to the server. terminateSession
// is a DELETE; after it the transport forgets the id.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ElicitRequestSchema, ErrorCode, LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { LEGACY, httpKeelTest, legacyClient, readTrace, traceOf, waitUntil, withTimeout } from './http_keel.mjs';

const reqOpts = { timeout: 15000 };
const WAIT_MS = 20000;
const TRACE = 'trace.jsonl';
const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const ALICE = { action: 'accept', content: { name: 'Alice' } };

const dump = (xs) => xs.map((x) => JSON.stringify(x)).join('\n');
const show = (x) => JSON.stringify(x);
const wire = (tap) => tap.exchanges.map((x) =>
  `${x.n} ${x.method} ${x.body?.method ?? (x.body?.id !== undefined ? `response ${x.body.id}` : '')} sid=${x.requestHeaders['mcp-session-id'] ?? '-'} -> ${x.status} ${x.contentType} ended=${x.ended} ${dump(x.messages)}`).join('\n');
const callPost = (tap, tool) => tap.posts('tools/call', (x) => x.body.params?.name === tool).at(-1);
const isResponse = (m) => 'id' in m && !('method' in m);
// A promise's settlement, observable without awaiting it: {settled, value, err}.
function settleOf(p) {
  const s = { settled: false };
  p.then((value) => { Object.assign(s, { settled: true, value }); }, (err) => { Object.assign(s, { settled: true, err }); });
  return s;
}

// Every request after initialize names the session and the version.
function assertInSession(tap, sessionId) {
  const [init, ...rest] = tap.exchanges;
  assert.equal(init.body?.method, 'initialize', wire(tap));
  assert.equal(init.requestHeaders['mcp-session-id'], undefined, wire(tap));
  assert.equal(init.headers['mcp-session-id'], sessionId, `initialize's answer: ${show(init.headers)}`);
  for (const x of rest) {
    assert.equal(x.requestHeaders['mcp-session-id'], sessionId, `${x.method} ${show(x.body)} without the session:\n${wire(tap)}`);
    assert.equal(x.requestHeaders['mcp-protocol-version'], LEGACY, `${x.method} ${show(x.body)}`);
  }
}

httpKeelTest('v1 client over HTTP (2025-11-25): initialize answers with an Mcp-Session-Id the transport keeps, every later request carries it with MCP-Protocol-Version; tools/list and echo work; a second client gets another session (HTTP-5, ERA-1)', {}, async (k, t) => {
  const { client, transport, tap, errors } = await legacyClient(k);
  const sessionId = transport.sessionId;
  assert.equal(typeof sessionId, 'string', 'no session id');
  assert.match(sessionId, /^[\x21-\x7e]{16,}$/, `session id ${sessionId}: visible ASCII, not guessable-short`);
  assert.equal(client.getServerVersion()?.name, 'keel');
  assert.equal(transport.protocolVersion, LEGACY);
  assert.ok(client.getServerCapabilities()?.tools, show(client.getServerCapabilities()));

  const { tools } = await client.listTools(undefined, reqOpts);
  for (const name of ['echo', 'sleep', 'progress', 'ask_name']) assert.ok(tools.some((x) => x.name === name), name);
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'legacy over http' } }, undefined, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'legacy over http' }]);

  const init = tap.posts('initialize')[0];
  assert.equal(init.status, 200);
  assert.equal(init.messages[0]?.result?.protocolVersion, LEGACY, wire(tap));
  const initialized = tap.posts('notifications/initialized')[0];
  assert.equal(initialized?.status, 202, wire(tap));
  assert.deepEqual(initialized.messages, []);
  // A legacy tools/call streams (SSE) and keel ends the stream after the result.
  const x = callPost(tap, 'echo');
  assert.match(x.contentType ?? '', /^text\/event-stream/, wire(tap));
  await x.done;
  assert.equal(x.ended, 'eof', wire(tap));
  assert.deepEqual(x.messages.map((m) => m.id), [x.body.id], wire(tap));
  // The client's GET for a standalone stream: keel has none.
  for (const g of tap.exchanges.filter((e) => e.method === 'GET')) assert.equal(g.status, 405, wire(tap));
  t.diagnostic(`GETs: ${tap.exchanges.filter((e) => e.method === 'GET').length}`);
  assertInSession(tap, sessionId);

  const second = await legacyClient(k, { name: 'second' });
  assert.notEqual(second.transport.sessionId, sessionId);
  const again = await second.client.callTool({ name: 'echo', arguments: { text: 'two' } }, undefined, reqOpts);
  assert.deepEqual(again.content, [{ type: 'text', text: 'two' }]);
  assertInSession(second.tap, second.transport.sessionId);
  assert.deepEqual(errors, []);
});

httpKeelTest('progress over HTTP, legacy: onprogress sees 1..3, and the notifications travel on the tools/call\'s own SSE stream with its token, before its result (PRG-1, HTTP-5)', {}, async (k) => {
  const { client, transport, tap } = await legacyClient(k);
  const updates = [];
  const result = await client.callTool({ name: 'progress', arguments: { steps: 3, interval_ms: 150 } }, undefined,
    { ...reqOpts, onprogress: (p) => updates.push(p) });
  assert.deepEqual(result.content, [{ type: 'text', text: 'done 3 steps' }]);
  assert.deepEqual(updates.map((p) => p.progress), [1, 2, 3], show(updates));
  const x = callPost(tap, 'progress');
  const token = x.body.params._meta?.progressToken;
  assert.notEqual(token, undefined, show(x.body));
  await x.done;
  assert.equal(x.ended, 'eof', wire(tap));
  const progress = x.messages.filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(progress.map((m) => m.params.progress), [1, 2, 3], wire(tap));
  for (const m of progress) assert.equal(m.params.progressToken, token, show(m));
  assert.equal(x.messages.at(-1).id, x.body.id, `the result is not the stream's last message:\n${wire(tap)}`);
  // Nothing about the call anywhere else.
  const elsewhere = tap.exchanges.filter((e) => e !== x).flatMap((e) => e.messages).filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(elsewhere, [], wire(tap));
  assertInSession(tap, transport.sessionId);
});

httpKeelTest('logging over HTTP, legacy: after logging/setLevel info, test_tool_with_logging\'s three info messages reach the client\'s handler on the call\'s stream; another session that set no level gets none; after setLevel error, none (the level is the session\'s, kept across its POSTs; HTTP-5)', { args: ['--conformance-fixtures'] }, async (k) => {
  const messages = [];
  const { client, tap } = await legacyClient(k, {
    setup: (c) => c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { messages.push(n.params); }),
  });
  // Before any setLevel: nothing (no --client-log-level).
  await client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, reqOpts);
  assert.deepEqual(messages, []);

  await client.setLoggingLevel('info', reqOpts);
  const result = await client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, reqOpts);
  assert.notEqual(result.isError, true, show(result));
  await waitUntil(() => messages.length >= 3, 'three log messages', { ms: WAIT_MS });
  assert.deepEqual(messages.map((m) => m.level), ['info', 'info', 'info'], show(messages));
  const x = callPost(tap, 'test_tool_with_logging');
  const logs = x.messages.filter((m) => m.method === 'notifications/message');
  assert.equal(logs.length, 3, wire(tap));
  assert.ok(x.messages.findIndex(isResponse) > x.messages.lastIndexOf(logs.at(-1)), `a log after the result:\n${wire(tap)}`);

  // The level is the session's: another session that never set one gets nothing.
  const quiet = await legacyClient(k, { name: 'quiet' });
  const quietMessages = [];
  quiet.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { quietMessages.push(n.params); });
  await quiet.client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, reqOpts);
  const q = callPost(quiet.tap, 'test_tool_with_logging');
  assert.deepEqual(q.messages.filter((m) => m.method === 'notifications/message'), [], wire(quiet.tap));
  assert.deepEqual(quietMessages, []);

  await client.setLoggingLevel('error', reqOpts);
  await client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, reqOpts);
  const y = callPost(tap, 'test_tool_with_logging');
  assert.notEqual(y, x);
  assert.deepEqual(y.messages.filter((m) => m.method === 'notifications/message'), [], wire(tap));
  assert.equal(messages.length, 3, show(messages));
});

httpKeelTest('cancel over HTTP, legacy: aborting a sleep 20000 rejects (McpError -32001), the SDK POSTs notifications/cancelled in the session (202), and keel stops the work — trace: cancelled by notifications/cancelled; with --workers 1 the next echo runs — and never answers it (CAN-1, CAN-2)', { args: ['--workers', '1', '--trace-file', TRACE] }, async (k) => {
  const trace = join(k.dir, TRACE);
  const { client, transport, tap } = await legacyClient(k);
  const controller = new AbortController();
  const call = client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, undefined, { timeout: 60000, signal: controller.signal });
  const outcome = call.then((r) => ({ resolved: r }), (err) => ({ err, at: performance.now() }));
  await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.attempt.start'), 'the sleep\'s attempt to start', { ms: WAIT_MS });
  const x = callPost(tap, 'sleep');
  const id = x.body.id;

  const abortedAt = performance.now();
  controller.abort('user pressed stop');
  const { err, resolved, at } = await outcome;
  assert.equal(resolved, undefined, show(resolved));
  assert.ok(err instanceof McpError, `not an McpError: ${err}`);
  assert.equal(err.code, ErrorCode.RequestTimeout);  // the v1 SDK reports every abort as -32001
  assert.match(err.message, /user pressed stop/);
  assert.ok(at - abortedAt < 5000, `rejected ${(at - abortedAt).toFixed(0)} ms after the abort`);
  const cancel = await waitUntil(() => tap.posts('notifications/cancelled').find((c) => c.status !== null), 'the notifications/cancelled POST', { ms: WAIT_MS });
  assert.equal(cancel.body.params.requestId, id, show(cancel.body));
  assert.equal(cancel.status, 202, wire(tap));

  const end = await waitUntil(() => traceOf(readTrace(trace), 'sleep', id).find((r) => r.event === 'tool.call.end'),
    'the sleep\'s tool.call.end record', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'cancelled', show(end));
  assert.equal(end.attributes['keel.reason'], 'notifications/cancelled', show(end));
  assert.ok(end.attributes.duration_ms < 15000, `the sleep ran ${end.attributes.duration_ms} ms`);
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'after cancel' } }, undefined, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'after cancel' }]);
  const records = readTrace(trace);
  const sleepStart = traceOf(records, 'sleep', id).find((r) => r.event === 'tool.attempt.start');
  const echoStart = traceOf(records, 'echo').find((r) => r.event === 'tool.attempt.start');
  assert.ok(echoStart.ts_unix_ms - sleepStart.ts_unix_ms < 20000, 'the echo waited for the sleep to end by itself');
  assert.deepEqual(x.messages.filter((m) => m.id === id), [], `keel answered the cancelled call:\n${wire(tap)}`);
  assertInSession(tap, transport.sessionId);
});

// After a legacy call is cancelled by notifications/cancelled it is settled without an
// answer: nothing more can go on its POST's SSE stream. The v1 SDK does not close that
// stream itself (it keeps reading it), so unless keel ends it, each cancelled call holds an
// HTTP connection (and keel's exchange) open for as long as the client lives.
httpKeelTest('cancel over HTTP, legacy: once keel has settled the call cancelled by notifications/cancelled, it ends that call\'s SSE stream (no connection held per cancelled call; CAN-2, HTTP-3)', {
  args: ['--trace-file', TRACE, '--sse-keepalive', '500'],
}, async (k, t) => {
  const trace = join(k.dir, TRACE);
  const { client, tap } = await legacyClient(k);
  const controller = new AbortController();
  const call = client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, undefined, { timeout: 60000, signal: controller.signal });
  const rejected = assert.rejects(call, McpError);
  await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.attempt.start'), 'the sleep\'s attempt to start', { ms: WAIT_MS });
  const x = callPost(tap, 'sleep');
  controller.abort('stop');
  await rejected;
  await waitUntil(() => traceOf(readTrace(trace), 'sleep', x.body.id).find((r) => r.event === 'tool.call.end'), 'the sleep\'s end record', { ms: WAIT_MS });
  // Well within the 20 s the sleep would have run, and many keep-alive periods.
  try {
    await waitUntil(() => x.ended !== null, 'keel to end the cancelled call\'s stream', { ms: 8000 });
  } finally {
    t.diagnostic(`stream ended: ${x.ended}; keep-alive comments on it: ${x.comments.length}; messages: ${show(x.messages)}`);
  }
  assert.equal(x.ended, 'eof', wire(tap));
  assert.deepEqual(x.messages.filter((m) => m.id === x.body.id), [], wire(tap));
});

// The consequence of the stream left open (above): each cancelled legacy call keeps one of
// keel's --http-max-connections. With 4, after three cancelled calls the fourth call's
// stream is the last connection: its notifications/cancelled is refused 503, so that call
// cannot be cancelled at all and runs on, and every later request is refused.
httpKeelTest('cancel over HTTP, legacy, --http-max-connections 4: four sleeps cancelled one after another by the v1 client are each stopped (trace), and an echo still runs — cancelled calls hold no connection (CAN-2, HTTP-3)', {
  args: ['--trace-file', TRACE, '--http-max-connections', '4'],
}, async (k, t) => {
  const trace = join(k.dir, TRACE);
  const { client, tap, errors } = await legacyClient(k);
  try {
    for (let i = 1; i <= 4; i++) {
      const controller = new AbortController();
      const call = client.callTool({ name: 'sleep', arguments: { ms: 60000 } }, undefined, { timeout: 90000, signal: controller.signal });
      const rejected = assert.rejects(call, McpError);
      await waitUntil(() => traceOf(readTrace(trace), 'sleep').filter((r) => r.event === 'tool.attempt.start').length >= i, `sleep ${i} to start`, { ms: WAIT_MS });
      controller.abort(`stop ${i}`);
      await rejected;
      await waitUntil(() => traceOf(readTrace(trace), 'sleep').filter((r) => r.event === 'tool.call.end' && r.attributes.outcome === 'cancelled').length >= i,
        `sleep ${i} to end cancelled`, { ms: 10000 });
    }
    const echo = await client.callTool({ name: 'echo', arguments: { text: 'room left' } }, undefined, reqOpts);
    assert.deepEqual(echo.content, [{ type: 'text', text: 'room left' }]);
  } finally {
    t.diagnostic(`wire: ${tap.exchanges.map((x) => `${x.method} ${x.body?.method ?? ''} -> ${x.status} ended=${x.ended}`).join(' | ')}; onerror: ${show(errors)}`);
  }
});

{
  const asked = [];
  httpKeelTest('elicitation over HTTP, legacy: during ask_name keel sends elicitation/create (id keel-<n>) on the tools/call\'s SSE stream, the v1 handler\'s answer goes back as its own POST in the session (202), and the tool greets "Hello, Alice!" on that same stream (HTTP-5, MRTR-1)', {}, async (k) => {
    const { client, transport, tap, errors } = await legacyClient(k, {
      capabilities: { elicitation: {} },
      setup: (c) => c.setRequestHandler(ElicitRequestSchema, async (request) => { asked.push(request.params); return ALICE; }),
    });
    const result = await client.callTool({ name: 'ask_name', arguments: {} }, undefined, reqOpts);
    assert.notEqual(result.isError, true, show(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Alice!' }]);
    assert.deepEqual(asked, [{ mode: 'form', message: 'What is your name?', requestedSchema: NAME_SCHEMA }]);

    const x = callPost(tap, 'ask_name');
    assert.match(x.contentType ?? '', /^text\/event-stream/, wire(tap));
    await x.done;
    assert.equal(x.ended, 'eof', wire(tap));
    const question = x.messages.find((m) => m.method === 'elicitation/create');
    assert.ok(question, `no elicitation/create on the call's stream:\n${wire(tap)}`);
    assert.match(String(question.id), /^keel-\d+$/, show(question));
    assert.deepEqual(question.params, asked[0]);
    assert.ok(x.messages.indexOf(question) < x.messages.findIndex(isResponse), wire(tap));
    assert.equal(x.messages.at(-1).id, x.body.id, wire(tap));
    // The answer: a POST of its own, a JSON-RPC response to keel's id, accepted with 202.
    const answers = tap.exchanges.filter((e) => e.method === 'POST' && e.body && !('method' in e.body));
    assert.equal(answers.length, 1, wire(tap));
    assert.deepEqual(answers[0].body, { jsonrpc: '2.0', id: question.id, result: ALICE });
    // (keel may answer that POST after it delivered the answer and the tool finished.)
    await waitUntil(() => answers[0].status !== null, 'keel\'s answer to the response POST', { ms: WAIT_MS });
    assert.equal(answers[0].status, 202, wire(tap));
    assert.deepEqual(answers[0].messages, []);
    // The question went nowhere else.
    const others = tap.exchanges.filter((e) => e !== x).flatMap((e) => e.messages).filter((m) => m.method === 'elicitation/create');
    assert.deepEqual(others, [], wire(tap));
    assertInSession(tap, transport.sessionId);
    assert.deepEqual(errors, []);
  });
}

{
  // The handler hangs until the test lets it go.
  let release;
  const hung = new Promise((resolve) => { release = resolve; });
  const asked = [];
  httpKeelTest('cancel during elicitation over HTTP, legacy: the v1 client aborts ask_name while its handler is open; keel cancels its own question on the call\'s stream (notifications/cancelled for keel-<n>, which aborts the handler), ends that stream, and sends no answer; the next call works (CAN-2, MRTR-1)', {}, async (k) => {
    try {
      const { client, tap } = await legacyClient(k, {
        capabilities: { elicitation: {} },
        setup: (c) => c.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
          asked.push(extra);
          await hung;
          return { action: 'accept', content: { name: 'Too late' } };
        }),
      });
      const controller = new AbortController();
      const call = client.callTool({ name: 'ask_name', arguments: {} }, undefined, { timeout: 60000, signal: controller.signal });
      const rejected = assert.rejects(call, McpError);
      await waitUntil(() => asked.length === 1, 'the question to reach the handler', { ms: WAIT_MS });
      controller.abort('user pressed stop');
      await rejected;
      await waitUntil(() => asked[0].signal.aborted, 'keel\'s cancel to abort the handler', { ms: WAIT_MS });
      const x = callPost(tap, 'ask_name');
      await withTimeout(x.done, 'the end of the call\'s stream', WAIT_MS);
      assert.equal(x.ended, 'eof', wire(tap));
      const question = x.messages.find((m) => m.method === 'elicitation/create');
      const cancel = x.messages.find((m) => m.method === 'notifications/cancelled');
      assert.equal(cancel?.params.requestId, question?.id, wire(tap));
      assert.deepEqual(x.messages.filter(isResponse), [], `keel answered the cancelled call:\n${wire(tap)}`);
      release();
      const echo = await client.callTool({ name: 'echo', arguments: { text: 'next' } }, undefined, reqOpts);
      assert.deepEqual(echo.content, [{ type: 'text', text: 'next' }]);
      // The aborted handler's late answer is not sent.
      assert.deepEqual(tap.exchanges.filter((e) => e.method === 'POST' && e.body && !('method' in e.body)), [], wire(tap));
    } finally {
      release();
    }
  });
}

httpKeelTest('terminateSession over HTTP, legacy: a DELETE with the session id is answered 204 and the transport forgets the id; then a request naming that session gets 404 (raw POST and the v1 client resuming it), a second DELETE 404, and another session is unaffected (HTTP-5)', {}, async (k) => {
  const { client, transport, tap } = await legacyClient(k);
  const other = await legacyClient(k, { name: 'bystander' });
  const sessionId = transport.sessionId;
  await client.callTool({ name: 'echo', arguments: { text: 'before' } }, undefined, reqOpts);
  await transport.terminateSession();
  assert.equal(transport.sessionId, undefined);
  const del = tap.exchanges.filter((e) => e.method === 'DELETE');
  assert.equal(del.length, 1, wire(tap));
  assert.equal(del[0].requestHeaders['mcp-session-id'], sessionId);
  assert.equal(del[0].status, 204, wire(tap));

  const headers = {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY,
  };
  const raw = await fetch(k.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }) });
  const text = await raw.text();
  assert.equal(raw.status, 404, text);
  if (text) {
    const body = JSON.parse(text);
    assert.equal(body.id, 7, text);
    assert.ok(body.error, text);
  }
  const again = await fetch(k.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY } });
  await again.arrayBuffer();
  assert.equal(again.status, 404);

  // The v1 client resuming the ended session (a transport given its id skips initialize).
  const resumed = await legacyClient(k, { name: 'resumer', transportOptions: { sessionId } });
  await assert.rejects(resumed.client.listTools(undefined, reqOpts), (err) => {
    assert.ok(err instanceof StreamableHTTPError, `not a StreamableHTTPError: ${err?.constructor?.name} ${err}`);
    assert.equal(err.code, 404, err.message);
    return true;
  });
  const echo = await other.client.callTool({ name: 'echo', arguments: { text: 'still here' } }, undefined, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'still here' }]);
});

httpKeelTest('DELETE of a session with a call in flight cancels that call (trace: cancelled, "peer gone"; with --workers 1 another session\'s echo runs at once), and the ended session\'s id is refused 404 (HTTP-5, CAN-2)', { args: ['--workers', '1', '--trace-file', TRACE] }, async (k) => {
  const trace = join(k.dir, TRACE);
  const { client, transport, tap } = await legacyClient(k);
  const other = await legacyClient(k, { name: 'other-session' });
  const sessionId = transport.sessionId;
  // The call's promise is left alone here (the next test is about what it sees).
  client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, undefined, { timeout: 60000 }).catch(() => {});
  await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.attempt.start'), 'the sleep to run', { ms: WAIT_MS });
  const id = callPost(tap, 'sleep').body.id;
  await transport.terminateSession();
  assert.equal(tap.exchanges.find((x) => x.method === 'DELETE')?.status, 204, wire(tap));
  const end = await waitUntil(() => traceOf(readTrace(trace), 'sleep', id).find((r) => r.event === 'tool.call.end'), 'the sleep\'s end record', { ms: WAIT_MS });
  assert.equal(end.attributes.outcome, 'cancelled', show(end));
  assert.equal(end.attributes['keel.reason'], 'peer gone', show(end));
  const echo = await other.client.callTool({ name: 'echo', arguments: { text: 'worker free' } }, undefined, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'worker free' }]);
  const records = readTrace(trace);
  const sleepStart = traceOf(records, 'sleep', id).find((r) => r.event === 'tool.attempt.start');
  const echoStart = traceOf(records, 'echo').find((r) => r.event === 'tool.attempt.start');
  assert.ok(echoStart.ts_unix_ms - sleepStart.ts_unix_ms < 20000, 'the echo waited for the sleep to end by itself');
  const raw = await fetch(k.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
  });
  await raw.arrayBuffer();
  assert.equal(raw.status, 404);
});

// What the client of the deleted session sees of its call: nothing can reach it any more
// (its session is gone, keel cancelled the call), so keel ends the call's stream at once and
// sends no answer. (The v1 SDK then still waits out its own timeout for that request: it
// treats an ended stream as one to resume, not as an answer; its business, not keel's.)
httpKeelTest('DELETE of a session with a call in flight: keel cancels the call and ends its SSE stream at once, with no answer on it (HTTP-5, CAN-2)', {
  args: ['--trace-file', TRACE, '--sse-keepalive', '500'],
}, async (k, t) => {
  const trace = join(k.dir, TRACE);
  const { client, transport, tap } = await legacyClient(k);
  const pending = settleOf(client.callTool({ name: 'sleep', arguments: { ms: 20000 } }, undefined, { timeout: 60000 }));
  await waitUntil(() => traceOf(readTrace(trace), 'sleep').find((r) => r.event === 'tool.attempt.start'), 'the sleep to run', { ms: WAIT_MS });
  const x = callPost(tap, 'sleep');
  await transport.terminateSession();
  await waitUntil(() => traceOf(readTrace(trace), 'sleep', x.body.id).find((r) => r.event === 'tool.call.end'), 'the sleep\'s end record', { ms: WAIT_MS });
  try {
    await waitUntil(() => x.ended !== null, 'keel to end the deleted session\'s call stream', { ms: 8000 });
  } finally {
    t.diagnostic(`stream ended: ${x.ended}; keep-alive comments: ${x.comments.length}; call settled: ${pending.settled}`);
  }
  assert.equal(x.ended, 'eof', wire(tap));
  assert.deepEqual(x.messages.filter(isResponse), [], wire(tap));
});

httpKeelTest('--http-max-sessions 2: a third initialize ends the least recently used session (its next request: 404 from the v1 client), the other two keep working (HTTP-5, HTTP-3)', { args: ['--http-max-sessions', '2'] }, async (k) => {
  const a = await legacyClient(k, { name: 'a' });
  const b = await legacyClient(k, { name: 'b' });
  // a is used after b was created: b is now the least recently used.
  await a.client.callTool({ name: 'echo', arguments: { text: 'a' } }, undefined, reqOpts);
  const c = await legacyClient(k, { name: 'c' });
  await assert.rejects(b.client.callTool({ name: 'echo', arguments: { text: 'b' } }, undefined, reqOpts), (err) => {
    assert.ok(err instanceof StreamableHTTPError, `${err?.constructor?.name} ${err}`);
    assert.equal(err.code, 404, err.message);
    return true;
  });
  for (const [name, x] of [['a', a], ['c', c]]) {
    const r = await x.client.callTool({ name: 'echo', arguments: { text: name } }, undefined, reqOpts);
    assert.deepEqual(r.content, [{ type: 'text', text: name }]);
  }
  assert.notEqual(a.transport.sessionId, c.transport.sessionId);
});
