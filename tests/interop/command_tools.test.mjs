// Command-backed tools (CAN-2, IDEM-5) against the real binary: a catalog entry with `run` makes
// keel run a child process per attempt. The contract tested is that of
// server/catalog/command_spec.h, server/tools/command_tool.h, server/tools/command_result.h,
// server/durable/remote_write.h and server/runtime/process_runner.h:
//  - cancellation and timeouts kill the child's whole process group (SIGTERM, then SIGKILL
//    after run.killGraceMs), and the child is reaped (CAN-2);
//  - fd-3 progress reaches the client and resets the idle clock (PRG-1, TMO-1);
//  - the exit status classifies the failure and the retry executor acts on it, inside the
//    call's budget (RET-1, BUD-2);
//  - a keyed write runs at most once per key: an ambiguous outcome is reconciled by the
//    entry's `lookup`, also after a crash (IDEM-5);
//  - the child cannot reach the protocol stream, its output is capped, its argv is never
//    a shell string, its environment is exactly the allow-list plus KEEL_* (DC-1).
// The fixture commands are POSIX sh scripts in fixtures/commands/ (each says what it does);
// every test writes its catalog into a fresh temporary directory and starts its own keel.
// Run: node --test tests/interop/command_tools.test.mjs   (KEEL_BINARY picks the binary)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KEEL, freshDir, startRawKeel, withTimeout } from './raw_keel.mjs';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'commands');
const fixture = (name) => join(FIXTURES, name);

const KILL_GRACE_MS = 200;
// How long after the kill starts (a cancel read, a timeout answered) every process of the
// group may take to be gone: the kill grace, plus scheduling slack on a loaded 2-core box.
const GONE_WITHIN_MS = KILL_GRACE_MS + 1500;
const FAST_RETRY = { baseMs: 10, capMs: 20, minUsefulAttemptMs: 50 };

// A real wait, used only to poll for an effect outside the protocol (a file a command
// writes, a process that dies), each time with a bounded deadline.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function tool(name, fields) {
  return {
    name,
    description: `interop test command tool ${name}`,
    inputSchema: { type: 'object' },
    effect: 'read',
    ...fields,
  };
}

// Writes the catalog into `dir` and starts keel on it (with a trace file), initialized.
async function startCommandKeel(t, dir, tools, { env = {}, db } = {}) {
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ tools }, null, 2));
  const traceFile = join(dir, 'trace.jsonl');
  const k = startRawKeel(t, {
    binary: KEEL,
    args: ['--catalog', catalog, '--db', db ?? join(dir, 'keel.db'), '--trace-file', traceFile,
      '--log-level', 'info'],
    env,
    clientName: 'command-tools',
  });
  try {
    await k.initialize();
  } catch (e) {
    await withTimeout(k.exited, 'keel to exit', 5000).catch(() => {});
    throw new Error(`${e.message}; keel's stderr:\n${k.stderr}`);
  }
  k.traceFile = traceFile;
  return k;
}

const call = (k, name, args = {}, extra = {}) => k.request('tools/call', { name, arguments: args, ...extra });
const keyed = (key) => ({ _meta: { 'dev.keel/idempotency-key': key } });

// A request with an id of the test's choosing (0, a string); resolves with the response.
const requestWithId = (k, id, method, params, waitMs = 20000) => k.request(method, params, { id, waitMs });

const isResponse = (m) => 'id' in m && ('result' in m || 'error' in m);
const responsesFor = (k, id) => k.messages.filter((m) => isResponse(m) && m.id === id);
// keel's error details: structuredContent.error, or _meta["dev.keel/error"] for a tool with an
// outputSchema they do not match (what SDK clients need, see ForOutputSchema in server/catalog/tool.h).
const errorOf = (response) =>
  response.result?.structuredContent?.error ?? response.result?._meta?.['dev.keel/error'];
const show = (x) => JSON.stringify(x);

function linesOf(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
}

async function waitFor(what, ms, predicate) {
  const t0 = performance.now();
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);  // a poll interval: what we wait for happens in other processes
  }
}

// The trace records of the call answered as `response`, after keel has exited (the trace is
// complete then).
function traceOf(k, response) {
  const records = readFileSync(k.traceFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const start = records.find((r) => r.event === 'tool.call.start' &&
    r.attributes['jsonrpc.request.id'] === String(response.id));
  assert.ok(start, `no tool.call.start for request ${response.id} in the trace`);
  const mine = records.filter((r) => r.attributes['keel.call.id'] === start.attributes['keel.call.id']);
  return {
    attempts: mine.filter((r) => r.event === 'tool.attempt.start').length,
    scheduled: mine.filter((r) => r.event === 'retry.scheduled'),
    suppressed: mine.filter((r) => r.event === 'retry.suppressed'),
  };
}

// /proc/<pid>/stat: {state, ppid}, or null when there is no such process.
function procState(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ESRCH') return null;
    throw e;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], ppid: Number(fields[1]) };
}

function signalable(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if (e.code === 'ESRCH') return false;
    throw e;
  }
}

// Dead: kill(pid, 0) fails, or the process is a zombie (it has exited; only its parent's
// wait is missing).
const dead = (pid) => !signalable(pid) || procState(pid)?.state === 'Z';

// Waits (bounded) until the command's child is gone for good and its grandchild is dead, then
// checks nothing is left for keel to reap.
//
// Why a real wait: keel kills the group asynchronously (SIGTERM, SIGKILL after killGraceMs)
// and nothing on the protocol says when it is done (a cancelled call is never answered; a
// timeout is answered by the call's clock, not by the kill).
//
// The child's parent is keel, so it must disappear completely: a zombie of it would be keel
// failing to reap. The grandchild is reparented when the child dies, to PID 1 (or a
// subreaper); in this sandbox PID 1 does not reap orphans, so a killed grandchild may stay a
// zombie of PID 1 forever. That is dead, and not keel's to reap: it is only required not to
// be a zombie of keel's.
async function assertGroupGone(t, k, child, grandchild, ms) {
  const t0 = performance.now();
  while ((procState(child) !== null || !dead(grandchild)) && performance.now() - t0 < ms) {
    await sleep(20);  // a poll interval: death after a signal is asynchronous, in the kernel
  }
  const waited = Math.round(performance.now() - t0);
  t.diagnostic(`the group was gone ${waited} ms after the kill began`);
  const c = procState(child);
  assert.equal(c, null, `the command (pid ${child}) still exists ${waited} ms later: ${show(c)} (keel is ${k.pid})`);
  const g = procState(grandchild);
  assert.ok(dead(grandchild), `the grandchild (pid ${grandchild}, ignores SIGTERM) still runs ${waited} ms later: ${show(g)}`);
  if (g !== null) {
    assert.equal(g.state, 'Z', show(g));
    assert.notEqual(g.ppid, k.pid, `the grandchild is a zombie of keel's: ${show(g)}`);
  }
  return waited;
}

// The pids group.sh wrote. If a test fails with them still running, they are SIGKILLed (by
// pid) after it, so a failing keel leaves nothing behind.
async function pidsOf(t, dir) {
  const read = (name) => {
    const file = join(dir, name);
    return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0;
  };
  const pids = await waitFor('the command and its grandchild to write their pids', 10000, () => {
    const both = [read('child.pid'), read('grandchild.pid')];
    return both[0] > 0 && both[1] > 0 ? both : null;
  });
  t.after(() => {
    for (const pid of pids) {
      try { if (!dead(pid)) process.kill(pid, 'SIGKILL'); } catch (e) { if (e.code !== 'ESRCH') throw e; }
    }
  });
  return pids;
}

