// Interop: keel's MCP 2026-07-28 tasks extension (io.modelcontextprotocol/tasks, SEP-2663)
// driven by the official MCP TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0)
// over stdio, pinned to 2026-07-28.
// Run: node --test tests/interop/modern_tasks.test.mjs   (or: npm run test:interop)
// The binary is $KEEL_BINARY, else <repo>/build/keel; it is started with --test-tools plus
// the flags a test asks for. Every test starts its own keel (in a fresh temporary working
// directory, with its own KEEL_DB) and stops it (sdk2_keel.mjs).
//
// What the v2 client offers for the extension (2.4.0; @modelcontextprotocol/ext-tasks is not
// installed, so these tests use the client's generic request path):
// - Declaring: the per-request envelope's io.modelcontextprotocol/clientCapabilities is the
//   Client's `capabilities` option, verbatim, on every request; `extensions` is part of the
//   2026 ClientCapabilities schema, so `capabilities: {extensions: {[TASKS]: {}}}` declares
//   the extension on every request of that client. The declaration is per client, not per
//   call: a non-declaring request comes from a second client without it.
// - tools/call answered resultType "task": callTool (and client.request with any result
//   schema) rejects with SdkError UNSUPPORTED_RESULT_TYPE, data {resultType: 'task', method:
//   'tools/call'}. The codec discriminates on resultType before any schema runs, and the
//   error carries neither the taskId nor the task, so the CreateTaskResult is reachable only
//   on the wire: these tests read it from k.seen (the transport tap records each line before
//   the client handles it).
// - tasks/get and tasks/cancel are legacy spec methods the 2026 wire removed: without a
//   result schema client.request refuses them locally (it throws SdkError
//   METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION synchronously, no promise); with an explicit Standard Schema they are sent
//   (the SDK lets exactly these two names through as the extension's methods). tasks/update
//   is not a spec method at all, so it is a custom method and needs a schema anyway.
//   tasks/result and tasks/list are refused locally even with a schema (removed in 2026).
// - A result the client resolves with has resultType stripped (it is checked on the raw line).
// - An error -32021 with data.requiredCapabilities comes back as
//   MissingRequiredClientCapabilityError (a ProtocolError, code -32021, data as sent).
//
// Waits are for conditions (a status), with bounds, honouring pollIntervalMs between polls;
// nothing here asserts timing. keel writes its output in order, so "nothing after line N" is
// an observation, not a timing guess.
import assert from 'node:assert/strict';
import { MissingRequiredClientCapabilityError, ProtocolError, SdkError } from '@modelcontextprotocol/client';
import { MODERN, sdk2KeelTest } from './sdk2_keel.mjs';

const TASKS = 'io.modelcontextprotocol/tasks';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';
const PIN = { pin: MODERN };
const DECLARING = { extensions: { [TASKS]: {} } };
const REQUIRED = { requiredCapabilities: { extensions: { [TASKS]: {} } } };
const POLL_MS = 50;  // --task-poll-interval for the tests that poll
const reqOpts = { timeout: 5000 };
const TASK_ID = /^[0-9a-f]{32}$/;
// ISO 8601 date-time with a zone (keel writes UTC, "...Z").
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
// Wire keys a CreateTaskResult must not carry (flat Task; no outcome; no legacy names).
const NOT_IN_CREATE = ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval', 'content', 'isError'];

// A permissive Standard Schema (v1) for client.request: the v2 client needs one to send
// tasks/* on a 2026-07-28 connection; the shapes are checked on the raw lines instead.
const LOOSE = {
  '~standard': {
    version: 1, vendor: 'keel-interop',
    validate: (value) => (value !== null && typeof value === 'object'
      ? { value } : { issues: [{ message: `not an object: ${JSON.stringify(value)}` }] }),
  },
};

