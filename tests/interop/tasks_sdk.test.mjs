// Interop: keel's durable tasks (MCP 2025-11-25, experimental) driven by the official MCP
// TypeScript SDK client's task API: client.experimental.tasks (callToolStream, getTask,
// getTaskResult, listTasks, cancelTask) and the low-level client.request(..., {task}).
// Run: node --test tests/interop/tasks_sdk.test.mjs   (or: npm run test:interop)
// The binary is $KEEL_BINARY, else <repo>/build/keel; it is started with --test-tools and
// --task-poll-interval 20 (callToolStream waits pollInterval between its tasks/get polls),
// plus the flags a test asks for. Every test starts its own keel (in a fresh temporary
// working directory, with its own KEEL_DB) and stops it.
//
// Raw traffic: after connect, the transport's onmessage and send are wrapped, so a test sees
// every message keel wrote (k.seen) and every message the SDK sent (k.sent). Waits are for
// conditions (an answer, a notification) with bounds; nothing here asserts timing.
import assert from 'node:assert/strict';
import {
  CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, RELATED_TASK_META_KEY, TaskSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { sdkKeelTest } from './sdk_keel.mjs';

const TEST_TIMEOUT_MS = 20000;
const REQUEST_TIMEOUT_MS = 5000;
const POLL_MS = 20;
const reqOpts = { timeout: REQUEST_TIMEOUT_MS };
const TASK_ID = /^[0-9a-f]{32}$/;
// ISO 8601 date-time with a zone (keel writes UTC, "...Z").
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

// A real wait, only between polls of a condition; never an assertion.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Every test starts keel with a short suggested pollInterval (the SDK honours it).
function keelTest(name, args, fn) {
  sdkKeelTest(name, { args: ['--task-poll-interval', String(POLL_MS), ...args], timeoutMs: TEST_TIMEOUT_MS,
    clientName: 'keel-tasks-sdk-test' }, fn);
}

// Collects every message of callToolStream (it always ends with 'result' or 'error').
async function collect(stream) {
  const out = [];
  for await (const m of stream) out.push(m);
  return out;
}

// Creates a task with the low-level path; returns the Task of the CreateTaskResult.
async function createTask(k, name, args, task = { ttl: 60000 }) {
  const r = await k.client.request({ method: 'tools/call', params: { name, arguments: args } },
    CreateTaskResultSchema, { ...reqOpts, task });
  return r.task;
}

// Polls tasks/get until pred(task) holds (bounded); returns that task.
async function pollTask(k, taskId, pred, what, ms = 10000) {
  const t0 = performance.now();
  let last;
  while (performance.now() - t0 < ms) {
    last = await k.client.experimental.tasks.getTask(taskId, reqOpts);
    if (pred(last)) return last;
    await sleep(POLL_MS);
  }
  assert.fail(`task ${taskId} never became ${what}; last: ${JSON.stringify(last)}`);
}

// Waits (bounded) until a message keel wrote matches pred.
async function waitSeen(k, pred, what, ms = 10000) {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    const hit = k.seen.find(pred);
    if (hit) return hit;
    await sleep(10);
  }
  assert.fail(`never saw ${what}; seen: ${JSON.stringify(k.seen.slice(-10))}`);
}

function assertTaskShape(task, what) {
  const parsed = TaskSchema.safeParse(task);
  assert.ok(parsed.success, `${what}: the SDK's TaskSchema rejects ${JSON.stringify(task)}: ${parsed.error}`);
  assert.match(task.taskId, TASK_ID, `${what}: taskId`);
  assert.match(task.createdAt, ISO, `${what}: createdAt`);
  assert.match(task.lastUpdatedAt, ISO, `${what}: lastUpdatedAt`);
  assert.ok(Date.parse(task.lastUpdatedAt) >= Date.parse(task.createdAt), `${what}: lastUpdatedAt before createdAt`);
  assert.ok(task.ttl === null || (Number.isInteger(task.ttl) && task.ttl > 0), `${what}: ttl ${task.ttl}`);
  assert.equal(task.pollInterval, POLL_MS, `${what}: pollInterval`);
}

const relatedTaskId = (result) => result?._meta?.[RELATED_TASK_META_KEY]?.taskId;

// Asserts that `promise` rejects with an McpError whose code is one of `codes`; returns it.
async function rejectsWith(promise, codes, what) {
  let value;
  try {
    value = await promise;
  } catch (err) {
    assert.ok(err instanceof McpError, `${what}: not an McpError: ${err}`);
    assert.ok(codes.includes(err.code), `${what}: code ${err.code} (${err.message}), expected one of ${codes}`);
    return err;
  }
  assert.fail(`${what}: expected a JSON-RPC error ${codes.join(' or ')}, got a success: ${JSON.stringify(value)}`);
}

