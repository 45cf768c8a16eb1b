// Interop: keel driven by the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client) over stdio, on MCP 2026-07-28 ("modern": server/discover,
// no initialize, a _meta envelope on every request) and on the legacy 2025-11-25 path.
// Run: node --test tests/interop/modern_client.test.mjs   (or: npm run test:interop)
// The binary is $KEEL_BINARY, else <repo>/build/keel; it is started with --test-tools plus
// the flags a test asks for. Every test starts its own keel (in a fresh temporary working
// directory, with its own KEEL_DB) and stops it.
//
// Raw traffic: sdk2_keel.mjs taps the session transport before connect, so k.sent and
// k.seen hold every line the client wrote and keel wrote, in order. keel handles its input
// in order on one loop and writes its output in order, so "nothing for id N before the
// response to a later request" is a real observation, not a timing guess. The v2 client
// strips wire-only fields (resultType, execution) from what it returns, so those are
// checked on the raw lines.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { LOG_LEVEL_META_KEY, ProtocolError, SdkError } from '@modelcontextprotocol/client';
import { MODERN, sdk2KeelTest } from './sdk2_keel.mjs';

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const PIN = { pin: MODERN };
const reqOpts = { timeout: 5000 };
// keel runs in a temporary directory: the catalog path must be absolute.
const APPROVAL_CATALOG = fileURLToPath(new URL('../../conformance/fixtures/approval_catalog.json', import.meta.url));

const isResponse = (m) => 'id' in m && ('result' in m || 'error' in m);
const responseTo = (k, id) => k.seen.find((m) => isResponse(m) && m.id === id);
const responsesTo = (k, id) => k.seen.filter((m) => isResponse(m) && m.id === id);
const indexOfResponse = (k, id) => k.seen.findIndex((m) => isResponse(m) && m.id === id);
const sentRequests = (k, method) => k.sent.filter((m) => m.method === method && 'id' in m);
const lastSentId = (k, method) => sentRequests(k, method).at(-1)?.id;
// The raw response to the last request of `method` the client sent.
const lastRawResult = (k, method) => {
  const id = lastSentId(k, method);
  assert.notEqual(id, undefined, `no ${method} request on the wire`);
  const response = responseTo(k, id);
  assert.ok(response, `no response to ${method} id ${id} on the wire`);
  return response;
};
const dump = (msgs) => msgs.map((m) => JSON.stringify(m)).join('\n');

function assertEnvelope(msg, clientName = 'keel-interop-v2-test') {
  const meta = msg.params?._meta;
  assert.ok(meta, `no params._meta on ${JSON.stringify(msg)}`);
  assert.equal(meta[PROTOCOL_VERSION_KEY], MODERN, `protocolVersion in ${JSON.stringify(msg)}`);
  assert.equal(typeof meta[CLIENT_CAPABILITIES_KEY], 'object', `clientCapabilities in ${JSON.stringify(msg)}`);
  assert.equal(meta[CLIENT_INFO_KEY]?.name, clientName, `clientInfo in ${JSON.stringify(msg)}`);
}

function assertModernResult(response, what) {
  assert.ok(response?.result, `${what}: not a result: ${JSON.stringify(response)}`);
  assert.equal(response.result.resultType, 'complete', `${what}: resultType: ${JSON.stringify(response)}`);
  assert.equal(response.result._meta?.[SERVER_INFO_KEY]?.name, 'keel', `${what}: serverInfo _meta: ${JSON.stringify(response)}`);
}

function assertNoInitialize(k) {
  const init = k.sent.filter((m) => m.method === 'initialize' || m.method === 'notifications/initialized');
  assert.deepEqual(init, [], `the client sent the legacy handshake:\n${dump(k.sent)}`);
}

// Resolves once `count` notifications/message have reached the client's handler.
function collectLogMessages(client, count) {
  const messages = [];
  let done;
  const enough = new Promise((resolve) => { done = resolve; });
  client.setNotificationHandler('notifications/message', (n) => {
    messages.push(n.params);
    if (messages.length >= count) done();
  });
  return { messages, enough };
}