// A real wait, only between polls of tasks/get: the client honours the pollIntervalMs keel
// asks for, as the extension says clients should. Never an assertion.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isResponse = (m) => 'id' in m && ('result' in m || 'error' in m);
const responsesTo = (k, id) => k.seen.filter((m) => isResponse(m) && m.id === id);
const indexOfResponse = (k, id) => k.seen.findIndex((m) => isResponse(m) && m.id === id);
const sentRequests = (k, method) => k.sent.filter((m) => m.method === method && 'id' in m);
const dump = (msgs) => msgs.map((m) => JSON.stringify(m)).join('\n');

// The one raw response to the last request of `method` the client sent.
function lastRaw(k, method) {
  const request = sentRequests(k, method).at(-1);
  assert.ok(request, `no ${method} request on the wire:\n${dump(k.sent)}`);
  const responses = responsesTo(k, request.id);
  assert.equal(responses.length, 1, `responses to ${method} id ${request.id}:\n${dump(k.seen)}`);
  return { request, response: responses[0] };
}

// A tasks/* (or other custom) request through the client's generic request path.
const taskRequest = (k, method, params) => k.client.request({ method, params }, LOOSE, reqOpts);

function assertEnvelope(msg, capabilities) {
  const meta = msg.params?._meta;
  assert.equal(meta?.[PROTOCOL_VERSION_KEY], MODERN, `protocolVersion in ${JSON.stringify(msg)}`);
  assert.deepEqual(meta?.[CLIENT_CAPABILITIES_KEY], capabilities, `clientCapabilities in ${JSON.stringify(msg)}`);
}

function assertModernComplete(response, what) {
  assert.ok(response?.result, `${what}: not a result: ${JSON.stringify(response)}`);
  assert.equal(response.result.resultType, 'complete', `${what}: ${JSON.stringify(response)}`);
  assert.equal(response.result._meta?.[SERVER_INFO_KEY]?.name, 'keel', `${what}: ${JSON.stringify(response)}`);
}

// The Task fields every CreateTaskResult and tasks/get result carries.
function assertTaskFields(result, what) {
  const text = `${what}: ${JSON.stringify(result)}`;
  assert.match(result.taskId, TASK_ID, text);
  assert.match(result.createdAt, ISO, text);
  assert.match(result.lastUpdatedAt, ISO, text);
  assert.ok(Date.parse(result.lastUpdatedAt) >= Date.parse(result.createdAt), text);
  assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs > 0, text);  // keel's --task-max-ttl default: not unlimited
  assert.ok(Number.isInteger(result.pollIntervalMs) && result.pollIntervalMs > 0, text);
}

// A raw CreateTaskResult: flat, resultType "task", status working, serverInfo in _meta.
function assertCreateTaskResult(response, pollIntervalMs) {
  const text = JSON.stringify(response);
  assert.ok(response?.result, `not a result: ${text}`);
  const r = response.result;
  assert.equal(r.resultType, 'task', text);
  assert.equal(r.status, 'working', text);
  assertTaskFields(r, 'CreateTaskResult');
  if (pollIntervalMs !== undefined) assert.equal(r.pollIntervalMs, pollIntervalMs, text);
  for (const key of NOT_IN_CREATE) assert.equal(key in r, false, `CreateTaskResult with ${key}: ${text}`);
  assert.equal(r._meta?.[SERVER_INFO_KEY]?.name, 'keel', text);
}

// callTool of a call keel answers with a task: the v2 client rejects it (see the header);
// returns the raw CreateTaskResult line of that call.
async function callToolExpectingTask(k, params, options = reqOpts) {
  await assert.rejects(k.client.callTool(params, options), (err) => {
    assert.ok(err instanceof SdkError, `not an SdkError: ${err?.constructor?.name} ${err}`);
    assert.equal(err.code, 'UNSUPPORTED_RESULT_TYPE', err.message);
    assert.deepEqual(err.data, { resultType: 'task', method: 'tools/call' });
    assert.equal(JSON.stringify(err.data).includes('taskId'), false);
    return true;
  });
  const { request, response } = lastRaw(k, 'tools/call');
  assert.equal(request.params.name, params.name);
  return response;
}