// 1. Cancel and timeouts kill the whole group -------------------------------------------

const GROUP_MODES = {
  hold: 'holding the pipes',
  detach: 'detached from the pipes',
};

for (const [mode, how] of Object.entries(GROUP_MODES)) {
  test(`notifications/cancelled kills the command's whole process group within killGraceMs, a SIGTERM-ignoring grandchild ${how} included; no zombie; the call is never answered (CAN-2)`, async (t) => {
    const dir = freshDir(t, 'keel-cmd-cancel-');
    const k = await startCommandKeel(t, dir, [tool('grouped', {
      timeouts: { idleMs: 0, maxMs: 30000, attemptMs: 30000 },
      retry: { maxAttempts: 1 },
      run: { command: [fixture('group.sh'), dir, mode], killGraceMs: KILL_GRACE_MS },
    })]);
    const id = `cancel-${mode}`;
    k.send({ id, method: 'tools/call', params: { name: 'grouped', arguments: {} } });
    const [child, grandchild] = await pidsOf(t, dir);
    assert.ok(signalable(child) && signalable(grandchild), 'both run before the cancel');

    k.send({ method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } });
    await assertGroupGone(t, k, child, grandchild, GONE_WITHIN_MS);

    // The worker has returned (its child is reaped); whatever it produced was dropped. keel
    // handles input in order: once the ping is answered, a response to the call would be in.
    const ping = await k.request('ping', {});
    assert.deepEqual(ping.result, {});
    assert.deepEqual(responsesFor(k, id), [], `keel answered the cancelled call: ${show(responsesFor(k, id))}`);
    await k.close();
    assert.deepEqual(responsesFor(k, id), [], 'answered at shutdown');
  });
}

for (const [mode, how] of Object.entries(GROUP_MODES)) {
  test(`the attempt timeout (attemptMs 400) answers attempt_timeout and kills the whole group, a SIGTERM-ignoring grandchild ${how} included; no zombie (CAN-2, RET-1)`, async (t) => {
    const dir = freshDir(t, 'keel-cmd-attempt-');
    const k = await startCommandKeel(t, dir, [tool('grouped', {
      timeouts: { idleMs: 0, maxMs: 10000, attemptMs: 400 },
      retry: { maxAttempts: 1 },
      run: { command: [fixture('group.sh'), dir, mode], killGraceMs: KILL_GRACE_MS },
    })]);
    const answer = call(k, 'grouped');
    const [child, grandchild] = await pidsOf(t, dir);
    const response = await answer;
    const error = errorOf(response);
    assert.equal(error?.type, 'attempt_timeout', show(response));
    assert.equal(error.failure_class, 'ambiguous');
    await assertGroupGone(t, k, child, grandchild, GONE_WITHIN_MS);
  });
}

test('the max timeout (maxMs 600) answers a timeout and kills the whole group, a SIGTERM-ignoring grandchild holding the pipes included; no zombie (CAN-2)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-max-');
  const k = await startCommandKeel(t, dir, [tool('grouped', {
    timeouts: { idleMs: 0, maxMs: 600 },
    retry: { maxAttempts: 1 },
    run: { command: [fixture('group.sh'), dir, 'hold'], killGraceMs: KILL_GRACE_MS },
  })]);
  const answer = call(k, 'grouped');
  const [child, grandchild] = await pidsOf(t, dir);
  const response = await answer;
  const error = errorOf(response);
  // The attempt's deadline is min(call deadline, attemptMs) = the call's: the call's clock
  // answers at once (layer max) while the worker still waits out the kill grace.
  assert.equal(error?.type, 'timeout', show(response));
  assert.equal(error.layer, 'max');
  assert.equal(error.limit_ms, 600);
  await assertGroupGone(t, k, child, grandchild, GONE_WITHIN_MS);
  assert.equal(responsesFor(k, response.id).length, 1);
});

// 2. Progress over fd 3 resets the idle clock --------------------------------------------

const PROGRESS_TIMEOUTS = { idleMs: 600, maxMs: 10000 };

test('fd-3 progress resets the idle clock: 2 s of progress lines every 200 ms under idleMs 600 -> success, and the client gets them as strictly increasing notifications/progress under its token (PRG-1, TMO-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-progress-');
  const k = await startCommandKeel(t, dir, [tool('progressing', {
    timeouts: PROGRESS_TIMEOUTS,
    run: { command: [fixture('progress.sh'), 'fd3'] },
  })]);
  const t0 = performance.now();
  const response = await call(k, 'progressing', {}, { _meta: { progressToken: 'tok-fd3' } });
  const took = performance.now() - t0;
  assert.equal(response.result?.isError, undefined, show(response));
  assert.deepEqual(response.result.structuredContent, { done: true, steps: 10 });
  assert.ok(took >= 1800, `finished in ${took.toFixed(0)} ms: the command works for 2 s`);
  const progress = k.messages.filter((m) => m.method === 'notifications/progress')
    .map((m) => m.params);
  assert.ok(progress.length >= 5, `only ${progress.length} progress notifications: ${show(progress)}`);
  for (const p of progress) {
    assert.equal(p.progressToken, 'tok-fd3');
    assert.equal(p.total, 10);
    assert.equal(p.message, `step ${p.progress}`);
  }
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i].progress > progress[i - 1].progress, `not strictly increasing: ${show(progress)}`);
  }
  const at = k.messages.findIndex((m) => isResponse(m) && m.id === response.id);
  assert.ok(k.messages.slice(at + 1).every((m) => m.method !== 'notifications/progress'), 'progress after the answer');
});

test('the same 2 s of work without progress ends with the idle timeout (idleMs 600) as an isError result, not a success, and the command is killed long before it would have finished (TMO-1, CAN-2)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-quiet-');
  const k = await startCommandKeel(t, dir, [tool('quiet', {
    timeouts: PROGRESS_TIMEOUTS,
    run: { command: [fixture('progress.sh'), 'quiet', dir], killGraceMs: KILL_GRACE_MS },
  })]);
  const t0 = performance.now();
  const response = await call(k, 'quiet', {}, { _meta: { progressToken: 'tok-quiet' } });
  const took = performance.now() - t0;
  const error = errorOf(response);
  assert.equal(response.result?.isError, true, show(response));
  assert.equal(error?.type, 'timeout', show(response));
  assert.equal(error.layer, 'idle');
  assert.equal(error.limit_ms, 600);
  assert.ok(took < 1500, `answered after ${took.toFixed(0)} ms: the idle clock should end it near 600 ms`);
  assert.equal(k.messages.filter((m) => m.method === 'notifications/progress').length, 0);
  // The command dies on SIGTERM at once; left alone it would run until about 2000 ms.
  const child = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
  await waitFor('the command to be killed and reaped', 1900 - took, () => procState(child) === null);
});

