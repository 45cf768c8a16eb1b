// Durable tasks across keel processes (TASK-2): one database file, two keel processes in
// sequence. The first is killed (SIGKILL, or KEEL_TEST_CRASH_AT makes it kill itself) or
// closes on stdin EOF while tasks run; the second starts on the same file and must have made
// every task the first left "working" terminal before it serves any request.
// Run: node --test tests/interop/tasks_restart.test.mjs   (scripts/test runs it too)
// The binary is $KEEL_BINARY, else <repo>/build/keel, started with --test-tools and --db.
// The tests speak raw JSON-RPC lines over pipes, so they decide when each line is written
// and can watch a process die.
//
// Every test uses a database file in its own fresh temporary directory. Waits are for
// conditions only (an answer, an exit, a status seen by tasks/get), with generous bounds;
// nothing here asserts timing. When the sqlite3 CLI is installed, the stdin-EOF test also
// reads the tasks table directly between the two processes; without it that check is skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';

import { HAVE_SQLITE3, KEEL, freshDir as makeDir, sql, startRawKeel, withTimeout } from './raw_keel.mjs';

const TEST_TIMEOUT_MS = 60000;
const WAIT_TIMEOUT_MS = 20000;
const RELATED = 'io.modelcontextprotocol/related-task';
const REPLAYED = 'dev.keel/replayed';
const EXISTING = 'dev.keel/existing-task';
const RESTARTED = 'keel restarted while this task was running';
const OPENING_BALANCE = 100000;
const TASK_ID = /^[0-9a-f]{32}$/;

// A real wait, only between polls of a condition; never an assertion.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freshDir(t) {
  return makeDir(t, 'keel-tasks-restart-');
}

function waitFor(promise, what) {
  return withTimeout(promise, what, WAIT_TIMEOUT_MS);
}

// keel as a child process speaking raw JSON-RPC lines on --db `db`. `k.request()` sends a
// request and resolves with its response (a JSON-RPC error resolves too); `k.exited`
// resolves with { code, signal }; k.messages is everything keel wrote, in order.
function startKeel(t, { db, args = [], env = {} }) {
  const k = startRawKeel(t, {
    binary: KEEL, args: ['--test-tools', '--db', db, '--task-poll-interval', '50', ...args],
    env, cwd: dirname(db), clientName: 'tasks-restart', waitMs: WAIT_TIMEOUT_MS,
  });
  const initialize = k.initialize;
  k.initialize = async () => {
    const result = await initialize();
    assert.ok(result.capabilities?.tasks, `no tasks capability: ${JSON.stringify(result.capabilities)}`);
    return result;
  };
  // tools/call with params.task; resolves with the raw response.
  k.createTask = (name, args, task = {}) => k.request('tools/call', { name, arguments: args, task });
  // The result of a request that must succeed.
  k.ok = async (method, params) => {
    const r = await k.request(method, params);
    assert.ok(r.result, `${method} ${JSON.stringify(params)}: JSON-RPC error ${JSON.stringify(r.error)}`);
    return r.result;
  };
  k.getTask = (taskId) => k.ok('tasks/get', { taskId });
  // Polls tasks/get until pred holds (bounded).
  k.pollTask = async (taskId, pred, what) => {
    const t0 = performance.now();
    let last;
    while (performance.now() - t0 < WAIT_TIMEOUT_MS) {
      last = await k.getTask(taskId);
      if (pred(last)) return last;
      await sleep(20);
    }
    assert.fail(`task ${taskId} never became ${what}; last: ${JSON.stringify(last)}`);
  };
  // Every task of tasks/list, following nextCursor.
  k.listAll = async () => {
    const all = [];
    let cursor;
    for (let pages = 0; pages < 100; ++pages) {
      const page = await k.ok('tasks/list', cursor === undefined ? {} : { cursor });
      all.push(...page.tasks);
      cursor = page.nextCursor;
      if (cursor === undefined) return all;
    }
    assert.fail('tasks/list does not end');
  };
  k.kill = async () => {
    process.kill(k.pid, 'SIGKILL');
    return waitFor(k.exited, 'keel to die');
  };
  return k;
}

// The Task of a CreateTaskResult response.
function created(response, what) {
  assert.ok(response.result?.task, `${what}: no CreateTaskResult: ${JSON.stringify(response)}`);
  const task = response.result.task;
  assert.match(task.taskId, TASK_ID, `${what}: taskId`);
  assert.equal(task.status, 'working', `${what}: status`);
  return task;
}