// A tasks/get through the client; returns {value, raw} (value: what the client resolved
// with, raw: keel's result line), after checking the common shape.
async function getTask(k, taskId) {
  const value = await taskRequest(k, 'tasks/get', { taskId });
  const { request, response } = lastRaw(k, 'tasks/get');
  assert.equal(request.params.taskId, taskId);
  assertModernComplete(response, 'tasks/get');
  assertTaskFields(response.result, 'tasks/get');
  assert.equal(response.result.taskId, taskId);
  // The client hands back the raw result less resultType.
  const { resultType, ...rest } = response.result;
  assert.deepEqual(value, rest);
  return { value, raw: response.result };
}

// Polls tasks/get (first at once, then pollIntervalMs apart as keel suggests) while the
// status is `while`; returns the last {value, raw} and the statuses seen. Bounded.
async function pollWhile(k, taskId, whileStatus, boundMs = 10000) {
  const deadline = performance.now() + boundMs;
  const statuses = [];
  for (;;) {
    const got = await getTask(k, taskId);
    statuses.push(got.raw.status);
    if (got.raw.status !== whileStatus) return { ...got, statuses };
    assert.ok(performance.now() < deadline, `task ${taskId} still ${whileStatus} after ${boundMs} ms:\n${dump(k.seen)}`);
    await sleep(got.raw.pollIntervalMs);
  }
}

sdk2KeelTest('server/discover offers the tasks extension to a v2 client declaring it: the in-place probe carries extensions[tasks] in its envelope and keel answers capabilities.extensions[tasks] = {} with no legacy tasks key (TASKX-1, ERA-2)', { mode: PIN, inPlace: true, clientOptions: { capabilities: DECLARING } }, async (k) => {
  const { client } = k;
  assert.equal(client.getProtocolEra(), 'modern');
  const [probe] = k.sent;
  assert.equal(probe?.method, 'server/discover', dump(k.sent));
  assertEnvelope(probe, DECLARING);
  const raw = responsesTo(k, probe.id);
  assert.equal(raw.length, 1, dump(k.seen));
  assertModernComplete(raw[0], 'server/discover');
  assert.deepEqual(raw[0].result.capabilities.extensions, { [TASKS]: {} }, JSON.stringify(raw[0]));
  assert.equal('tasks' in raw[0].result.capabilities, false, JSON.stringify(raw[0]));
  // The client keeps it: from the probe, and from an explicit discover.
  assert.deepEqual(client.getServerCapabilities()?.extensions, { [TASKS]: {} });
  const discovered = await client.discover(reqOpts);
  assert.deepEqual(discovered.capabilities.extensions, { [TASKS]: {} });
  assert.equal(discovered.capabilities.tasks, undefined);
  const again = responsesTo(k, sentRequests(k, 'server/discover').at(-1).id)[0];
  assert.deepEqual(again.result.capabilities, raw[0].result.capabilities);
  for (const m of k.sent) assertEnvelope(m, DECLARING);
});