sdk2KeelTest('connect pinned to 2026-07-28: era is modern, the session keel never sees initialize, every request carries the _meta envelope (ERA-1)', { mode: PIN }, async (k) => {
  const { client } = k;
  assert.equal(client.getProtocolEra(), 'modern');
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getServerVersion()?.name, 'keel');
  assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: true }, logging: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });
  // The probe ran on a disposable sibling keel: the session keel got nothing at connect.
  assert.deepEqual(k.sent, [], `sent at connect:\n${dump(k.sent)}`);
  assert.deepEqual(k.seen, [], `keel wrote at connect:\n${dump(k.seen)}`);

  const result = await client.callTool({ name: 'echo', arguments: { text: 'modern' } }, reqOpts);
  assert.deepEqual(result.content, [{ type: 'text', text: 'modern' }]);
  await client.listTools(undefined, reqOpts);
  assertNoInitialize(k);
  const requests = k.sent.filter((m) => 'id' in m);
  assert.deepEqual(requests.map((m) => m.method), ['tools/call', 'tools/list']);
  for (const m of requests) assertEnvelope(m);
});

sdk2KeelTest('connect pinned to 2026-07-28 probing in place: server/discover with the envelope is the first line, keel answers it, no initialize follows (ERA-1, ERA-2)', { mode: PIN, inPlace: true }, async (k) => {
  const { client } = k;
  assert.equal(client.getProtocolEra(), 'modern');
  const [probe] = k.sent;
  assert.equal(probe?.method, 'server/discover', `first line:\n${dump(k.sent)}`);
  assertEnvelope(probe);
  const answer = responseTo(k, probe.id);
  assertModernResult(answer, 'server/discover');
  assert.ok(answer.result.supportedVersions.includes(MODERN), JSON.stringify(answer));

  const result = await client.callTool({ name: 'echo', arguments: { text: 'in place' } }, reqOpts);
  assert.deepEqual(result.content, [{ type: 'text', text: 'in place' }]);
  assertNoInitialize(k);
  assert.deepEqual(k.sent.map((m) => m.method), ['server/discover', 'tools/call']);
});

sdk2KeelTest('server/discover: every version keel speaks, tools and logging without tasks, instructions, ttlMs, cacheScope, serverInfo in _meta (ERA-2)', { mode: PIN }, async (k) => {
  const { client } = k;
  const result = await client.discover(reqOpts);
  assert.deepEqual(result.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18']);
  // The tasks extension is offered under extensions (modern_tasks.test.mjs), never as the legacy tasks key.
  assert.deepEqual(result.capabilities, { tools: { listChanged: true }, logging: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });
  assert.equal(result.capabilities.tasks, undefined);
  assert.equal(typeof result.instructions, 'string');
  assert.ok(result.instructions.length > 0, 'empty instructions');
  assert.equal(result.ttlMs, 300000);
  assert.equal(result.cacheScope, 'public');
  const info = result._meta?.[SERVER_INFO_KEY];
  assert.equal(info?.name, 'keel', JSON.stringify(result._meta));
  assert.equal(typeof info?.title, 'string');
  assert.equal(typeof info?.version, 'string');
  assert.deepEqual(client.getDiscoverResult(), result);
  assert.deepEqual(client.getServerVersion(), info);

  const [request] = sentRequests(k, 'server/discover');
  assertEnvelope(request);
  const raw = lastRawResult(k, 'server/discover');
  assertModernResult(raw, 'server/discover');
  assert.equal(raw.result.ttlMs, 300000);
  assert.equal(raw.result.cacheScope, 'public');
  assert.equal('tasks' in raw.result.capabilities, false, JSON.stringify(raw));
});

sdk2KeelTest('tools/list and tools/call on the modern path: echo first, no execution, ttlMs and cacheScope, every result resultType complete with serverInfo (ERA-1, ERA-4)', { mode: PIN }, async (k) => {
  const { client } = k;
  const { tools } = await client.listTools(undefined, reqOpts);
  const names = tools.map((x) => x.name);
  assert.equal(names[0], 'echo', JSON.stringify(names));
  for (const name of ['sleep', 'progress', 'latch_wait', 'latch_release', 'fail']) {
    assert.ok(names.includes(name), `--test-tools tool ${name} missing from ${JSON.stringify(names)}`);
  }
  const rawList = lastRawResult(k, 'tools/list');
  assertModernResult(rawList, 'tools/list');
  assert.equal(rawList.result.ttlMs, 300000);
  assert.equal(rawList.result.cacheScope, 'public');
  assert.deepEqual(rawList.result.tools.map((x) => x.name), names, 'the client changed the order or the set');
  const withExecution = rawList.result.tools.filter((x) => 'execution' in x).map((x) => x.name);
  assert.deepEqual(withExecution, [], 'tools with an execution member on the modern path');

  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, reqOpts);
  assert.notEqual(echo.isError, true);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'hi' }]);
  assert.equal(echo._meta?.[SERVER_INFO_KEY]?.name, 'keel');
  assertModernResult(lastRawResult(k, 'tools/call'), 'tools/call echo');

  const failed = await client.callTool({ name: 'fail', arguments: { message: 'boom' } }, reqOpts);
  assert.equal(failed.isError, true, JSON.stringify(failed));
  assert.ok(JSON.stringify(failed.content).includes('boom'), JSON.stringify(failed));
  assertModernResult(lastRawResult(k, 'tools/call'), 'tools/call fail');

  for (const m of k.sent) assertEnvelope(m);
  assertNoInitialize(k);
});