keelTest('initialize and listTools(): capabilities.tasks {list, cancel, requests.tools.call}; the SDK sees execution.taskSupport',
  [], async ({ client }) => {
    const caps = client.getServerCapabilities();
    assert.deepEqual(caps?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } }, JSON.stringify(caps));
    const { tools } = await client.listTools(undefined, reqOpts);
    const support = Object.fromEntries(tools.map((x) => [x.name, x.execution?.taskSupport]));
    assert.equal(support.sleep, 'optional');
    assert.equal(support.progress, 'optional');
    assert.equal(support.latch_wait, 'optional');
    assert.equal(support.task_sleep, 'required');
    assert.equal(support.echo, 'forbidden');
    assert.equal(support.latch_release, 'forbidden');
    assert.equal(support.charge_account, 'optional');
    // What callToolStream decides with: optional/required tools are task tools for the SDK.
    assert.equal(client.isToolTask('sleep'), true);
    assert.equal(client.isToolTask('task_sleep'), true);
    assert.equal(client.isToolTask('echo'), false);
    assert.equal(client.isToolTaskRequired('task_sleep'), true);
    assert.equal(client.isToolTaskRequired('sleep'), false);
  });

keelTest('callToolStream(sleep): taskCreated, taskStatus..., completed, result; the result is what the tool returns, with related-task _meta',
  [], async (k) => {
    const { client } = k;
    await client.listTools(undefined, reqOpts);  // the SDK adds params.task only for tools it knows are task tools
    const direct = await client.callTool({ name: 'sleep', arguments: { ms: 30 } }, undefined, reqOpts);
    assert.notEqual(direct.isError, true, JSON.stringify(direct));
    const messages = await collect(client.experimental.tasks.callToolStream(
      { name: 'sleep', arguments: { ms: 30 } }, CallToolResultSchema, reqOpts));
    const types = messages.map((m) => m.type);
    assert.equal(types[0], 'taskCreated', JSON.stringify(messages));
    assert.equal(types.at(-1), 'result', JSON.stringify(messages));
    assert.ok(types.slice(1, -1).length >= 1 && types.slice(1, -1).every((x) => x === 'taskStatus'), `types: ${types}`);
    const created = messages[0].task;
    assertTaskShape(created, 'taskCreated');
    assert.equal(created.status, 'working');
    const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task);
    for (const s of statuses) {
      assertTaskShape(s, 'taskStatus');
      assert.equal(s.taskId, created.taskId);
      assert.equal(s.createdAt, created.createdAt);
    }
    assert.equal(statuses.at(-1).status, 'completed');
    assert.ok(statuses.slice(0, -1).every((s) => s.status === 'working'), JSON.stringify(statuses));
    const { result } = messages.at(-1);
    assert.notEqual(result.isError, true);
    assert.deepEqual(result.content, direct.content);
    assert.deepEqual(result.content, [{ type: 'text', text: 'slept 30 ms' }]);
    assert.equal(relatedTaskId(result), created.taskId, `result _meta: ${JSON.stringify(result._meta)}`);
    // On the wire: the tools/call carried params.task; the plain call did not.
    const calls = k.sent.filter((m) => m.method === 'tools/call');
    assert.equal(calls.length, 2);
    assert.equal(calls[0].params.task, undefined);
    assert.deepEqual(calls[1].params.task, {});
    // tasks/result was asked once the task was completed.
    assert.ok(k.sent.some((m) => m.method === 'tasks/result' && m.params.taskId === created.taskId));
  });