sdk2KeelTest('a task to completion through the v2 client: declaring task_sleep {ms: 200} gets a flat CreateTaskResult on the wire (callTool rejects UNSUPPORTED_RESULT_TYPE), an immediate tasks/get finds it, polling at pollIntervalMs reaches completed with the CallToolResult inline, shaped like a plain sleep result (TASKX-1, ERA-4)', { mode: PIN, args: ['--task-poll-interval', String(POLL_MS)], clientOptions: { capabilities: DECLARING } }, async (k) => {
  const { client } = k;
  // What a plain call of the same work answers (below --task-after, the default 10 s).
  const plain = await client.callTool({ name: 'sleep', arguments: { ms: 200 } }, reqOpts);
  assert.notEqual(plain.isError, true, JSON.stringify(plain));
  assert.deepEqual(plain.content, [{ type: 'text', text: 'slept 200 ms' }]);
  const plainRaw = lastRaw(k, 'tools/call').response;
  assertModernComplete(plainRaw, 'tools/call sleep');

  const created = await callToolExpectingTask(k, { name: 'task_sleep', arguments: { ms: 200 } });
  assertCreateTaskResult(created, POLL_MS);
  const { taskId, createdAt } = created.result;
  assertEnvelope(lastRaw(k, 'tools/call').request, DECLARING);

  // The first tasks/get goes at once (the create is durable before it is answered), the
  // next ones pollIntervalMs apart, until the status leaves working.
  const done = await pollWhile(k, taskId, 'working');
  const { raw, statuses } = done;
  assert.equal(raw.status, 'completed', `statuses ${JSON.stringify(statuses)}: ${JSON.stringify(raw)}`);
  assert.equal(raw.createdAt, createdAt);
  assert.equal(raw.pollIntervalMs, POLL_MS);
  assert.equal('error' in raw, false, JSON.stringify(raw));
  assert.equal('inputRequests' in raw, false, JSON.stringify(raw));
  // The inlined result is what the call would have answered: a CallToolResult like the plain
  // sleep's (no resultType of its own, no related-task _meta).
  assert.deepEqual(raw.result.content, plainRaw.result.content, JSON.stringify(raw));
  assert.notEqual(raw.result.isError, true, JSON.stringify(raw));
  assert.equal('resultType' in raw.result, false, JSON.stringify(raw));
  assert.equal(raw.result._meta?.[RELATED_TASK_KEY], undefined, JSON.stringify(raw));
  for (const s of statuses.slice(0, -1)) assert.equal(s, 'working', JSON.stringify(statuses));

  // tasks/get is a pure read: asked again, the same answer.
  const again = await getTask(k, taskId);
  assert.deepEqual(again.raw, raw);
  // The creating call got exactly one response (the task), and no progress went out.
  assert.equal(responsesTo(k, lastRaw(k, 'tools/call').request.id).length, 1);
  assert.deepEqual(k.seen.filter((m) => m.method === 'notifications/progress'), []);
  for (const m of k.sent) assertEnvelope(m, DECLARING);
  assert.deepEqual(k.errors, []);
});