sdk2KeelTest('tools/call of an unknown tool on the modern path rejects with JSON-RPC error -32602, and keel keeps serving (ERA-1)', { mode: PIN }, async (k) => {
  const { client } = k;
  await assert.rejects(
    client.callTool({ name: 'no_such_tool', arguments: {} }, reqOpts),
    (err) => {
      assert.ok(err instanceof ProtocolError, `not a ProtocolError: ${err?.constructor?.name} ${err}`);
      assert.equal(err.code, -32602, `code ${err.code}: ${err.message}`);
      return true;
    });
  const raw = lastRawResult(k, 'tools/call');
  assert.equal(raw.error?.code, -32602, JSON.stringify(raw));
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'still here' } }, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'still here' }]);
});

sdk2KeelTest('progress on the modern path: keel sends 1..steps with the call progressToken and onprogress receives them; a call without a token gets none (ERA-5)', { mode: PIN }, async (k, t) => {
  const { client } = k;
  // Steps 100 ms apart: keel sends at most one progress per 50 ms per call (PRG-1).
  const args = { steps: 3, interval_ms: 100 };

  const quiet = await client.callTool({ name: 'progress', arguments: args }, reqOpts);
  assert.deepEqual(quiet.content, [{ type: 'text', text: 'done 3 steps' }]);
  const quietId = lastSentId(k, 'tools/call');
  assert.equal(k.sent.find((m) => m.id === quietId).params._meta.progressToken, undefined);
  const stray = k.seen.filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(stray, [], `progress for a call without a progressToken:\n${dump(stray)}`);

  const updates = [];
  const result = await client.callTool({ name: 'progress', arguments: args },
    { ...reqOpts, onprogress: (p) => updates.push(p) });
  assert.deepEqual(result.content, [{ type: 'text', text: 'done 3 steps' }]);
  const request = sentRequests(k, 'tools/call').at(-1);
  assertEnvelope(request);
  const token = request.params._meta.progressToken;
  assert.notEqual(token, undefined, `no progressToken: ${JSON.stringify(request)}`);

  // On the wire: 1..steps, each echoing the token, all before the response.
  const at = indexOfResponse(k, request.id);
  const raw = k.seen.filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(raw.map((m) => m.params.progress), [1, 2, 3], dump(k.seen));
  for (const m of raw) {
    assert.equal(m.params.progressToken, token, JSON.stringify(m));
    assert.equal(m.params.total, 3, JSON.stringify(m));
    assert.ok(k.seen.indexOf(m) < at, `progress after the response:\n${dump(k.seen)}`);
  }
  // Through onprogress: the same values in order, except that the v2 client drops a
  // progress notification read in the same chunk as the response (it dispatches
  // notifications a microtask late but forgets the token at the response at once) and
  // reports it to onerror as an unknown token. Only the last step can share that chunk.
  t.diagnostic(`onprogress: ${JSON.stringify(updates)}; onerror: ${JSON.stringify(k.errors)}`);
  const got = updates.map((p) => p.progress);
  assert.ok(got.length >= 2, `onprogress got ${JSON.stringify(updates)}`);
  assert.deepEqual(got, [1, 2, 3].slice(0, got.length));
  for (const p of updates) assert.equal(p.total, 3, JSON.stringify(p));
  const lost = k.errors.filter((e) => e.includes('progress notification for an unknown token'));
  assert.equal(lost.length, 3 - got.length, `onerror: ${JSON.stringify(k.errors)}`);
  assertModernResult(k.seen[at], 'tools/call progress');
});