// keel's stderr is appended to a failure's message.
async function withStderr(keels, fn) {
  try {
    await fn();
  } catch (err) {
    if (err instanceof Error) {
      for (const [name, k] of Object.entries(keels())) {
        if (k?.stderr.trim()) err.message += `\n--- ${name} stderr (tail) ---\n${k.stderr.slice(-4000)}`;
      }
    }
    throw err;
  }
}

// The interrupted result keel stores for a task a dead keel left working.
function assertInterrupted(result, taskId, effect, what) {
  assert.equal(result.isError, true, `${what}: ${JSON.stringify(result)}`);
  const error = result.structuredContent?.error;
  assert.equal(error?.type, 'interrupted', `${what}: ${JSON.stringify(result)}`);
  assert.equal(error?.reason, 'server_restarted', what);
  assert.equal(error?.effect, effect, what);
  assert.equal(error?.taskId, taskId, what);
  assert.ok(Array.isArray(result.content) && result.content.length > 0, `${what}: an error result should explain itself`);
  assert.deepEqual(result._meta?.[RELATED], { taskId }, `${what}: _meta ${JSON.stringify(result._meta)}`);
}

test('TASK-2: SIGKILL while a task runs; the next keel fails it as interrupted (effect unknown); completed and cancelled tasks are kept',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    let first = null, second = null;
    await withStderr(() => ({ first, second }), async () => {
      first = startKeel(t, { db });
      await first.initialize();
      const done = created(await first.createTask('sleep', { ms: 1 }, { ttl: 600000 }), 'short sleep');
      const doneResult = await first.ok('tasks/result', { taskId: done.taskId });
      assert.deepEqual(doneResult.content, [{ type: 'text', text: 'slept 1 ms' }]);

      const stopped = created(await first.createTask('latch_wait', { name: 'restart-cancel' }, { ttl: 600000 }), 'latch_wait');
      const cancel = await first.ok('tasks/cancel', { taskId: stopped.taskId });
      assert.equal(cancel.status, 'cancelled');
      // The work stops at once (a plain latch_wait honours the cancel): wait for that phase.
      await first.pollTask(stopped.taskId, (x) => /cancel_observed/.test(x.statusMessage ?? ''), 'cancel_observed');

      const long = created(await first.createTask('sleep', { ms: 60000 }, { ttl: 600000 }), 'long sleep');
      assert.equal((await first.getTask(long.taskId)).status, 'working');
      const exit = await first.kill();
      assert.equal(exit.signal, 'SIGKILL');

      second = startKeel(t, { db });
      await second.initialize();
      const failed = await second.getTask(long.taskId);
      assert.equal(failed.status, 'failed', JSON.stringify(failed));
      assert.ok(failed.statusMessage?.startsWith(RESTARTED), `statusMessage: ${failed.statusMessage}`);
      assert.equal(failed.createdAt, long.createdAt);
      assert.equal(failed.ttl, 600000);
      const interrupted = await second.ok('tasks/result', { taskId: long.taskId });
      assertInterrupted(interrupted, long.taskId, 'unknown', 'tasks/result of the interrupted sleep');

      const kept = await second.getTask(done.taskId);
      assert.equal(kept.status, 'completed', JSON.stringify(kept));
      const keptResult = await second.ok('tasks/result', { taskId: done.taskId });
      assert.deepEqual(keptResult, doneResult, 'the completed task\'s result survives the restart');
      assert.deepEqual(keptResult._meta?.[RELATED], { taskId: done.taskId });

      const stillCancelled = await second.getTask(stopped.taskId);
      assert.equal(stillCancelled.status, 'cancelled', JSON.stringify(stillCancelled));
      const noResult = await second.request('tasks/result', { taskId: stopped.taskId });
      assert.ok(noResult.error, `tasks/result of a cancelled task must be an error: ${JSON.stringify(noResult)}`);
      assert.ok([-32603, -32602].includes(noResult.error.code), JSON.stringify(noResult.error));
      assert.equal(noResult.error.data?.status, 'cancelled', JSON.stringify(noResult.error));

      const listed = await second.listAll();
      assert.deepEqual(listed.map((x) => x.taskId), [done.taskId, stopped.taskId, long.taskId]);
      assert.deepEqual(listed.map((x) => x.status), ['completed', 'cancelled', 'failed']);

      const cancelFailed = await second.request('tasks/cancel', { taskId: long.taskId });
      assert.equal(cancelFailed.error?.code, -32602, JSON.stringify(cancelFailed));
      assert.match(cancelFailed.error.message, /terminal status 'failed'/);
      // No status notification for a task settled at start-up: nobody was there to hear it.
      assert.equal(second.messages.filter((m) => m.method === 'notifications/tasks/status').length, 0,
        JSON.stringify(second.messages.filter((m) => m.method === 'notifications/tasks/status')));
      assert.equal((await second.close()).code, 0);
    });
  });

