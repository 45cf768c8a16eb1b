// Tasks (tools/call with params.task): poll, wait, cancel, cancel the wait, time out,
// finish after a cancel, list. A task's terminal status never changes (TASK-1); its
// result and progress carry the related-task _meta.
//
// taskWorkload(w) -> {taskScenario(rng)}.
import { sleep } from './clock.mjs';
import { short, tally, violation } from './findings.mjs';
import { RELATED, TASK_STATUSES, TERMINAL, answer, call, expectTimeout, ids, textOf } from './keel_conn.mjs';

export function taskWorkload(w) {
  const { A, route, tag, calls } = w;

  function createdTask(msg, what) {
    const task = msg?.result?.task;
    if (!task?.taskId || task.status !== 'working' || msg.result._meta?.[RELATED]?.taskId !== task.taskId) {
      if (msg?.error?.data?.type === 'too_many_tasks') return null;
      violation('task_create', `${what}: ${short(msg)}`);
      return null;
    }
    return task.taskId;
  }

  async function taskGet(k, rng, taskId) {
    const r = await answer(k.request('tasks/get', { taskId }, { rng, kind: 'tasks/get' }));
    const t = r?.result;
    if (!t || t.taskId !== taskId || !TASK_STATUSES.has(t.status) || t._meta?.[RELATED]?.taskId !== taskId) {
      violation('tasks_get', `${taskId}: ${short(r)}`);
      return null;
    }
    return t;  // its status was noted as it came (KeelConn.onResponse)
  }

  async function list(k, rng, kind) {
    const r = await answer(k.request('tasks/list', {}, { rng, kind: 'tasks/list' }));
    if (!Array.isArray(r?.result?.tasks) || r.result.tasks.some((t) => !t.taskId || !TASK_STATUSES.has(t.status))) {
      violation('tasks_list', short(r));
    }
    tally('task', 'list');
  }

  // Polled with tasks/get until it ends, then its result.
  async function poll(k, rng, kind) {
    const ms = rng.int(20, 400);
    const useProgress = rng.chance(0.5);
    const token = `${tag}-tp-${ids.next}`;
    const msg = await answer(useProgress
      ? call(k, 'progress', { steps: 5, interval_ms: Math.floor(ms / 5) }, { rng, kind: 'task', task: { ttl: 30000 }, progressToken: token })
      : call(k, 'sleep', { ms }, { rng, kind: 'task', task: { ttl: 30000 } }));
    const taskId = createdTask(msg, 'poll');
    if (!taskId) { tally('task', 'not_created'); return; }
    let last;
    for (let i = 0; i < 200; i++) {
      last = await taskGet(k, rng, taskId);
      if (!last || TERMINAL.has(last.status)) break;
      await sleep(rng.int(20, 80));
    }
    const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
    const want = useProgress ? 'done 5 steps' : `slept ${ms} ms`;
    if (last?.status === 'completed' && textOf(r) !== want) violation('task_result', `${taskId}: ${short(r)}`);
    if (r?.result?._meta?.[RELATED]?.taskId !== taskId && r?.result) violation('task_result_without_related_task', short(r));
    tally('task', `poll_${last?.status}`);
  }

  // tasks/result waits for the end: the result, or (idle) the idle clock's timeout.
  async function waitOrIdle(k, rng, kind) {
    const ms = kind === 'idle' ? rng.int(1300, 1600) : rng.int(20, 600);
    const taskId = createdTask(await answer(call(k, 'task_sleep', { ms }, { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
    if (kind === 'wait') {
      if (textOf(r) !== `slept ${ms} ms` && !expectTimeout('task', r, ['idle', 'max'])) violation('task_result', `${taskId}: ${short(r)}`);
      tally('task', 'wait');
    } else {
      const got = expectTimeout('task', r, ['idle', 'max']);
      if (!got) violation('timeout_missed', `task_sleep ${ms} with a 1000 ms idle clock: ${short(r)}`);
      tally('task', `idle_${got ?? 'missed'}`);
    }
  }

  // tasks/cancel: cancelled at once and forever, its result an error; or refused once it ended.
  async function cancel(k, rng, kind) {
    const taskId = createdTask(await answer(call(k, 'task_sleep', { ms: rng.int(300, 3000) }, { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    await sleep(rng.int(0, 300));
    const c = await answer(k.request('tasks/cancel', { taskId }, { rng, kind: 'tasks/cancel' }));
    if (c?.result) {
      if (c.result.status !== 'cancelled') violation('task_cancel', `${taskId}: ${short(c)}`);
      const g = await taskGet(k, rng, taskId);
      if (g && g.status !== 'cancelled') violation('task_status_changed_after_terminal', `${taskId}: get after cancel ${g.status}`);
      const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
      if (r?.error?.code !== -32603 || r.error.data?.status !== 'cancelled') violation('task_cancelled_result', `${taskId}: ${short(r)}`);
      tally('task', 'cancelled');
    } else if (c?.error?.code === -32602) {
      const g = await taskGet(k, rng, taskId);  // it had finished (or timed out) first
      if (g && !TERMINAL.has(g.status)) violation('task_cancel', `${taskId}: refused but ${g.status}`);
      tally('task', 'cancel_too_late');
    } else violation('task_cancel', `${taskId}: ${short(c)}`);
  }

  // notifications/cancelled for a tasks/result request drops that answer, not the task.
  async function cancelWait(k, rng, kind) {
    const ms = rng.int(200, 700);
    const taskId = createdTask(await answer(call(k, 'task_sleep', { ms }, { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    const waiting = k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result_cancelled' });
    await sleep(rng.int(0, 100));
    k.cancel(waiting);
    const r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
    if (textOf(r) !== `slept ${ms} ms` && !expectTimeout('task', r, ['idle', 'max'])) violation('task_result', `${taskId}: ${short(r)}`);
    tally('task', 'cancel_wait');
  }

  // A tool that ignores the cancel and finishes anyway: the task stays cancelled, and keel
  // records that the work ended after the cancel (TASK-1).
  async function late(k, rng, kind) {
    const name = `${tag}-late-${++calls.latch}`;
    const taskId = createdTask(await answer(call(k, 'latch_wait', { name, ignore_cancel: true, checkpoint: false },
      { rng, kind: 'task', task: { ttl: 30000 } })), kind);
    if (!taskId) { tally('task', 'not_created'); return; }
    await sleep(rng.int(10, 100));
    const c = await answer(k.request('tasks/cancel', { taskId }, { rng, kind: 'tasks/cancel' }));
    if (c?.result?.status !== 'cancelled') violation('task_cancel', `${taskId}: ${short(c)}`);
    await answer(call(k, 'latch_release', { name }, { rng, kind: 'latch_release' }));
    // finished_after_cancel once the released work returns; observed if it never started.
    let r;
    for (let i = 0; i < 100; i++) {
      r = await answer(k.request('tasks/result', { taskId }, { rng, kind: 'tasks/result' }));
      if (r?.error?.data?.cancelPhase && r.error.data.cancelPhase !== 'requested') break;
      await sleep(30);
    }
    const phase = r?.error?.data?.cancelPhase;
    if (r?.error?.data?.status !== 'cancelled' || !['finished_after_cancel', 'observed'].includes(phase)) {
      violation('task_late_outcome', `${taskId}: ${short(r)}`);
    }
    if (phase === 'finished_after_cancel' && textOf({ result: r.error.data.lateOutcome }) !== `released ${name}`) {
      violation('task_late_outcome', `${taskId}: late outcome ${short(r.error.data.lateOutcome)}`);
    }
    const g = await taskGet(k, rng, taskId);
    if (g && g.status !== 'cancelled') violation('task_status_changed_after_terminal', `${taskId}: ${g.status}`);
    tally('task', `late_${phase}`);
  }

  const SCENARIOS = { list, poll, wait: waitOrIdle, idle: waitOrIdle, cancel, cancel_wait: cancelWait, late };

  async function taskScenario(rng) {
    const kind = rng.weighted({ poll: 3, wait: 3, cancel: 3, cancel_wait: 2, idle: 1, late: 1, list: 1 });
    const k = kind === 'late' ? A : route(rng);
    calls.task++;
    return SCENARIOS[kind](k, rng, kind);
  }

  return { taskScenario };
}