sdk2KeelTest('cancel via AbortController while latch_wait runs: notifications/cancelled carries the envelope, keel never answers the call and keeps serving (CAN-2)', { mode: PIN }, async (k) => {
  const { client } = k;
  const latch = 'modern-cancel';
  const controller = new AbortController();
  const blocked = client.callTool({ name: 'latch_wait', arguments: { name: latch } }, { ...reqOpts, signal: controller.signal });
  const rejected = assert.rejects(blocked, (err) => {
    // The v2 client rejects an aborted request with an SdkError carrying the abort reason.
    assert.ok(err instanceof SdkError, `not an SdkError: ${err?.constructor?.name} ${err}`);
    assert.equal(err.message, 'test cancels');
    return true;
  });
  // keel reads its input in order: once this echo is answered, latch_wait was admitted,
  // and it is not answered (its latch is closed).
  await client.callTool({ name: 'echo', arguments: { text: 'before' } }, reqOpts);
  const blockedId = sentRequests(k, 'tools/call').find((m) => m.params.name === 'latch_wait')?.id;
  assert.notEqual(blockedId, undefined, dump(k.sent));
  assert.deepEqual(responsesTo(k, blockedId), [], 'latch_wait answered before its latch opened');

  controller.abort('test cancels');
  await rejected;
  const cancels = k.sent.filter((m) => m.method === 'notifications/cancelled');
  assert.equal(cancels.length, 1, dump(k.sent));
  assert.equal(cancels[0].params.requestId, blockedId);
  assertEnvelope(cancels[0]);

  // keel keeps serving; opening the latch now wakes nothing (the waiter was stopped).
  const after = await client.callTool({ name: 'echo', arguments: { text: 'after' } }, reqOpts);
  assert.deepEqual(after.content, [{ type: 'text', text: 'after' }]);
  const released = await client.callTool({ name: 'latch_release', arguments: { name: latch } }, reqOpts);
  assert.deepEqual(released.content, [{ type: 'text', text: `released ${latch}` }]);
  await client.callTool({ name: 'echo', arguments: { text: 'last' } }, reqOpts);
  // Everything keel did with the cancel and the release is written before this point.
  assert.deepEqual(responsesTo(k, blockedId), [], `the cancelled call was answered:\n${dump(k.seen)}`);
  const progress = k.seen.filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(progress, [], dump(progress));
});

sdk2KeelTest('logging on the modern path: test_tool_with_logging sends its info messages only to a request whose _meta carries io.modelcontextprotocol/logLevel at or below info (ERA-5)', { mode: PIN, args: ['--conformance-fixtures'] }, async (k) => {
  const { client } = k;
  const call = (meta) => client.callTool({ name: 'test_tool_with_logging', arguments: {}, ...(meta && { _meta: meta }) }, reqOpts);
  const rawLogs = () => k.seen.filter((m) => m.method === 'notifications/message');

  // The v2 client has no per-request or client-level log level on a modern connection:
  // logging/setLevel is refused locally (it is not a 2026-07-28 method), nothing is sent.
  await assert.rejects(client.setLoggingLevel('info', reqOpts), (err) => {
    assert.ok(err instanceof SdkError, `not an SdkError: ${err?.constructor?.name} ${err}`);
    assert.equal(err.code, 'METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION', err.message);
    return true;
  });
  assert.deepEqual(k.sent, [], dump(k.sent));

  // Without a logLevel: no log messages.
  await call(undefined);
  assert.equal(sentRequests(k, 'tools/call').at(-1).params._meta[LOG_LEVEL_META_KEY], undefined);
  assert.deepEqual(rawLogs(), [], dump(rawLogs()));

  // logLevel warning: the tool's info messages are below it.
  await call({ [LOG_LEVEL_META_KEY]: 'warning' });
  assert.deepEqual(rawLogs(), [], dump(rawLogs()));

  // logLevel info, passed through params._meta (the client merges its envelope with it).
  const { messages, enough } = collectLogMessages(client, 3);
  const result = await call({ [LOG_LEVEL_META_KEY]: 'info' });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  const request = sentRequests(k, 'tools/call').at(-1);
  assertEnvelope(request);
  assert.equal(request.params._meta[LOG_LEVEL_META_KEY], 'info');
  await enough;
  assert.deepEqual(messages.map((m) => m.level), ['info', 'info', 'info'], JSON.stringify(messages));
  const raw = rawLogs();
  assert.equal(raw.length, 3, dump(raw));
  const at = indexOfResponse(k, request.id);
  for (const m of raw) assert.ok(k.seen.indexOf(m) < at, `log message after the response:\n${dump(k.seen)}`);
  assertModernResult(k.seen[at], 'tools/call test_tool_with_logging');
});