test('TASK-2: a working task from a dead keel is settled before the first request is served: the first tasks/list already sees it failed',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    let first = null, second = null;
    await withStderr(() => ({ first, second }), async () => {
      first = startKeel(t, { db });
      await first.initialize();
      const long = created(await first.createTask('task_sleep', { ms: 60000 }), 'task_sleep');
      await first.kill();
      second = startKeel(t, { db });
      await second.initialize();
      // The very first request after initialize already sees it failed.
      const listed = await second.listAll();
      assert.deepEqual(listed.map((x) => [x.taskId, x.status]), [[long.taskId, 'failed']]);
      assertInterrupted(await second.ok('tasks/result', { taskId: long.taskId }), long.taskId, 'unknown', 'task_sleep');
      assert.equal((await second.close()).code, 0);
    });
  });

// charge_account as a task, with an idempotency key, and keel killing itself at a step.
const CRASHES = [
  // After COMMIT, before the answer: the charge happened; the restart recovers its result.
  { step: 'before_result', happened: true },
  // Inside the ledger's transaction, before COMMIT: nothing happened.
  { step: 'before_effect', happened: false },
  { step: 'after_effect', happened: false },
];

for (const { step, happened } of CRASHES) {
  test(`TASK-2: a keyed charge_account task, keel killed at ${step}; after a restart the task is ` +
    `${happened ? 'completed with the charge recovered from the ledger, and a retry replays it' : 'failed with effect did_not_happen, and a retry executes once'}`,
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    const key = `task-crash-${step}`;
    const args = { account: `task-acct-${step}`, cents: 1200, idempotencyKey: key };
    let first = null, second = null;
    await withStderr(() => ({ first, second }), async () => {
      first = startKeel(t, { db, env: { KEEL_TEST_CRASH_AT: step } });
      await first.initialize();
      // The CreateTaskResult is written once the task row is committed, and the work (which
      // kills keel) starts then too: the answer may or may not get out before the kill.
      const answer = first.createTask('charge_account', args, { ttl: 600000 });
      answer.catch(() => {});
      const exit = await waitFor(first.exited, 'keel to kill itself');
      assert.equal(exit.signal, 'SIGKILL', `keel must die by SIGKILL, got ${JSON.stringify(exit)}`);
      assert.match(first.stderr, new RegExp(`KEEL_TEST_CRASH_AT=${step}`));
      const maybe = first.messages.find((m) => m.id === 2);
      assert.equal(first.messages.filter((m) => m.method === 'notifications/tasks/status').length, 0,
        'no status change before the crash');

      second = startKeel(t, { db });
      await second.initialize();
      const listed = await second.listAll();
      assert.equal(listed.length, 1, `tasks/list: ${JSON.stringify(listed)}`);
      const taskId = listed[0].taskId;
      if (maybe) assert.equal(maybe.result?.task?.taskId, taskId, `the answer before the crash: ${JSON.stringify(maybe)}`);
      const task = await second.getTask(taskId);
      assert.ok(task.statusMessage?.startsWith(RESTARTED), `statusMessage: ${task.statusMessage}`);
      const result = await second.ok('tasks/result', { taskId });
      let chargeId;
      if (happened) {
        assert.equal(task.status, 'completed', JSON.stringify(task));
        assert.notEqual(result.isError, true, JSON.stringify(result));
        chargeId = result.structuredContent?.charge_id;
        assert.equal(typeof chargeId, 'string', `no charge_id: ${JSON.stringify(result)}`);
        assert.ok(chargeId.length > 0);
        assert.equal(result.structuredContent.balance_cents, OPENING_BALANCE - 1200, JSON.stringify(result));
        assert.deepEqual(result._meta?.[RELATED], { taskId });
      } else {
        assert.equal(task.status, 'failed', JSON.stringify(task));
        assertInterrupted(result, taskId, 'did_not_happen', `tasks/result after ${step}`);
      }

      // A plain retry with the same key: a replay of the recovered charge, or the first execution.
      const retry = await second.ok('tools/call', { name: 'charge_account', arguments: args });
      assert.notEqual(retry.isError, true, JSON.stringify(retry));
      assert.equal(retry._meta?.[REPLAYED] === true, happened, `retry _meta: ${JSON.stringify(retry._meta)}`);
      if (happened) assert.equal(retry.structuredContent.charge_id, chargeId);
      assert.equal(retry.structuredContent.balance_cents, OPENING_BALANCE - 1200, 'the balance fell once');
      const lookup = (await second.ok('tools/call', { name: 'ledger_lookup', arguments: { tool: 'charge_account', key } })).structuredContent;
      assert.equal(lookup.state, 'committed');
      assert.equal(lookup.executions, 1);
      assert.equal(lookup.result.structuredContent.charge_id, retry.structuredContent.charge_id);
      if (happened) {
        // The same key and arguments as a task again: the existing task, not a new charge.
        const again = await second.createTask('charge_account', args, { ttl: 600000 });
        assert.equal(again.result?.task?.taskId, taskId, JSON.stringify(again));
        assert.equal(again.result._meta?.[EXISTING], true, JSON.stringify(again.result));
      }
      assert.equal((await second.close()).code, 0);
      if (HAVE_SQLITE3) {
        assert.equal(sql(db, `SELECT count(*) FROM charges WHERE idempotency_key = '${key}'`), '1');
        assert.equal(sql(db, 'PRAGMA integrity_check'), 'ok');
      }
    });
  });
}