sdk2KeelTest('a cancelled task through the v2 client: task_sleep {ms: 60000}, tasks/cancel acknowledged with an empty result, tasks/get says cancelled (no result, no error) and still says so on a second get; cancelling again gets the same ack; an unknown id is -32602 (TASKX-1, TASK-1)', { mode: PIN, args: ['--task-poll-interval', String(POLL_MS)], clientOptions: { capabilities: DECLARING } }, async (k) => {
  const created = await callToolExpectingTask(k, { name: 'task_sleep', arguments: { ms: 60000 } });
  assertCreateTaskResult(created, POLL_MS);
  const { taskId } = created.result;
  const createId = lastRaw(k, 'tools/call').request.id;

  const ack = await taskRequest(k, 'tasks/cancel', { taskId });
  const rawAck = lastRaw(k, 'tasks/cancel').response;
  assertModernComplete(rawAck, 'tasks/cancel');
  // Empty: nothing but resultType and keel's serverInfo.
  assert.deepEqual(Object.keys(rawAck.result).sort(), ['_meta', 'resultType'], JSON.stringify(rawAck));
  assert.deepEqual(ack, { _meta: rawAck.result._meta });

  // Cancellation may settle later (the spec allows it); keel's is at once, but poll anyway.
  const first = await pollWhile(k, taskId, 'working');
  assert.equal(first.raw.status, 'cancelled', `statuses ${JSON.stringify(first.statuses)}: ${JSON.stringify(first.raw)}`);
  for (const key of ['result', 'error', 'inputRequests']) assert.equal(key in first.raw, false, JSON.stringify(first.raw));
  assert.equal(first.raw.createdAt, created.result.createdAt);
  if ('statusMessage' in first.raw) assert.equal(typeof first.raw.statusMessage, 'string');

  // Sticky: a poll interval later, still cancelled. Only statusMessage (and with it
  // lastUpdatedAt) may have moved on: keel says cancelled at once ("cancel_requested") and
  // notes later that the work stopped ("cancel_observed").
  await sleep(first.raw.pollIntervalMs);
  const second = await getTask(k, taskId);
  assert.equal(second.raw.status, 'cancelled', JSON.stringify(second.raw));
  assert.ok(Date.parse(second.raw.lastUpdatedAt) >= Date.parse(first.raw.lastUpdatedAt), JSON.stringify([first.raw, second.raw]));
  for (const key of ['result', 'error', 'inputRequests']) assert.equal(key in second.raw, false, JSON.stringify(second.raw));
  const { statusMessage: m1, lastUpdatedAt: u1, _meta: x1, ...rest1 } = first.raw;
  const { statusMessage: m2, lastUpdatedAt: u2, _meta: x2, ...rest2 } = second.raw;
  assert.deepEqual(rest2, rest1);

  // Cancelling a terminal task: the same ack, not an error.
  const ackAgain = await taskRequest(k, 'tasks/cancel', { taskId });
  assert.deepEqual(lastRaw(k, 'tasks/cancel').response.result, rawAck.result);
  assert.deepEqual(ackAgain, ack);
  assert.equal((await getTask(k, taskId)).raw.status, 'cancelled');

  // An unknown id: -32602 for tasks/get and tasks/cancel.
  const unknown = '0123456789abcdef0123456789abcdef';
  for (const method of ['tasks/get', 'tasks/cancel']) {
    await assert.rejects(taskRequest(k, method, { taskId: unknown }), (err) => {
      assert.ok(err instanceof ProtocolError, `${method}: ${err?.constructor?.name} ${err}`);
      assert.equal(err.code, -32602, `${method}: ${err.message}`);
      assert.match(err.message, /Task not found/);
      return true;
    });
    assert.equal(lastRaw(k, method).response.error?.code, -32602);
  }
  // The cancelled call was answered once (with its task), never again.
  assert.equal(responsesTo(k, createId).length, 1, dump(k.seen));
  for (const m of k.sent) assertEnvelope(m, DECLARING);
});

// A call that is not a task tool but runs past --task-after: keel answers its tools/call with
// a CreateTaskResult instead of the tool's result and the work goes on. The v2 client's
// callTool rejects that answer (SdkError UNSUPPORTED_RESULT_TYPE, data {resultType: 'task',
// method: 'tools/call'}); it neither polls nor exposes the taskId, which is taken from the
// raw line. The rejection settles the request: no notifications/cancelled is sent for it.
sdk2KeelTest('a long call promoted by --task-after 300: declaring sleep {ms: 1500} is answered with a CreateTaskResult (the v2 client\'s callTool rejects it UNSUPPORTED_RESULT_TYPE), and tasks/get eventually completes with the sleep\'s result; a short call stays a plain call (TASKX-1, TMO-1)', { mode: PIN, args: ['--task-after', '300', '--task-poll-interval', String(POLL_MS)], clientOptions: { capabilities: DECLARING } }, async (k) => {
  const { client } = k;
  const short = await client.callTool({ name: 'sleep', arguments: { ms: 10 } }, reqOpts);
  assert.deepEqual(short.content, [{ type: 'text', text: 'slept 10 ms' }]);
  assertModernComplete(lastRaw(k, 'tools/call').response, 'tools/call sleep 10');

  const created = await callToolExpectingTask(k, { name: 'sleep', arguments: { ms: 1500 } });
  assertCreateTaskResult(created, POLL_MS);
  const { taskId } = created.result;
  const createId = lastRaw(k, 'tools/call').request.id;
  assert.deepEqual(k.sent.filter((m) => m.method === 'notifications/cancelled'), [], dump(k.sent));

  const done = await pollWhile(k, taskId, 'working');
  assert.equal(done.raw.status, 'completed', `statuses ${JSON.stringify(done.statuses)}: ${JSON.stringify(done.raw)}`);
  assert.deepEqual(done.raw.result.content, [{ type: 'text', text: 'slept 1500 ms' }], JSON.stringify(done.raw));
  assert.notEqual(done.raw.result.isError, true, JSON.stringify(done.raw));
  assert.equal('error' in done.raw, false, JSON.stringify(done.raw));
  assert.equal(done.raw.createdAt, created.result.createdAt);
  // The promoted call was answered once, by the task; its result came only through tasks/get.
  assert.equal(responsesTo(k, createId).length, 1, dump(k.seen));
  for (const m of k.sent) assertEnvelope(m, DECLARING);
  assert.deepEqual(k.errors, []);
});