test('a cancelled command that reports progress on fd 3 sends nothing more: after the ping that follows the cancel, no progress for its token and no answer, ever (CAN-2, PRG-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-progcancel-');
  const k = await startCommandKeel(t, dir, [tool('progressing', {
    timeouts: PROGRESS_TIMEOUTS,
    run: { command: [fixture('progress.sh'), 'fd3'], killGraceMs: KILL_GRACE_MS },
  })]);
  const id = 'prog-cancel';
  k.send({ id, method: 'tools/call', params: { name: 'progressing', arguments: {}, _meta: { progressToken: 'tok-c' } } });
  await waitFor('the first progress notification', 5000,
    () => k.messages.some((m) => m.method === 'notifications/progress' && m.params.progressToken === 'tok-c'));
  k.send({ method: 'notifications/cancelled', params: { requestId: id } });
  const ping = await k.request('ping', {});
  const after = k.messages.findIndex((m) => isResponse(m) && m.id === ping.id);
  // Gives a command that kept running time to report again (it reports every 200 ms).
  await sleep(600);
  await k.request('ping', {});
  const late = k.messages.slice(after + 1).filter((m) => m.params?.progressToken === 'tok-c');
  assert.deepEqual(late, [], 'progress after the cancel was handled');
  assert.deepEqual(responsesFor(k, id), []);
});

// 3. Exit statuses, their classes and the retry executor ---------------------------------

// One tool whose command (outcome_seq.sh) ends attempt n with outcomes[n-1]; returns the
// answer, the number of runs (the counter file) and the call's trace, after keel exited.
async function runOutcomes(t, outcomes, fields = {}) {
  const dir = freshDir(t, 'keel-cmd-exit-');
  const counter = join(dir, 'counter');
  const k = await startCommandKeel(t, dir, [tool('seq', {
    timeouts: { idleMs: 0, maxMs: 10000, attemptMs: 3000 },
    retry: { maxAttempts: 3, ...FAST_RETRY },
    ...fields,
    run: { command: [fixture('outcome_seq.sh'), counter, ...outcomes], ...(fields.run ?? {}) },
  })]);
  const response = await call(k, 'seq');
  await k.close();
  return { response, runs: linesOf(counter), trace: traceOf(k, response) };
}

function assertSuccessAfter(out, attempts) {
  assert.equal(out.response.result?.isError, undefined, show(out.response));
  assert.deepEqual(out.response.result.structuredContent, { ok: true, run: attempts });
  assert.equal(out.runs.length, attempts, `runs: ${show(out.runs)}`);
  assert.deepEqual(out.runs, Array.from({ length: attempts }, (_, i) => `attempt=${i + 1}`), 'KEEL_ATTEMPT counts the attempts');
  assert.equal(out.trace.attempts, attempts);
  assert.equal(out.trace.scheduled.length, attempts - 1);
}

test('a read whose command exits 75 (EX_TEMPFAIL) and then 0 succeeds after exactly 2 attempts: rejected_transient is retried (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['75', '0']);
  assertSuccessAfter(out, 2);
  assert.equal(out.trace.scheduled[0].attributes['error.type'], 'command_tempfail');
  assert.equal(out.trace.scheduled[0].attributes['keel.failure.class'], 'rejected_transient');
});

test('a read whose command exits 69 (EX_UNAVAILABLE) and then 0 succeeds after exactly 2 attempts: not_sent is retried (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['69', '0']);
  assertSuccessAfter(out, 2);
  assert.equal(out.trace.scheduled[0].attributes['error.type'], 'command_unavailable');
  assert.equal(out.trace.scheduled[0].attributes['keel.failure.class'], 'not_sent');
});

test('a read whose command exits 1 fails after exactly 1 attempt: command_failed, rejected_permanent, never retried (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['1', '0']);
  const error = errorOf(out.response);
  assert.equal(out.response.result?.isError, true, show(out.response));
  assert.equal(error?.type, 'command_failed');
  assert.equal(error.failure_class, 'rejected_permanent');
  assert.equal(error.exit_code, 1);
  assert.match(out.response.result.content[0].text, /failing with 1/, 'the output is in the text');
  assert.equal(out.runs.length, 1, `runs: ${show(out.runs)}`);
  assert.equal(out.trace.attempts, 1);
  assert.equal(out.trace.suppressed[0]?.attributes['keel.retry.reason'], 'permanent_failure');
});

test('a read whose command is killed by SIGKILL is ambiguous (command_killed) and retried: success after 2 attempts (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['kill', '0']);
  assertSuccessAfter(out, 2);
  assert.equal(out.trace.scheduled[0].attributes['error.type'], 'command_killed');
  assert.equal(out.trace.scheduled[0].attributes['keel.failure.class'], 'ambiguous');
});

test('an unsafe_write without a key whose command is killed by SIGKILL is not retried: 1 attempt, needs_reconciliation, effect unknown (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['kill', '0'], { effect: 'unsafe_write' });
  const error = errorOf(out.response);
  assert.equal(out.response.result?.isError, true, show(out.response));
  assert.equal(error?.type, 'command_killed');
  assert.equal(error.failure_class, 'ambiguous');
  assert.equal(error.signal, 9);
  assert.equal(error.needs_reconciliation, true);
  assert.equal(error.effect, 'unknown');
  assert.equal(out.runs.length, 1, `runs: ${show(out.runs)}`);
  assert.equal(out.trace.attempts, 1);
  assert.equal(out.trace.suppressed[0]?.attributes['keel.retry.reason'], 'unsafe_write_ambiguous');
});

test('an unsafe_write without a key whose command exits 75 is retried: rejected_transient means nothing happened (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['75', '0'], { effect: 'unsafe_write' });
  assertSuccessAfter(out, 2);
});

test('the catalog exitCodes mapping is honoured: "3": rejected_transient makes exit 3 retried (success after 2 attempts) (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['3', '0'], { run: { exitCodes: { 3: 'rejected_transient' } } });
  assertSuccessAfter(out, 2);
  assert.equal(out.trace.scheduled[0].attributes['keel.failure.class'], 'rejected_transient');
});

test('the catalog exitCodes mapping overrides the defaults: "75": rejected_permanent makes exit 75 final after 1 attempt (RET-1)', async (t) => {
  const out = await runOutcomes(t, ['75', '0'], { run: { exitCodes: { 75: 'rejected_permanent' } } });
  const error = errorOf(out.response);
  assert.equal(error?.failure_class, 'rejected_permanent', show(out.response));
  assert.equal(error.exit_code, 75);
  assert.equal(out.runs.length, 1, `runs: ${show(out.runs)}`);
  assert.equal(out.trace.attempts, 1);
});

test('{"error":{"status":429,"retry_after_ms":50}} on stdout (exit 0) is a failure, backend_429, retried after at least the 50 ms hint: success after 2 attempts (RET-1, BUD-2)', async (t) => {
  const out = await runOutcomes(t, ['json429=50', '0']);
  assertSuccessAfter(out, 2);
  const retry = out.trace.scheduled[0].attributes;
  assert.equal(retry['error.type'], 'backend_429');
  assert.equal(retry['keel.failure.class'], 'rejected_transient');
  assert.ok(retry['keel.retry.delay_ms'] >= 50, `delay ${retry['keel.retry.delay_ms']} ms ignores retry_after_ms 50`);
});