test('TASK-2: closing stdin: a task that finishes within --shutdown-grace is stored completed; one still running stays working until the next keel fails it',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    let first = null, second = null;
    await withStderr(() => ({ first, second }), async () => {
      first = startKeel(t, { db, args: ['--shutdown-grace', '1500'] });
      await first.initialize();
      const quick = created(await first.createTask('sleep', { ms: 50 }, { ttl: 600000 }), 'quick sleep');
      const long = created(await first.createTask('sleep', { ms: 60000 }, { ttl: 600000 }), 'long sleep');
      // Both are running (or about to): close stdin now, without waiting for either.
      const exit = await first.close();
      assert.equal(exit.signal, null, `keel was killed: ${JSON.stringify(exit)}`);
      assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}`);

      if (HAVE_SQLITE3) {
        const rows = sql(db, `SELECT task_id || ' ' || status FROM tasks ORDER BY seq`).split('\n');
        assert.deepEqual(rows, [`${quick.taskId} completed`, `${long.taskId} working`],
          'in the file after the graceful exit');
      } else {
        t.diagnostic('sqlite3 CLI not installed: the tasks table was not read between the processes');
      }

      second = startKeel(t, { db });
      await second.initialize();
      const quickNow = await second.getTask(quick.taskId);
      assert.equal(quickNow.status, 'completed', JSON.stringify(quickNow));
      assert.ok(!quickNow.statusMessage?.startsWith(RESTARTED), `a finished task is not recovered: ${quickNow.statusMessage}`);
      const quickResult = await second.ok('tasks/result', { taskId: quick.taskId });
      assert.deepEqual(quickResult.content, [{ type: 'text', text: 'slept 50 ms' }]);
      assert.deepEqual(quickResult._meta?.[RELATED], { taskId: quick.taskId });

      const longNow = await second.getTask(long.taskId);
      assert.equal(longNow.status, 'failed', JSON.stringify(longNow));
      assert.ok(longNow.statusMessage?.startsWith(RESTARTED), `statusMessage: ${longNow.statusMessage}`);
      assertInterrupted(await second.ok('tasks/result', { taskId: long.taskId }), long.taskId, 'unknown',
        'tasks/result of the task left working');
      assert.equal((await second.close()).code, 0);
      if (HAVE_SQLITE3) {
        assert.equal(sql(db, `SELECT status FROM tasks WHERE task_id = '${long.taskId}'`), 'failed');
      }
    });
  });