sdk2KeelTest('a promoted call with progress: progress {steps: 8, interval_ms: 100} with onprogress becomes a task after --task-after 300, keel sends no progress after the CreateTaskResult, and tasks/get completes with "done 8 steps" (TASKX-1, TMO-1)', { mode: PIN, args: ['--task-after', '300', '--task-poll-interval', String(POLL_MS)], clientOptions: { capabilities: DECLARING } }, async (k, t) => {
  const updates = [];
  const created = await callToolExpectingTask(k, { name: 'progress', arguments: { steps: 8, interval_ms: 100 } },
    { ...reqOpts, onprogress: (p) => updates.push(p) });
  assertCreateTaskResult(created, POLL_MS);
  const request = lastRaw(k, 'tools/call').request;
  const token = request.params._meta.progressToken;
  assert.notEqual(token, undefined, JSON.stringify(request));

  const done = await pollWhile(k, created.result.taskId, 'working');
  assert.equal(done.raw.status, 'completed', `statuses ${JSON.stringify(done.statuses)}: ${JSON.stringify(done.raw)}`);
  assert.deepEqual(done.raw.result.content, [{ type: 'text', text: 'done 8 steps' }], JSON.stringify(done.raw));
  // The work has ended (tasks/get says completed) and keel writes in order: every progress it
  // sent for the call is on the wire by now, and all of it precedes the task.
  const at = indexOfResponse(k, request.id);
  const progress = k.seen.filter((m) => m.method === 'notifications/progress');
  for (const m of progress) {
    assert.equal(m.params.progressToken, token, JSON.stringify(m));
    assert.ok(k.seen.indexOf(m) < at, `progress after the CreateTaskResult:\n${dump(k.seen)}`);
  }
  const sent = progress.map((m) => m.params.progress);
  assert.deepEqual(sent, sent.slice().sort((a, b) => a - b));
  // onprogress got a prefix of them (one read with the task line may be lost: see
  // modern_client.test.mjs).
  t.diagnostic(`progress on the wire: ${JSON.stringify(sent)}; onprogress: ${JSON.stringify(updates.map((p) => p.progress))}; onerror: ${JSON.stringify(k.errors)}`);
  assert.deepEqual(updates.map((p) => p.progress), sent.slice(0, updates.length));
});