test('a command that keeps answering 429 with retry_after_ms 400 under a 1000 ms call budget is retried once, after exactly the hint; then 400 ms + minUsefulAttemptMs no longer fit: budget_exhausted before maxAttempts, answering the last attempt\'s failure (BUD-2, RET-1)', async (t) => {
  // delay = max(jitter <= capMs 100, hint 400) = 400. A retry needs remaining >= 400 + 200:
  // true after attempt 1 (if it ends within 400 ms), false after attempt 2 (it ends 400 ms
  // later still).
  const out = await runOutcomes(t, ['json429=400'], {
    timeouts: { idleMs: 0, maxMs: 1000, attemptMs: 1000 },
    retry: { maxAttempts: 10, baseMs: 100, capMs: 100, minUsefulAttemptMs: 200 },
  });
  const error = errorOf(out.response);
  assert.equal(error?.type, 'backend_429', show(out.response));
  assert.equal(error.retry_after_ms, 400);
  assert.equal(out.runs.length, 2, `runs: ${show(out.runs)}`);
  assert.equal(out.trace.attempts, 2);
  assert.equal(out.trace.scheduled.length, 1);
  assert.equal(out.trace.scheduled[0].attributes['keel.retry.delay_ms'], 400, 'the hint is the delay');
  assert.equal(out.trace.suppressed.length, 1);
  const suppressed = out.trace.suppressed[0].attributes;
  assert.equal(suppressed['keel.retry.reason'], 'budget_exhausted');
  assert.ok(suppressed['keel.budget.remaining_ms'] < 600, `remaining ${suppressed['keel.budget.remaining_ms']} ms`);
});

// 4. Keyed writes: at most once per key, ambiguous outcomes reconciled by lookup ---------

const JOB_SCHEMA = {
  type: 'object',
  properties: { job: { type: 'string' } },
  required: ['job'],
};

// An unsafe_write whose command is effect_write.sh MODE, with lookup.sh LOOKUP_MODE (or no
// lookup when lookupMode is null).
function restartTool(dir, mode, lookupMode, fields = {}) {
  return tool('restart', {
    inputSchema: JOB_SCHEMA,
    effect: 'unsafe_write',
    timeouts: { idleMs: 0, maxMs: 10000, attemptMs: 500 },
    retry: { maxAttempts: 2, ...FAST_RETRY },
    ...fields,
    run: {
      command: [fixture('effect_write.sh'), dir, mode],
      killGraceMs: KILL_GRACE_MS,
      ...(lookupMode === null ? {} : {
        lookup: { command: [fixture('lookup.sh'), dir, lookupMode, '{idempotency_key}'], timeoutMs: 5000 },
      }),
    },
  });
}

const LOOKED_UP = (key) => ({ restarted: true, by: 'lookup', key });

for (const [mode, how] of [['effect_then_hang', 'sleeps past attemptMs'], ['effect_then_die', 'is killed by SIGKILL']]) {
  test(`a keyed unsafe_write whose command records its effect and then ${how} is reconciled by lookup: success with the lookup's result (dev.keel/reconciled), one effect; the same key and arguments replay without running it; other arguments are refused (IDEM-5)`, async (t) => {
    const dir = freshDir(t, 'keel-cmd-reconcile-');
    const k = await startCommandKeel(t, dir, [restartTool(dir, mode, 'effects')]);
    const first = await call(k, 'restart', { job: 'web' }, keyed('k-1'));
    assert.equal(first.result?.isError, undefined, show(first));
    assert.deepEqual(first.result.structuredContent, LOOKED_UP('k-1'));
    assert.equal(first.result._meta?.['dev.keel/reconciled'], true, show(first));
    assert.deepEqual(linesOf(join(dir, 'effects')), ['k-1'], 'exactly one effect');
    assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the command ran once');
    assert.deepEqual(linesOf(join(dir, 'lookups')), ['k-1']);

    const again = await call(k, 'restart', { job: 'web' }, keyed('k-1'));
    assert.equal(again.result?.isError, undefined, show(again));
    assert.deepEqual(again.result.structuredContent, LOOKED_UP('k-1'));
    assert.equal(again.result._meta?.['dev.keel/replayed'], true, show(again));
    assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the replay ran nothing');

    const other = await call(k, 'restart', { job: 'db' }, keyed('k-1'));
    assert.equal(errorOf(other)?.type, 'idempotency_key_mismatch', show(other));
    assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the mismatch ran nothing');
    assert.deepEqual(linesOf(join(dir, 'effects')), ['k-1']);
  });
}

test('a keyed unsafe_write whose first attempt hangs without effect and whose lookup says {"happened":false} is retried and runs: one effect, the second attempt\'s result (IDEM-5, RET-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-notdone-');
  const k = await startCommandKeel(t, dir, [restartTool(dir, 'hang_first', 'effects')]);
  const response = await call(k, 'restart', { job: 'web' }, keyed('k-2'));
  assert.equal(response.result?.isError, undefined, show(response));
  assert.deepEqual(response.result.structuredContent, { restarted: true, by: 'command', attempt: 2 });
  assert.deepEqual(linesOf(join(dir, 'runs')), ['attempt=1 key=k-2', 'attempt=2 key=k-2']);
  assert.deepEqual(linesOf(join(dir, 'effects')), ['k-2']);
  assert.deepEqual(linesOf(join(dir, 'lookups')), ['k-2'], 'one lookup, after the ambiguous attempt');
  const again = await call(k, 'restart', { job: 'web' }, keyed('k-2'));
  assert.equal(again.result._meta?.['dev.keel/replayed'], true, show(again));
  assert.equal(linesOf(join(dir, 'runs')).length, 2, 'the replay ran nothing');
  await k.close();
  const trace = traceOf(k, response);
  assert.equal(trace.attempts, 2);
  assert.equal(trace.scheduled[0]?.attributes['keel.failure.class'], 'not_sent', 'reclassed by the lookup');
});

for (const [lookupMode, how] of [['broken', 'the lookup cannot tell (exits 1)'], [null, 'there is no lookup']]) {
  test(`a keyed unsafe_write killed after its effect when ${how}: needs_reconciliation, not retried; a repeat with the same key does not run the command (IDEM-5, RET-1)`, async (t) => {
    const dir = freshDir(t, 'keel-cmd-unknown-');
    const k = await startCommandKeel(t, dir, [restartTool(dir, 'effect_then_die', lookupMode)]);
    const first = await call(k, 'restart', { job: 'web' }, keyed('k-3'));
    const error = errorOf(first);
    assert.equal(first.result?.isError, true, show(first));
    assert.equal(error?.type, 'command_killed');
    assert.equal(error.needs_reconciliation, true);
    assert.equal(error.effect, 'unknown');
    assert.equal(linesOf(join(dir, 'runs')).length, 1, 'not retried');

    const again = await call(k, 'restart', { job: 'web' }, keyed('k-3'));
    assert.equal(again.result?.isError, true, show(again));
    assert.equal(errorOf(again)?.type, 'needs_reconciliation', show(again));
    assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the repeat ran nothing');
    assert.deepEqual(linesOf(join(dir, 'effects')), ['k-3']);
    await k.close();
    assert.equal(traceOf(k, first).attempts, 1);
  });
}