sdk2KeelTest('auto mode negotiates modern against keel: the discover result is kept, the session keel never sees initialize (ERA-1, ERA-2)', { mode: 'auto' }, async (k) => {
  const { client } = k;
  assert.equal(client.getProtocolEra(), 'modern');
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  const discovered = client.getDiscoverResult();
  assert.ok(discovered?.supportedVersions.includes(MODERN), JSON.stringify(discovered));
  assert.equal(client.getServerVersion()?.name, 'keel');
  const result = await client.callTool({ name: 'echo', arguments: { text: 'auto' } }, reqOpts);
  assert.deepEqual(result.content, [{ type: 'text', text: 'auto' }]);
  assertNoInitialize(k);
  for (const m of k.sent) assertEnvelope(m);
  assertModernResult(lastRawResult(k, 'tools/call'), 'tools/call echo');
});

sdk2KeelTest('a legacy v2 client (default mode) still works: initialize 2025-11-25, tools/call, no _meta envelope, legacy results unchanged (ERA-1, ERA-4)', {}, async (k) => {
  const { client } = k;
  assert.equal(client.getProtocolEra(), 'legacy');
  assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
  assert.equal(client.getServerVersion()?.name, 'keel');
  assert.ok(client.getServerCapabilities()?.tasks, `legacy capabilities: ${JSON.stringify(client.getServerCapabilities())}`);
  assert.equal(client.getDiscoverResult(), undefined);
  assert.deepEqual(k.sent.map((m) => m.method), ['initialize', 'notifications/initialized']);
  assert.equal(k.sent[0].params.protocolVersion, '2025-11-25');

  const result = await client.callTool({ name: 'echo', arguments: { text: 'legacy' } }, reqOpts);
  assert.deepEqual(result.content, [{ type: 'text', text: 'legacy' }]);
  const request = sentRequests(k, 'tools/call').at(-1);
  assert.equal(request.params._meta, undefined, `legacy request with _meta: ${JSON.stringify(request)}`);
  const raw = lastRawResult(k, 'tools/call');
  assert.equal(raw.result.resultType, undefined, `legacy result with resultType: ${JSON.stringify(raw)}`);
  assert.equal(raw.result._meta?.[SERVER_INFO_KEY], undefined, `legacy result with serverInfo: ${JSON.stringify(raw)}`);
  assert.deepEqual(await client.ping(reqOpts), {});
});

// Multi round-trip requests (MCP 2026-07-28). The v2 client fulfils an input_required result
// by itself: it dispatches each embedded inputRequests entry to the handler registered with
// setRequestHandler (elicitation/create here; the handler's ctx.mcpReq.id is the entry's key),
// then retries the same request on a fresh JSON-RPC id with the original params plus
// inputResponses (the handler's bare ElicitResult per key) and the requestState echoed byte
// for byte, until a complete result (inputRequired.maxRounds, default 10); callTool resolves
// with that final result. The elicitation capability comes from the Client options and is
// what the per-request envelope declares; setRequestHandler refuses an elicitation handler
// without it.
const CHARGE = { name: 'charge_account', arguments: { account: 'a1', cents: 500, idempotencyKey: 'k1' } };
const ELICITING = { elicitation: {} };

// A pinned client declaring elicitation whose handler answers with the next of `actions`
// (each {action, content?}); every request it is handed goes to `asked` with its context id.
function eliciting(actions) {
  const asked = [];
  return {
    asked,
    options: {
      mode: PIN,
      args: ['--catalog', APPROVAL_CATALOG],
      clientOptions: { capabilities: ELICITING },
      setup: (client) => client.setRequestHandler('elicitation/create', async (request, ctx) => {
        asked.push({ params: request.params, key: ctx.mcpReq.id });
        const answer = actions[asked.length - 1];
        assert.ok(answer, `elicitation ${asked.length} was not expected: ${JSON.stringify(request.params)}`);
        return answer;
      }),
    },
  };
}