keelTest('callToolStream(progress) with onprogress: progress reaches the SDK handler through the task, with related-task _meta; the result is the tool\'s',
  [], async (k) => {
    const { client } = k;
    await client.listTools(undefined, reqOpts);
    const seenProgress = [];
    const messages = await collect(client.experimental.tasks.callToolStream(
      { name: 'progress', arguments: { steps: 3, interval_ms: 5 } }, CallToolResultSchema,
      { ...reqOpts, onprogress: (p) => seenProgress.push(p) }));
    assert.deepEqual(messages.map((m) => m.type).filter((x) => x !== 'taskStatus'), ['taskCreated', 'result'],
      JSON.stringify(messages));
    const taskId = messages[0].task.taskId;
    assert.equal(messages.at(-2).task.status, 'completed');
    const { result } = messages.at(-1);
    assert.deepEqual(result.content, [{ type: 'text', text: 'done 3 steps' }]);
    assert.equal(relatedTaskId(result), taskId);
    // keel sends at most one progress per 50 ms per request (the newest value wins, one held
    // back when the work ends is dropped), so which steps arrive depends on timing: the first
    // step always goes out, and whatever arrives is strictly increasing.
    const call = k.sent.find((m) => m.method === 'tools/call');
    const token = call.params._meta?.progressToken;
    assert.notEqual(token, undefined, 'the SDK sent no progressToken');
    const raw = k.seen.filter((m) => m.method === 'notifications/progress');
    const values = raw.map((m) => m.params.progress);
    assert.equal(values[0], 1, JSON.stringify(raw));
    assert.ok(values.every((v, i) => v <= 3 && (i === 0 || v > values[i - 1])), `progress values ${values}`);
    for (const m of raw) {
      assert.equal(m.params.progressToken, token);
      assert.equal(m.params.total, 3);
      assert.equal(m.params._meta?.[RELATED_TASK_META_KEY]?.taskId, taskId, JSON.stringify(m));
    }
    // Every notification was delivered to the onprogress of the (long answered) tools/call.
    assert.deepEqual(seenProgress.map((p) => p.progress), values, JSON.stringify(seenProgress));
    // None after the task is terminal: the completed status notification comes after all of it.
    await waitSeen(k, (m) => m.method === 'notifications/tasks/status' && m.params?.taskId === taskId &&
      m.params?.status === 'completed', 'completed status notification');
    await client.ping(reqOpts);
    const completedAt = k.seen.findIndex((m) => m.method === 'notifications/tasks/status' &&
      m.params?.taskId === taskId && m.params?.status === 'completed');
    const lastProgressAt = k.seen.findLastIndex((m) => m.method === 'notifications/progress');
    assert.ok(lastProgressAt < completedAt, 'progress after the completed status');
    assert.ok(!k.errors.some((e) => /unknown token/.test(e)), `SDK errors: ${k.errors}`);
  });

keelTest('getTask: the Task parses with the SDK TaskSchema; ttl is the requested one, or --task-max-ttl when none was asked',
  [], async (k) => {
    const { client } = k;
    const created = await createTask(k, 'sleep', { ms: 20 }, { ttl: 60000 });
    assertTaskShape(created, 'CreateTaskResult.task');
    assert.equal(created.status, 'working');
    assert.equal(created.ttl, 60000);
    const got = await client.experimental.tasks.getTask(created.taskId, reqOpts);
    assertTaskShape(got, 'tasks/get');
    assert.equal(got.taskId, created.taskId);
    assert.equal(got.ttl, 60000);
    assert.equal(got.createdAt, created.createdAt);
    assert.ok(['working', 'completed'].includes(got.status), got.status);
    const done = await pollTask(k, created.taskId, (x) => x.status === 'completed', 'completed');
    assertTaskShape(done, 'completed tasks/get');
    assert.ok(Date.parse(done.lastUpdatedAt) >= Date.parse(created.lastUpdatedAt));

    const noTtl = await createTask(k, 'sleep', { ms: 1 }, {});
    assert.equal(noTtl.ttl, 86400000, 'absent ttl -> --task-max-ttl (default 86400000)');
    assert.equal((await client.experimental.tasks.getTask(noTtl.taskId, reqOpts)).ttl, 86400000);
    const short = await createTask(k, 'sleep', { ms: 1 }, { ttl: 5 });
    assert.equal(short.ttl, 1000, 'a ttl below 1000 is raised to 1000');

    await rejectsWith(client.experimental.tasks.getTask('0123456789abcdef0123456789abcdef', reqOpts),
      [ErrorCode.InvalidParams], 'tasks/get of an unknown taskId');
  });

keelTest('getTask with --task-max-ttl 0: ttl null (unlimited) parses with the SDK TaskSchema',
  ['--task-max-ttl', '0'], async (k) => {
    const created = await createTask(k, 'sleep', { ms: 1 }, {});
    assert.equal(created.ttl, null);
    const got = await k.client.experimental.tasks.getTask(created.taskId, reqOpts);
    assertTaskShape(got, 'tasks/get');
    assert.equal(got.ttl, null);
  });