test('a keyed idempotent_write killed after its effect when the lookup cannot tell is retried under its key (a repeat is harmless by declaration): the second attempt\'s result (IDEM-5, RET-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-idem-');
  const k = await startCommandKeel(t, dir, [restartTool(dir, 'effect_then_die_first', 'broken', {
    effect: 'idempotent_write',
    idempotency: { keyComponents: ['job'] },
  })]);
  const response = await call(k, 'restart', { job: 'web' }, keyed('k-idem'));
  assert.equal(response.result?.isError, undefined, show(response));
  assert.deepEqual(response.result.structuredContent, { restarted: true, by: 'command', attempt: 2 });
  assert.deepEqual(linesOf(join(dir, 'runs')), ['attempt=1 key=k-idem', 'attempt=2 key=k-idem']);
  const again = await call(k, 'restart', { job: 'web' }, keyed('k-idem'));
  assert.equal(again.result._meta?.['dev.keel/replayed'], true, show(again));
  assert.equal(linesOf(join(dir, 'runs')).length, 2, 'the replay ran nothing');
});

test('two concurrent calls with the same key run the command once: each answer is the one result (the later replayed) or idempotency_in_progress, never a second effect (IDEM-5)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-race-');
  const k = await startCommandKeel(t, dir, [restartTool(dir, 'effect_then_wait', 'effects', {
    timeouts: { idleMs: 0, maxMs: 5000, attemptMs: 3000 },
  })]);
  const answers = await Promise.all([
    call(k, 'restart', { job: 'web' }, keyed('k-race')),
    call(k, 'restart', { job: 'web' }, keyed('k-race')),
  ]);
  t.diagnostic(show(answers.map((a) => a.result?._meta ?? errorOf(a)?.type)));
  const results = answers.filter((a) => a.result?.isError === undefined);
  assert.ok(results.length >= 1, show(answers));
  for (const a of results) {
    assert.deepEqual(a.result.structuredContent, { restarted: true, by: 'command', attempt: 1 }, show(a));
  }
  assert.equal(results.filter((a) => a.result._meta?.['dev.keel/replayed'] !== true).length, 1,
    `exactly one answer is the original, the other a replay: ${show(answers)}`);
  for (const a of answers.filter((x) => x.result?.isError)) {
    assert.equal(errorOf(a)?.type, 'idempotency_in_progress', show(a));
  }
  assert.deepEqual(linesOf(join(dir, 'effects')), ['k-race'], 'one effect');
  assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the command ran once');
});

test('{idempotency_key} in a write\'s command expands to the call\'s key as one argv element; without a key the call is invalid_arguments and nothing runs (IDEM-5)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-keyarg-');
  const k = await startCommandKeel(t, dir, [tool('keyed_cmd', {
    effect: 'unsafe_write',
    run: { command: [fixture('inspect.sh'), dir, '--key={idempotency_key}'] },
  })]);
  const key = 'key with spaces; $(id)';
  const ok = await call(k, 'keyed_cmd', {}, keyed(key));
  assert.equal(ok.result?.isError, undefined, show(ok));
  assert.equal(readFileSync(join(dir, 'arg1'), 'utf8'), `--key=${key}`);
  const argcBefore = readFileSync(join(dir, 'argc'), 'utf8');
  const stdinBefore = readFileSync(join(dir, 'stdin'), 'utf8');
  const none = await call(k, 'keyed_cmd', { marker: 'second call' });
  assert.equal(errorOf(none)?.type, 'invalid_arguments', show(none));
  assert.match(none.result.content[0].text, /needs an idempotency key/);
  assert.equal(readFileSync(join(dir, 'argc'), 'utf8'), argcBefore);
  assert.equal(readFileSync(join(dir, 'stdin'), 'utf8'), stdinBefore, 'the command did not run');
});

// 5. Start-up reconciliation --------------------------------------------------------------

// Starts keel on `db`, sends a keyed restart, waits until `ready` (the command got as far as
// the test wants), then SIGKILLs keel. keel dies without killing its command, as in a crash:
// the test stops the command's group itself (its id is the command's pid) and waits until it
// is gone.
async function crashMidWrite(t, dir, db, tools, key, ready) {
  const first = await startCommandKeel(t, dir, tools, { db });
  const id = `crash-${key}`;
  first.send({ id, method: 'tools/call', params: { name: 'restart', arguments: { job: 'web' }, ...keyed(key) } });
  await waitFor('the command to get going', 10000, ready);
  const child = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
  first.child.kill('SIGKILL');
  await withTimeout(first.exited, 'the first keel to die', 5000);
  try { process.kill(-child, 'SIGKILL'); } catch (e) { if (e.code !== 'ESRCH') throw e; }
  await waitFor('the orphaned command to die', 5000, () => dead(child));
  assert.deepEqual(responsesFor(first, id), []);
}

const CRASH_TIMEOUTS = { timeouts: { idleMs: 0, maxMs: 30000, attemptMs: 30000 } };

test('after keel is SIGKILLed mid-write (the command recorded its effect), a new keel on the same --db settles the key at start-up by lookup, and the same key and arguments replay the looked-up result; the command never runs again (IDEM-5)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-crash-');
  const db = join(dir, 'keel.db');
  const tools = [restartTool(dir, 'effect_then_hang', 'effects', CRASH_TIMEOUTS)];
  await crashMidWrite(t, dir, db, tools, 'k-crash', () => linesOf(join(dir, 'effects')).length === 1);

  const second = await startCommandKeel(t, dir, tools, { db });
  // Before any call, the start-up pass looks the abandoned key up and settles it (it logs
  // that at --log-level info).
  await waitFor('the start-up reconciliation to settle the key', 10000,
    () => /key 'k-crash': reconciled at start-up: it happened/.test(second.stderr));
  assert.deepEqual(linesOf(join(dir, 'lookups')), ['k-crash'], 'looked up at start-up, before any call');
  const response = await call(second, 'restart', { job: 'web' }, keyed('k-crash'));
  assert.equal(response.result?.isError, undefined, show(response));
  assert.deepEqual(response.result.structuredContent, LOOKED_UP('k-crash'));
  assert.equal(response.result._meta?.['dev.keel/replayed'], true, `settled at start-up, so replayed: ${show(response)}`);
  assert.deepEqual(linesOf(join(dir, 'effects')), ['k-crash'], 'the effect count stays 1');
  assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the command never ran again');
  assert.deepEqual(linesOf(join(dir, 'lookups')), ['k-crash'], 'looked up once');
});

test('after keel is SIGKILLed mid-write before any effect, the start-up lookup says it did not happen and drops the key: the same key and arguments then run the command, once (IDEM-5)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-crash0-');
  const db = join(dir, 'keel.db');
  const tools = [restartTool(dir, 'hang_once', 'effects', CRASH_TIMEOUTS)];
  await crashMidWrite(t, dir, db, tools, 'k-crash0', () => existsSync(join(dir, 'hung')));
  assert.deepEqual(linesOf(join(dir, 'effects')), []);

  const second = await startCommandKeel(t, dir, tools, { db });
  await waitFor('the start-up reconciliation to drop the key', 10000,
    () => /key 'k-crash0': reconciled at start-up: it did not happen/.test(second.stderr));
  const response = await call(second, 'restart', { job: 'web' }, keyed('k-crash0'));
  assert.equal(response.result?.isError, undefined, show(response));
  assert.deepEqual(response.result.structuredContent, { restarted: true, by: 'command', attempt: 1 });
  assert.deepEqual(linesOf(join(dir, 'effects')), ['k-crash0'], 'one effect');
  assert.equal(linesOf(join(dir, 'runs')).length, 2, 'the crashed run and this one');
  const again = await call(second, 'restart', { job: 'web' }, keyed('k-crash0'));
  assert.equal(again.result._meta?.['dev.keel/replayed'], true, show(again));
  assert.equal(linesOf(join(dir, 'runs')).length, 2, 'the replay ran nothing');
});