sdk2KeelTest('a v2 client not declaring the extension gets -32021 (MissingRequiredClientCapabilityError, data.requiredCapabilities.extensions[tasks] = {}) for tasks/get, tasks/cancel, tasks/update and task_sleep, and a long call is never promoted for it (TASKX-1, ERA-3)', { mode: PIN, args: ['--task-after', '300'] }, async (k) => {
  const { client } = k;
  // keel offers the extension to everyone; this client just does not take it.
  assert.deepEqual(client.getServerCapabilities()?.extensions, { [TASKS]: {} });

  const refused = (what) => (err) => {
    assert.ok(err instanceof MissingRequiredClientCapabilityError, `${what}: ${err?.constructor?.name} ${err}`);
    assert.ok(err instanceof ProtocolError, what);
    assert.equal(err.code, -32021, `${what}: ${err.message}`);
    assert.deepEqual(err.data, REQUIRED, what);
    return true;
  };
  const calls = [
    ['tasks/get', { taskId: '0123456789abcdef0123456789abcdef' }],
    ['tasks/cancel', { taskId: '0123456789abcdef0123456789abcdef' }],
    ['tasks/update', { taskId: '0123456789abcdef0123456789abcdef', inputResponses: {} }],
  ];
  for (const [method, params] of calls) {
    await assert.rejects(taskRequest(k, method, params), refused(method));
    const { response } = lastRaw(k, method);
    assert.equal(response.error?.code, -32021, JSON.stringify(response));
    assert.deepEqual(response.error.data, REQUIRED, JSON.stringify(response));
    assert.equal('result' in response, false);
  }
  await assert.rejects(client.callTool({ name: 'task_sleep', arguments: { ms: 200 } }, reqOpts), refused('task_sleep'));
  const { response } = lastRaw(k, 'tools/call');
  assert.equal(response.error?.code, -32021, JSON.stringify(response));
  assert.deepEqual(response.error.data, REQUIRED, JSON.stringify(response));
  assert.match(response.error.message, /task_sleep/);

  // Past --task-after, but not declaring: a plain call to the end.
  const slow = await client.callTool({ name: 'sleep', arguments: { ms: 1000 } }, reqOpts);
  assert.deepEqual(slow.content, [{ type: 'text', text: 'slept 1000 ms' }]);
  const raw = lastRaw(k, 'tools/call').response;
  assertModernComplete(raw, 'tools/call sleep 1000');
  assert.equal('taskId' in raw.result, false, JSON.stringify(raw));

  assert.deepEqual(k.seen.filter((m) => m.result?.resultType === 'task'), [], dump(k.seen));
  for (const m of k.sent) assertEnvelope(m, {});
});

sdk2KeelTest('the v2 client\'s own gating of the task methods on 2026-07-28: tasks/get needs an explicit result schema, tasks/result and tasks/list are refused locally even with one, and a tools/call answered with a task rejects through client.request too (TASKX-1)', { mode: PIN, args: ['--task-poll-interval', String(POLL_MS)], clientOptions: { capabilities: DECLARING } }, async (k) => {
  const { client } = k;
  const localRefusal = (err) => {
    assert.ok(err instanceof SdkError, `not an SdkError: ${err?.constructor?.name} ${err}`);
    assert.equal(err.code, 'METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION', err.message);
    return true;
  };
  // request() throws these synchronously (it returns no promise), hence the functions.
  assert.throws(() => client.request({ method: 'tasks/get', params: { taskId: 'x' } }, reqOpts), localRefusal);
  assert.throws(() => taskRequest(k, 'tasks/result', { taskId: 'x' }), localRefusal);
  assert.throws(() => taskRequest(k, 'tasks/list', {}), localRefusal);
  assert.deepEqual(k.sent, [], `refused locally, yet sent:\n${dump(k.sent)}`);

  // The resultType discrimination comes before any schema: a permissive one does not help.
  await assert.rejects(client.request({ method: 'tools/call', params: { name: 'task_sleep', arguments: { ms: 1 } } }, LOOSE, reqOpts),
    (err) => err instanceof SdkError && err.code === 'UNSUPPORTED_RESULT_TYPE' && err.data?.resultType === 'task');
  const created = lastRaw(k, 'tools/call').response;
  assertCreateTaskResult(created);
  assert.equal((await pollWhile(k, created.result.taskId, 'working')).raw.status, 'completed');
});