keelTest('cancelTask on a working task: cancelled (cancel_requested); a second cancelTask rejects -32602; getTaskResult rejects; it stays cancelled',
  [], async (k) => {
    const { client } = k;
    const latch = 'sdk-cancel';
    const created = await createTask(k, 'latch_wait', { name: latch, ignore_cancel: true });
    assert.equal((await client.experimental.tasks.getTask(created.taskId, reqOpts)).status, 'working');
    const cancelled = await client.experimental.tasks.cancelTask(created.taskId, reqOpts);
    assertTaskShape(cancelled, 'tasks/cancel');
    assert.equal(cancelled.taskId, created.taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.match(cancelled.statusMessage ?? '', /cancel_requested/);
    assert.equal((await client.experimental.tasks.getTask(created.taskId, reqOpts)).status, 'cancelled');

    const again = await rejectsWith(client.experimental.tasks.cancelTask(created.taskId, reqOpts),
      [ErrorCode.InvalidParams], 'second tasks/cancel');
    assert.match(again.message, /terminal status 'cancelled'/);

    // The work is still blocked in latch_wait (it ignores the cancel): tasks/result of a
    // cancelled task must not wait for it, and must be an error, never a success.
    const noResult = await rejectsWith(client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema, reqOpts),
      [ErrorCode.InternalError, ErrorCode.InvalidParams], 'tasks/result of a cancelled task');
    assert.equal(noResult.data?.status, 'cancelled', JSON.stringify(noResult.data));
    assert.equal(noResult.data?.taskId, created.taskId);

    // Let the work go: its checkpoint sees the cancel. The task stays cancelled.
    await client.callTool({ name: 'latch_release', arguments: { name: latch } }, undefined, reqOpts);
    const observed = await pollTask(k, created.taskId, (x) => /cancel_observed/.test(x.statusMessage ?? ''),
      'cancel_observed');
    assert.equal(observed.status, 'cancelled');
    const status = await waitSeen(k, (m) => m.method === 'notifications/tasks/status' &&
      m.params?.taskId === created.taskId && /cancel_observed/.test(m.params?.statusMessage ?? ''),
    'notifications/tasks/status with cancel_observed');
    assert.equal(status.params.status, 'cancelled');
    assertTaskShape(status.params, 'notifications/tasks/status');
    await rejectsWith(client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema, reqOpts),
      [ErrorCode.InternalError, ErrorCode.InvalidParams], 'tasks/result of a cancelled task, after the work stopped');
    await rejectsWith(client.experimental.tasks.cancelTask(created.taskId, reqOpts),
      [ErrorCode.InvalidParams], 'tasks/cancel after cancel_observed');
  });

keelTest('cancelTask of a completed task rejects -32602 "already in terminal status \'completed\'"; its result is kept',
  [], async (k) => {
    const { client } = k;
    const created = await createTask(k, 'sleep', { ms: 1 });
    const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema, reqOpts);
    assert.deepEqual(result.content, [{ type: 'text', text: 'slept 1 ms' }]);
    const err = await rejectsWith(client.experimental.tasks.cancelTask(created.taskId, reqOpts),
      [ErrorCode.InvalidParams], 'tasks/cancel of a completed task');
    assert.match(err.message, /terminal status 'completed'/);
    assert.equal((await client.experimental.tasks.getTask(created.taskId, reqOpts)).status, 'completed');
  });

keelTest('getTaskResult(taskId, CallToolResultSchema): blocks until the task is done, then the tool result with _meta related-task',
  [], async (k) => {
    const { client } = k;
    const created = await createTask(k, 'sleep', { ms: 50 });
    // Asked at once, while the task is working: tasks/result waits for it.
    const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'slept 50 ms' }]);
    assert.deepEqual(result._meta?.[RELATED_TASK_META_KEY], { taskId: created.taskId });
    assert.equal((await client.experimental.tasks.getTask(created.taskId, reqOpts)).status, 'completed');
    // Asked again: the same result.
    const again = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema, reqOpts);
    assert.deepEqual(again, result);
  });

keelTest('a failed task (--idle-timeout): callToolStream ends with an error; getTaskResult is the isError timeout result',
  ['--idle-timeout', '200'], async (k) => {
    const { client } = k;
    await client.listTools(undefined, reqOpts);
    const messages = await collect(client.experimental.tasks.callToolStream(
      { name: 'sleep', arguments: { ms: 10000 } }, CallToolResultSchema, reqOpts));
    assert.equal(messages[0].type, 'taskCreated', JSON.stringify(messages));
    const last = messages.at(-1);
    assert.equal(last.type, 'error', JSON.stringify(messages));
    assert.ok(last.error instanceof McpError);
    assert.equal(messages.at(-2).task.status, 'failed');
    const taskId = messages[0].task.taskId;
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, reqOpts);
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.equal(result.structuredContent?.error?.type, 'timeout', JSON.stringify(result));
    assert.equal(relatedTaskId(result), taskId);
  });