// IDEM-5: keel is SIGKILLed 0.5 s into a 2 s keyed write; the command runs on (its
// process group outlives keel). The next keel's start-up lookup says {"happened": false} —
// true at that moment, but the write is still on its way — so it must not release the key.
test('a keyed unsafe_write whose keel is SIGKILLed 0.5 s into its 2 s command runs once: while the orphaned command runs, the new keel\'s start-up lookup does not release the key and the retry with the same key gets idempotency_in_progress without running anything; once the command has finished, the retry gets the looked-up result (IDEM-3, IDEM-5)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-orphan-');
  const db = join(dir, 'keel.db');
  const key = 'k-orphan';
  const tools = [tool('restart', {
    inputSchema: JOB_SCHEMA,
    effect: 'unsafe_write',
    timeouts: { idleMs: 0, maxMs: 30000, attemptMs: 30000 },
    retry: { maxAttempts: 2, ...FAST_RETRY },
    run: {
      command: [fixture('orphan_write.sh'), dir],
      killGraceMs: KILL_GRACE_MS,
      lookup: { command: [fixture('lookup.sh'), dir, 'effects', '{idempotency_key}'], timeoutMs: 5000 },
    },
  })];
  const pidIn = (name) => Number(readFileSync(join(dir, name), 'utf8'));
  const first = await startCommandKeel(t, dir, tools, { db });
  const sent = performance.now();
  first.send({ id: 'orphan', method: 'tools/call', params: { name: 'restart', arguments: { job: 'web' }, ...keyed(key) } });
  await waitFor('the command and its background job to start', 10000,
    () => existsSync(join(dir, 'child.pid')) && existsSync(join(dir, 'worker.pid')));
  const [child, worker] = [pidIn('child.pid'), pidIn('worker.pid')];
  const groups = new Set([child]);  // the orphan's, and a second run's if the key was released
  t.after(() => {
    for (const group of groups) {
      try { process.kill(-group, 'SIGKILL'); } catch (e) { if (e.code !== 'ESRCH') throw e; }
    }
  });
  await sleep(Math.max(0, 500 - (performance.now() - sent)));  // 0.5 s into the write
  first.child.kill('SIGKILL');
  await withTimeout(first.exited, 'the first keel to die', 5000);
  assert.ok(!dead(child) && !dead(worker), 'the command runs on after keel died');

  const second = await startCommandKeel(t, dir, tools, { db });
  await waitFor('the start-up pass to look the key up', 10000,
    () => /key 'k-orphan': (reconciled at start-up|left by .* may still run)/.test(second.stderr));
  assert.doesNotMatch(second.stderr, /key 'k-orphan': reconciled at start-up: it did not happen/,
    'the key was released while its command still ran');
  assert.deepEqual(linesOf(join(dir, 'lookups')), [key], 'looked up at start-up');

  // The retry, while the orphan still runs: answered, and nothing ran (were the key released,
  // a second run would start and wait for DIR/go).
  let retry = null;
  second.request('tools/call', { name: 'restart', arguments: { job: 'web' }, ...keyed(key) })
    .then((r) => { retry = r; }, (e) => { retry = { failed: String(e) }; });
  await waitFor('the retry\'s answer (or a second run)', 20000,
    () => retry !== null || linesOf(join(dir, 'runs')).length > 1);
  groups.add(pidIn('child.pid'));
  assert.equal(linesOf(join(dir, 'runs')).length, 1, `the write ran a second time: ${show(linesOf(join(dir, 'runs')))}`);
  assert.equal(retry.result?.isError, true, show(retry));
  assert.ok(['idempotency_in_progress', 'needs_reconciliation'].includes(errorOf(retry)?.type), show(retry));
  assert.ok(!dead(worker), 'the orphan was still running when the retry was answered');
  assert.deepEqual(linesOf(join(dir, 'effects')), []);

  // The orphan finishes its write; the next retry looks it up and gets its result.
  writeFileSync(join(dir, 'go'), '');
  await waitFor('the orphaned command to record its effect and end', 20000,
    () => linesOf(join(dir, 'effects')).length === 1 && dead(worker) && dead(child));
  const settled = await call(second, 'restart', { job: 'web' }, keyed(key));
  assert.equal(settled.result?.isError, undefined, show(settled));
  assert.deepEqual(settled.result.structuredContent, LOOKED_UP(key));
  assert.equal(settled.result._meta?.['dev.keel/reconciled'], true, show(settled));
  const again = await call(second, 'restart', { job: 'web' }, keyed(key));
  assert.equal(again.result._meta?.['dev.keel/replayed'], true, show(again));
  assert.deepEqual(linesOf(join(dir, 'effects')), [key], 'exactly one execution');
  assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the command ran once');
});

test('a keyed unsafe_write cancelled after its command recorded the effect is still looked up and settled: the cancel is never answered, and the same key and arguments then get the looked-up result without running the command again (IDEM-5, CAN-2)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-cancelwrite-');
  const k = await startCommandKeel(t, dir, [restartTool(dir, 'effect_then_hang', 'effects', {
    timeouts: { idleMs: 0, maxMs: 30000, attemptMs: 30000 },
  })]);
  const id = 'cancel-write';
  k.send({ id, method: 'tools/call', params: { name: 'restart', arguments: { job: 'web' }, ...keyed('k-cw') } });
  await waitFor('the effect', 10000, () => linesOf(join(dir, 'effects')).length === 1);
  k.send({ method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } });
  // The lookup runs after the kill, whether or not anyone still waits (remote_write.h).
  await waitFor('the lookup after the cancel', 10000, () => linesOf(join(dir, 'lookups')).includes('k-cw'));
  // Until the worker has recorded the lookup's outcome, the key is still claimed: the repeat
  // may get idempotency_in_progress (rejected_transient, which keel retries itself).
  const again = await call(k, 'restart', { job: 'web' }, keyed('k-cw'));
  assert.equal(again.result?.isError, undefined, show(again));
  assert.deepEqual(again.result.structuredContent, LOOKED_UP('k-cw'));
  assert.equal(again.result._meta?.['dev.keel/replayed'], true, show(again));
  assert.deepEqual(linesOf(join(dir, 'effects')), ['k-cw']);
  assert.equal(linesOf(join(dir, 'runs')).length, 1, 'the command ran once');
  await k.close();
  assert.deepEqual(responsesFor(k, id), [], `the cancelled call was answered: ${show(responsesFor(k, id))}`);
});

// 6. The protocol stream is keel's only ----------------------------------------------------