// The charge_account requests on the wire, as [first, retry] pairs: the first without
// inputResponses/requestState, answered input_required; the retry on a new id, with the same
// name and arguments, the key's answer and the requestState keel gave, answered complete.
// Returns [{first, asked, retry, answer}] (asked: keel's input_required result; answer: keel's
// response to the retry).
function roundTrips(k) {
  const calls = sentRequests(k, 'tools/call').filter((m) => m.params.name === 'charge_account');
  assert.equal(calls.length % 2, 0, `not first/retry pairs:\n${dump(k.sent)}`);
  const trips = [];
  for (let i = 0; i < calls.length; i += 2) {
    const [first, retry] = [calls[i], calls[i + 1]];
    assertEnvelope(first);
    assertEnvelope(retry);
    assert.deepEqual(first.params._meta[CLIENT_CAPABILITIES_KEY], ELICITING, JSON.stringify(first));
    assert.deepEqual(retry.params._meta[CLIENT_CAPABILITIES_KEY], ELICITING, JSON.stringify(retry));
    assert.equal('inputResponses' in first.params, false, JSON.stringify(first));
    assert.equal('requestState' in first.params, false, JSON.stringify(first));
    const asked = responseTo(k, first.id);
    assert.ok(asked?.result, `no result for the first call id ${first.id}:\n${dump(k.seen)}`);
    assert.equal(asked.result.resultType, 'input_required', JSON.stringify(asked));
    assert.equal(asked.result._meta?.[SERVER_INFO_KEY]?.name, 'keel', JSON.stringify(asked));
    assert.equal('content' in asked.result, false, `input_required with content: ${JSON.stringify(asked)}`);
    assert.deepEqual(Object.keys(asked.result.inputRequests), ['approval'], JSON.stringify(asked));
    const request = asked.result.inputRequests.approval;
    assert.equal(request.method, 'elicitation/create', JSON.stringify(asked));
    assert.equal(request.params.mode, 'form', JSON.stringify(asked));
    assert.equal(request.params.requestedSchema?.type, 'object', JSON.stringify(asked));
    assert.equal(typeof asked.result.requestState, 'string', JSON.stringify(asked));
    assert.ok(asked.result.requestState.startsWith('v1.'), JSON.stringify(asked));

    assert.notEqual(retry.id, first.id, 'the retry reused the JSON-RPC id');
    assert.equal(retry.params.name, first.params.name);
    assert.deepEqual(retry.params.arguments, first.params.arguments);
    assert.equal(retry.params.requestState, asked.result.requestState, 'requestState not echoed byte for byte');
    assert.deepEqual(Object.keys(retry.params.inputResponses ?? {}), ['approval'], JSON.stringify(retry));
    // The retry leaves after keel's input_required answer (the client had to read it first).
    const answer = responseTo(k, retry.id);
    assert.ok(answer?.result, `no result for the retry id ${retry.id}:\n${dump(k.seen)}`);
    assert.equal(answer.result.resultType, 'complete', JSON.stringify(answer));
    assert.ok(indexOfResponse(k, first.id) < indexOfResponse(k, retry.id), dump(k.seen));
    trips.push({ first, asked: asked.result, retry, answer: answer.result });
  }
  return trips;
}

{
  const { asked, options } = eliciting([{ action: 'accept', content: {} }]);
  sdk2KeelTest('MRTR with a pinned v2 client declaring elicitation: keel answers input_required, the client asks its elicitation/create handler once and retries with inputResponses.approval and the same requestState on a new id, and the charge runs (MRTR-1, MRTR-2)', options, async (k) => {
    const { client } = k;
    const result = await client.callTool(CHARGE, reqOpts);
    // The handler: called once, for the key "approval", with keel's form elicitation.
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.equal(asked[0].key, 'approval');
    assert.equal(asked[0].params.mode, 'form');
    assert.match(asked[0].params.message, /charge_account/);
    assert.match(asked[0].params.message, /payments/);
    assert.match(asked[0].params.message, /"cents":500/);
    // The final result: the charge.
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(typeof result.structuredContent?.charge_id, 'string', JSON.stringify(result));
    assert.equal(result.structuredContent.balance_cents, 99500, JSON.stringify(result));
    assert.equal(result.structuredContent.cents, 500);
    assert.equal(result._meta?.[SERVER_INFO_KEY]?.name, 'keel');
    // On the wire: two tools/call (nothing else; the client never writes an elicitation
    // response of its own), keel's first answer input_required, the retry's complete.
    assert.deepEqual(k.sent.map((m) => m.method), ['tools/call', 'tools/call'], dump(k.sent));
    const [trip] = roundTrips(k);
    assert.deepEqual(trip.asked.inputRequests.approval.params, asked[0].params, 'the handler got another request than keel asked');
    assert.deepEqual(trip.retry.params.inputResponses.approval, { action: 'accept', content: {} });
    assert.deepEqual(trip.answer.structuredContent, result.structuredContent);
    assert.deepEqual(k.errors, []);
  });
}