keelTest('listTasks: every created task, in creation order, across pages (--page-size 2) with nextCursor',
  ['--page-size', '2'], async (k) => {
    const { client } = k;
    const ids = [];
    for (let i = 0; i < 5; ++i) ids.push((await createTask(k, 'sleep', { ms: 1 })).taskId);
    const listed = [];
    let cursor;
    let pages = 0;
    do {
      const page = await client.experimental.tasks.listTasks(cursor, reqOpts);
      ++pages;
      assert.ok(page.tasks.length <= 2, `page of ${page.tasks.length}`);
      for (const task of page.tasks) assertTaskShape(task, 'tasks/list entry');
      listed.push(...page.tasks.map((x) => x.taskId));
      cursor = page.nextCursor;
      assert.ok(pages <= 10, 'tasks/list does not end');
    } while (cursor !== undefined);
    assert.deepEqual(listed, ids);
    assert.equal(pages, 3);
    await rejectsWith(client.experimental.tasks.listTasks('not-a-cursor', reqOpts), [ErrorCode.InvalidParams],
      'tasks/list with a bad cursor');
  });

keelTest('required tool task_sleep: client.callTool fails (SDK -32600 or keel -32601); callToolStream runs it as a task',
  [], async (k) => {
    const { client } = k;
    await client.listTools(undefined, reqOpts);
    await rejectsWith(client.callTool({ name: 'task_sleep', arguments: { ms: 5 } }, undefined, reqOpts),
      [ErrorCode.InvalidRequest, ErrorCode.MethodNotFound], 'callTool(task_sleep)');
    // Past the SDK's own guard, keel itself refuses the plain call with -32601.
    const before = k.sent.filter((m) => m.method === 'tools/call').length;
    await rejectsWith(client.request({ method: 'tools/call', params: { name: 'task_sleep', arguments: { ms: 5 } } },
      CallToolResultSchema, reqOpts), [ErrorCode.MethodNotFound], 'plain tools/call task_sleep sent to keel');
    assert.equal(k.sent.filter((m) => m.method === 'tools/call').length, before + 1);

    const messages = await collect(client.experimental.tasks.callToolStream(
      { name: 'task_sleep', arguments: { ms: 5 } }, CallToolResultSchema, reqOpts));
    assert.equal(messages[0].type, 'taskCreated', JSON.stringify(messages));
    assert.equal(messages.at(-1).type, 'result', JSON.stringify(messages));
    assert.deepEqual(messages.at(-1).result.content, [{ type: 'text', text: 'slept 5 ms' }]);
    assert.equal(relatedTaskId(messages.at(-1).result), messages[0].task.taskId);
  });

keelTest('low-level client.request(tools/call, CreateTaskResultSchema, {task:{ttl}}): params.task on the wire, a working Task back',
  [], async (k) => {
    const { client } = k;
    const r = await client.request({ method: 'tools/call', params: { name: 'sleep', arguments: { ms: 10 } } },
      CreateTaskResultSchema, { ...reqOpts, task: { ttl: 30000 } });
    assertTaskShape(r.task, 'CreateTaskResult.task');
    assert.equal(r.task.status, 'working');
    assert.equal(r.task.ttl, 30000);
    const call = k.sent.find((m) => m.method === 'tools/call');
    assert.deepEqual(call.params.task, { ttl: 30000 });
    const result = await client.experimental.tasks.getTaskResult(r.task.taskId, CallToolResultSchema, reqOpts);
    assert.deepEqual(result.content, [{ type: 'text', text: 'slept 10 ms' }]);
    assert.equal(relatedTaskId(result), r.task.taskId);
    // notifications/tasks/status for the completion carries the full Task.
    const note = await waitSeen(k, (m) => m.method === 'notifications/tasks/status' &&
      m.params?.taskId === r.task.taskId && m.params?.status === 'completed', 'completed status notification');
    assertTaskShape(note.params, 'notifications/tasks/status');
  });

keelTest('task augmentation of a forbidden tool (echo) rejects -32601; callToolStream on it is a plain call',
  [], async (k) => {
    const { client } = k;
    await rejectsWith(client.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      CreateTaskResultSchema, { ...reqOpts, task: { ttl: 60000 } }), [ErrorCode.MethodNotFound], 'echo as a task');
    await client.listTools(undefined, reqOpts);
    const messages = await collect(client.experimental.tasks.callToolStream(
      { name: 'echo', arguments: { text: 'plain' } }, CallToolResultSchema, reqOpts));
    assert.deepEqual(messages.map((m) => m.type), ['result'], JSON.stringify(messages));
    assert.deepEqual(messages[0].result.content, [{ type: 'text', text: 'plain' }]);
    assert.equal((await client.experimental.tasks.listTasks(undefined, reqOpts)).tasks.length, 0);
  });