test('a command writing garbage and fake JSON-RPC to stdout, stderr and fds 4..20 cannot reach keel\'s protocol stream: every line keel writes is JSON-RPC, no id 99, the garbage is in the result text; the command has fds 0-3 only (DC-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-noisy-');
  const k = await startCommandKeel(t, dir, [tool('noisy', { run: { command: [fixture('noisy.sh'), dir] } })]);
  const response = await call(k, 'noisy');
  await k.request('ping', {});
  await k.close();

  const lines = k.stdout.split('\n');
  assert.equal(lines.pop(), '', 'keel\'s output ends with a newline');
  for (const line of lines) {
    const msg = JSON.parse(line);
    assert.equal(msg.jsonrpc, '2.0', line);
    assert.notEqual(msg.id, 99, `a child's fake response reached the client: ${line}`);
    assert.ok(isResponse(msg) || typeof msg.method === 'string', line);
  }
  assert.equal(k.messages.filter((m) => m.params?.data === 'fake').length, 0, 'the fake notification reached the client');
  assert.equal(response.result?.isError, undefined, show(response));
  const text = response.result.content[0].text;
  assert.match(text, /garbage: not json at all \{\{\{/);
  assert.ok(text.includes('{"jsonrpc":"2.0","id":99,"result":{}}'), text);
  assert.ok(text.includes('\u0001\u0002 control bytes'), show(text));
  assert.ok(!text.includes('stderr garbage'), 'stderr never reaches the client');

  const fds = linesOf(join(dir, 'fds')).map((l) => l.match(/ (\d+) -> (.*)$/)).filter(Boolean)
    .map(([, fd, target]) => [Number(fd), target]);
  assert.deepEqual(fds.filter(([fd]) => fd <= 3).map(([fd]) => fd), [0, 1, 2, 3], show(fds));
  for (const [fd, target] of fds) {
    if (fd > 3) assert.equal(target, fixture('noisy.sh'), `fd ${fd} of keel's leaked into the command: ${target}`);
  }
  assert.match(fds.find(([fd]) => fd === 3)[1], /^pipe:/, 'fd 3 is the progress pipe');
});

// 7. Output cap -------------------------------------------------------------------------------

test('3 MiB of output with maxOutputBytes 65536 is cut to 64 KiB plus the marker "[keel: output cut at 65536 bytes"; keel stays responsive (DC-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-big-');
  const k = await startCommandKeel(t, dir, [tool('big', {
    run: { command: [fixture('big_output.sh')], maxOutputBytes: 65536 },
  })]);
  const [response, ping] = await Promise.all([call(k, 'big'), k.request('ping', {})]);
  assert.deepEqual(ping.result, {});
  assert.equal(response.result?.isError, undefined, show(response).slice(0, 500));
  const text = response.result.content[0].text;
  const marker = '[keel: output cut at 65536 bytes';
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `no marker in ${show(text.slice(-300))}`);
  assert.equal(text.slice(0, at).replace(/\n$/, ''), 'a'.repeat(65536), 'the first 65536 bytes, then the marker');
  assert.ok(text.length <= 65536 + 200, `result text is ${text.length} characters`);
  assert.deepEqual((await k.request('ping', {})).result, {});
});

// Argv, stdin, environment, cwd -----------------------------------------------------------

test('argument values reach the command verbatim, each as one argv element (no shell: "x; touch ...", "$(id)", quotes, newlines stay literal); non-strings as compact JSON; {{ }} are literal braces; stdin is the arguments JSON (DC-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-argv-');
  const pwned = join(dir, 'pwned');
  const k = await startCommandKeel(t, dir, [tool('inspect', {
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' }, n: { type: 'integer' }, obj: { type: 'object' } },
      required: ['text', 'n', 'obj'],
    },
    run: { command: [fixture('inspect.sh'), dir, '{text}', '--opt={text}', '{n}', '{obj}', '{{literal}}', 'plain'] },
  })]);
  const text = `x; touch ${pwned} $(touch ${pwned}) \`touch ${pwned}\` "dq" 'sq' \\ * ?\nsecond line $(id)`;
  const args = { text, n: 5, obj: { a: [1, 'b'] } };
  const response = await call(k, 'inspect', args);
  assert.equal(response.result?.isError, undefined, show(response));
  const arg = (i) => readFileSync(join(dir, `arg${i}`), 'utf8');
  assert.equal(readFileSync(join(dir, 'argc'), 'utf8').trim(), '6');
  assert.equal(arg(1), text);
  assert.equal(arg(2), `--opt=${text}`);
  assert.equal(arg(3), '5');
  assert.equal(arg(4), '{"a":[1,"b"]}');
  assert.equal(arg(5), '{literal}');
  assert.equal(arg(6), 'plain');
  assert.equal(existsSync(pwned), false, 'a shell ran the argument');
  const stdin = readFileSync(join(dir, 'stdin'), 'utf8');
  assert.ok(stdin.endsWith('\n') && stdin.indexOf('\n') === stdin.length - 1, `stdin is one line: ${show(stdin)}`);
  assert.deepEqual(JSON.parse(stdin), args);
  assert.equal(readFileSync(join(dir, 'cwd'), 'utf8').trim(), realpathSync(dir), 'cwd defaults to the catalog\'s directory');
});

function envOf(dir) {
  return Object.fromEntries(readFileSync(join(dir, 'env'), 'utf8').split('\0').filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

test('the command\'s environment is the allow-list plus KEEL_*: KEEL_IDEMPOTENCY_KEY, KEEL_ATTEMPT, KEEL_DEADLINE_MS > 0, KEEL_REQUEST_ID = the JSON-RPC id (0, and a string as JSON); variables not allowed are absent (IDEM-5, RET-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-env-');
  const writeDir = join(dir, 'w');
  const readDir = join(dir, 'r');
  for (const d of [writeDir, readDir]) mkdirSync(d);
  const k = await startCommandKeel(t, dir, [
    tool('env_write', {
      effect: 'unsafe_write',
      timeouts: { idleMs: 0, maxMs: 10000, attemptMs: 4000 },
      run: {
        command: [fixture('inspect.sh'), writeDir],
        env: { pass: ['PATH', 'PASSED_VAR'], set: { FIXED: 'fixed value', PASSED_VAR: 'set wins' } },
      },
    }),
    tool('env_read', { run: { command: [fixture('inspect.sh'), readDir] } }),
  ], { env: { SECRET_TOKEN: 'hunter2', PASSED_VAR: 'from keel', HOME: '/home/keel-test' } });

  const w = await requestWithId(k, 0, 'tools/call', { name: 'env_write', arguments: {}, ...keyed('env-key') });
  assert.equal(w.result?.isError, undefined, show(w));
  const we = envOf(writeDir);
  assert.equal(we.KEEL_IDEMPOTENCY_KEY, 'env-key');
  assert.equal(we.KEEL_ATTEMPT, '1');
  assert.equal(we.KEEL_REQUEST_ID, '0', 'id 0 is a real id');
  assert.equal(we.KEEL_TOOL, 'env_write');
  assert.ok(we.KEEL_INTENT_ID, 'KEEL_INTENT_ID');
  assert.equal(we.KEEL_ATTEMPT_ID, `${we.KEEL_INTENT_ID}/1`);
  const deadline = Number(we.KEEL_DEADLINE_MS);
  assert.ok(Number.isInteger(deadline) && deadline > 0 && deadline <= 4000, `KEEL_DEADLINE_MS ${we.KEEL_DEADLINE_MS}`);
  assert.equal(we.FIXED, 'fixed value');
  assert.equal(we.PASSED_VAR, 'set wins', 'env.set wins over env.pass');
  assert.equal(we.PATH, process.env.PATH);
  assert.equal(we.SECRET_TOKEN, undefined, 'a variable outside the allow-list leaked');
  assert.equal(we.HOME, undefined, 'env.pass replaces the default list');
  assert.equal(we.KEEL_TASK_ID, undefined);

  const r = await requestWithId(k, 'req-a', 'tools/call', { name: 'env_read', arguments: {} });
  assert.equal(r.result?.isError, undefined, show(r));
  const re = envOf(readDir);
  assert.equal(re.KEEL_REQUEST_ID, '"req-a"', 'a string id as JSON text');
  assert.equal(re.KEEL_IDEMPOTENCY_KEY, undefined, 'a read has no key');
  assert.equal(re.HOME, '/home/keel-test', 'HOME is in the default list');
  assert.equal(re.PATH, process.env.PATH);
  assert.equal(re.SECRET_TOKEN, undefined, 'a variable outside the default list leaked');
  assert.equal(re.PASSED_VAR, undefined, 'a variable outside the default list leaked');
  const keelVars = Object.keys(re).filter((name) => name.startsWith('KEEL_')).sort();
  assert.deepEqual(keelVars, ['KEEL_ATTEMPT', 'KEEL_ATTEMPT_ID', 'KEEL_DEADLINE_MS', 'KEEL_INTENT_ID',
    'KEEL_REQUEST_ID', 'KEEL_TOOL']);
});