{
  const declines = [{ action: 'decline' }, { action: 'cancel' }, { action: 'accept', content: {} }];
  const { asked, options } = eliciting(declines);
  sdk2KeelTest('MRTR declined or cancelled through the v2 client\'s elicitation handler: the call ends isError approval_declined and nothing runs; a later accepted call charges once, from the untouched balance (MRTR-2)', options, async (k) => {
    const { client } = k;
    const declined = await client.callTool(CHARGE, reqOpts);
    assert.equal(declined.isError, true, JSON.stringify(declined));
    assert.equal(declined.structuredContent?.error?.type, 'approval_declined', JSON.stringify(declined));
    assert.match(JSON.stringify(declined.content), /Nothing ran/);

    const cancelled = await client.callTool(CHARGE, reqOpts);
    assert.equal(cancelled.isError, true, JSON.stringify(cancelled));
    assert.equal(cancelled.structuredContent?.error?.type, 'approval_declined', JSON.stringify(cancelled));
    assert.equal(cancelled.structuredContent.error.action, 'cancel', JSON.stringify(cancelled));

    // Neither ran: the accepted charge of 500 leaves 99500 of the starting 100000.
    const charged = await client.callTool(CHARGE, reqOpts);
    assert.notEqual(charged.isError, true, JSON.stringify(charged));
    assert.equal(charged.structuredContent?.balance_cents, 99500, JSON.stringify(charged));

    assert.equal(asked.length, 3, JSON.stringify(asked));
    for (const a of asked) assert.match(a.params.message, /charge_account/);
    const trips = roundTrips(k);
    assert.equal(trips.length, 3, dump(k.sent));
    assert.deepEqual(trips.map((x) => x.retry.params.inputResponses.approval), declines);
    // Each round trip was asked with its own requestState.
    assert.equal(new Set(trips.map((x) => x.asked.requestState)).size, 3, JSON.stringify(trips.map((x) => x.asked.requestState)));
    assert.deepEqual(trips.map((x) => x.answer.isError === true), [true, true, false]);
    assert.deepEqual(k.errors, []);
  });
}

sdk2KeelTest('MRTR not offered to a pinned v2 client without the elicitation capability: charge_account without approval_id is isError approval_required, nothing asked (no input_required on the wire), nothing charged (MRTR-2, OPS-3)', { mode: PIN, args: ['--catalog', APPROVAL_CATALOG] }, async (k) => {
  const { client } = k;
  // The v2 client refuses an elicitation handler it has not declared the capability for.
  assert.throws(() => client.setRequestHandler('elicitation/create', async () => ({ action: 'accept' })),
    (err) => err instanceof SdkError && /elicitation capability/.test(err.message));

  const result = await client.callTool(CHARGE, reqOpts);
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent?.error?.type, 'approval_required', JSON.stringify(result));
  assert.match(JSON.stringify(result.content), /Nothing ran/);

  const [request] = sentRequests(k, 'tools/call');
  assertEnvelope(request);
  assert.deepEqual(request.params._meta[CLIENT_CAPABILITIES_KEY], {}, JSON.stringify(request));
  assertModernResult(lastRawResult(k, 'tools/call'), 'tools/call charge_account');
  const asking = k.seen.filter((m) => m.result?.resultType === 'input_required');
  assert.deepEqual(asking, [], `keel asked a client that cannot answer:\n${dump(asking)}`);
  assert.deepEqual(k.sent.map((m) => m.method), ['tools/call'], dump(k.sent));

  // Nothing ran: an approved charge of 500 (approval_id argument) leaves 99500.
  const charged = await client.callTool({ ...CHARGE, arguments: { ...CHARGE.arguments, approval_id: 'ap-1' } }, reqOpts);
  assert.notEqual(charged.isError, true, JSON.stringify(charged));
  assert.equal(charged.structuredContent?.balance_cents, 99500, JSON.stringify(charged));
});
