// The soak's check that a task's terminal status never changes (scripts/soak_support,
// TASK-1) notes statuses in the order keel's lines came. A tasks/get answer and a
// notifications/tasks/status read in one chunk were noted in the wrong order before: the
// notification as its line was parsed, the answer only when the awaiting scenario resumed,
// so "working, then completed" was reported as "completed, then working" (a soak run on
// 2026-12-04 failed on it).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Keel } from '../../scripts/soak_support/keel_conn.mjs';
import { violations } from '../../scripts/soak_support/findings.mjs';

function offlineKeel() {
  const k = new Keel('T', '/bin/false', [], {});
  k.proc = { send() {}, write() {} };  // never started: lines are fed by hand
  return k;
}

const line = (obj) => JSON.stringify({ jsonrpc: '2.0', ...obj });
const task = (taskId, status) => ({ taskId, status, createdAt: '', lastUpdatedAt: '', ttl: 30000 });
const changed = () => violations.get('task_status_changed_after_terminal')?.count ?? 0;

test('an answer and a status notification in one read are noted in the order they came', async () => {
  const k = offlineKeel();
  const before = changed();
  const get = k.request('tasks/get', { taskId: 't1' });
  k.onLine(line({ id: get.id, result: task('t1', 'working') }));
  k.onLine(line({ method: 'notifications/tasks/status', params: task('t1', 'completed') }));
  await get.promise;  // the scenario resumes only now
  assert.equal(changed(), before);
  assert.equal(k.taskTerminal.get('t1'), 'completed');
});

test('a terminal status that really changes is still a violation', async () => {
  const k = offlineKeel();
  const before = changed();
  k.onLine(line({ method: 'notifications/tasks/status', params: task('t2', 'completed') }));
  const get = k.request('tasks/get', { taskId: 't2' });
  k.onLine(line({ id: get.id, result: task('t2', 'working') }));
  await get.promise;
  assert.equal(changed(), before + 1);
  const cancel = k.request('tasks/cancel', { taskId: 't2' });
  k.onLine(line({ id: cancel.id, result: task('t2', 'cancelled') }));
  assert.equal(changed(), before + 2);
});