// outputSchema ------------------------------------------------------------------------------

test('output that does not match the outputSchema (or is not JSON, or not JSON under output "json") is output_invalid, rejected_permanent, not retried; matching output is structuredContent (RET-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-schema-');
  const outputSchema = {
    type: 'object',
    properties: { count: { type: 'integer' } },
    required: ['count'],
  };
  const typed = (name, printed) => tool(name, {
    outputSchema,
    retry: { maxAttempts: 3, ...FAST_RETRY },
    // A literal brace in an argv element is written twice ({{, }}): one is a reference.
    run: { command: [fixture('print.sh'), printed.replaceAll('{', '{{').replaceAll('}', '}}')] },
  });
  const k = await startCommandKeel(t, dir, [
    typed('wrong_type', '{"count": "nope"}'),
    typed('not_json', 'count: 3'),
    typed('good', '{"count": 3}'),
    tool('json_only', {
      retry: { maxAttempts: 3, ...FAST_RETRY },
      run: { command: [fixture('print.sh'), 'plain text'], output: 'json' },
    }),
  ]);
  const wrong = await call(k, 'wrong_type');
  const notJson = await call(k, 'not_json');
  const good = await call(k, 'good');
  const jsonOnly = await call(k, 'json_only');
  await k.close();
  for (const response of [wrong, notJson, jsonOnly]) {
    const error = errorOf(response);
    assert.equal(response.result?.isError, true, show(response));
    assert.equal(error?.type, 'output_invalid', show(response));
    assert.equal(error.failure_class, 'rejected_permanent');
    assert.equal(error.exit_code, 0);
    assert.equal(traceOf(k, response).attempts, 1, 'not retried');
  }
  assert.equal(good.result?.isError, undefined, show(good));
  assert.deepEqual(good.result.structuredContent, { count: 3 });
});

test('a program gone since start-up cannot start: command_not_started, rejected_permanent with effect none, 1 attempt; keel keeps serving (RET-1)', async (t) => {
  const dir = freshDir(t, 'keel-cmd-nostart-');
  // A bare name found on keel's PATH at start-up (start-up refuses one that is not), then
  // removed before the call.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const program = join(bin, 'keel-interop-soon-gone');
  writeFileSync(program, '#!/bin/sh\necho ran\n', { mode: 0o755 });
  const k = await startCommandKeel(t, dir, [tool('nostart', {
    retry: { maxAttempts: 3, ...FAST_RETRY },
    run: { command: ['keel-interop-soon-gone'] },
  })], { env: { PATH: `${bin}:${process.env.PATH}` } });
  rmSync(program);
  const response = await call(k, 'nostart');
  const error = errorOf(response);
  assert.equal(response.result?.isError, true, show(response));
  assert.equal(error?.type, 'command_not_started', show(response));
  assert.equal(error.failure_class, 'rejected_permanent');
  assert.equal(error.effect, 'none');
  assert.deepEqual((await k.request('ping', {})).result, {});
  await k.close();
  assert.equal(traceOf(k, response).attempts, 1);
});

// Catalog checks ----------------------------------------------------------------------------

function startWithCatalog(t, tools) {
  const dir = freshDir(t, 'keel-cmd-badcat-');
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ tools }));
  return spawnSync(KEEL, ['--catalog', catalog, '--db', join(dir, 'keel.db')], {
    input: '', encoding: 'utf8', timeout: 10000,
  });
}

test('a catalog with bad run fields makes keel exit 78 listing every problem on stderr: an unknown field, a missing command, a reference outside "required", lookup on a read (DC-1)', (t) => {
  const r = startWithCatalog(t, [
    tool('unknown_field', { run: { command: [fixture('print.sh')], bogus: 1 } }),
    tool('no_command', { run: { cwd: FIXTURES } }),
    tool('bad_ref', { run: { command: [fixture('print.sh'), '{nope}'] } }),
    tool('read_lookup', { run: { command: [fixture('print.sh')], lookup: { command: [fixture('lookup.sh')] } } }),
  ]);
  assert.equal(r.status, 78, `exit ${r.status} ${r.signal ?? ''}; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '', 'nothing on the protocol stream');
  assert.match(r.stderr, /tools\[0\] \(unknown_field\)\.run\.bogus: unknown field/);
  assert.match(r.stderr, /tools\[1\] \(no_command\)\.run\.command: is required/);
  assert.match(r.stderr, /tools\[2\] \(bad_ref\)\.run\.command\[1\]: \{nope\} must name a property listed in inputSchema's "required"/);
  assert.match(r.stderr, /tools\[3\] \(read_lookup\)\.run\.lookup: applies to writes only/);
});

test('a catalog whose run.command names a program not on keel\'s PATH makes keel exit 78 naming the PATH searched (DC-1)', (t) => {
  const r = startWithCatalog(t, [tool('nowhere', { run: { command: ['keel-interop-no-such-program'] } })]);
  assert.equal(r.status, 78, `exit ${r.status}; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '', 'nothing on the protocol stream');
  assert.ok(r.stderr.includes(`tools[0] (nowhere).run.command[0]: keel-interop-no-such-program is not an executable file in any directory of keel's PATH (${process.env.PATH})`), r.stderr);
  assert.match(r.stderr, /give the program's absolute path/);
});

test('a catalog whose run.command names a program that does not exist makes keel exit 78 naming the path (DC-1)', (t) => {
  const missing = fixture('no_such_command.sh');
  const r = startWithCatalog(t, [tool('missing', { run: { command: [missing] } })]);
  assert.equal(r.status, 78, `exit ${r.status}; stderr: ${r.stderr}`);
  assert.ok(r.stderr.includes(`tools[0] (missing).run.command[0]: ${missing} is not an executable file`), r.stderr);
});
