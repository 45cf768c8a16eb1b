#!/usr/bin/env node
// A short scripted MCP session through keel that shows what it guarantees.
// Usage: node scripts/demo_support/session.mjs [path/to/keel]
// Speaks raw JSON-RPC over keel's stdin/stdout (what any MCP host does) and exits
// non-zero if keel fails to show one of the guarantees.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { rpcClient, spawnLines } from '../../tests/support/keel_process.mjs';

const keelPath = process.argv[2] ?? 'build/keel';
// Short timeouts (defaults: idle 30 s, max 55 s) so the timeout steps take a second.
// A fresh ledger file, so the demo's idempotency keys never replay an earlier run's.
// The trace (--trace-file) becomes an HTML picture of the session at the end.
const demoDir = mkdtempSync(join(tmpdir(), 'keel-demo-'));
const dbPath = join(demoDir, 'keel.db');
const tracePath = join(demoDir, 'trace.jsonl');
const keelArgs = ['--test-tools', '--workers', '2', '--idle-timeout', '400', '--max-timeout', '1500', '--db', dbPath,
  '--trace-file', tracePath];
let failures = 0;

// One keel process and the JSON-RPC plumbing around it (tests/support/keel_process.mjs).
function startKeel() {
  const proc = spawnLines(keelPath, keelArgs, { stderr: 'inherit' });
  const c = rpcClient(proc);
  const send = (message) => (typeof message === 'string' ? proc.write(message + '\n') : c.send(message));
  const request = (id, method, params) => c.send({ id, method, ...(params ? { params } : {}) });
  const waitFor = (match, ms = 5000) => c.waitFor(match, { ms });
  const reply = (id) => waitFor((m) => m.id === id && !('method' in m));
  const exited = proc.exited.then((exit) => exit.code ?? exit.signal);
  return { proc, seen: c.messages, send, request, waitFor, reply, exited };
}

let keel = startKeel();
let { seen, send, request, waitFor, reply } = keel;
const call = (id, name, args, meta, task) =>
  request(id, 'tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}), ...(task ? { task } : {}) });
const text = (m) => m.result?.content?.[0]?.text;
const step = (title) => console.log(`\n== ${title}`);
const check = (ok, what) => {
  console.log(`   ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
};
const initialize = async (id) => {
  request(id, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'demo', version: '1' } });
  const init = await reply(id);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return init;
};

step('initialize: keel negotiates MCP 2025-11-25 and declares only what it implements');
const init = await initialize(0);
console.log(`   server ${init.result.serverInfo.name} ${init.result.serverInfo.version}, protocol ${init.result.protocolVersion}, capabilities ${Object.keys(init.result.capabilities).join(', ')}`);
check(init.result.protocolVersion === '2025-11-25', 'request id 0 answered with the negotiated version');

step('tools/list');
request(1, 'tools/list');
const list = await reply(1);
console.log(`   tools: ${list.result.tools.map((t) => t.name).join(', ')}`);
check(list.result.tools.every((t) => t.inputSchema.type === 'object'), 'every inputSchema is an object schema');

step('tools/call echo');
call(2, 'echo', { text: 'hello from keel' });
check(text(await reply(2)) === 'hello from keel', 'echo answers with its text');

step('bad input never kills the session');
send('{this is not json');
const parseError = await waitFor((m) => m.error?.code === -32700);
check(!('id' in parseError), `unparsable line -> ${parseError.error.code} "${parseError.error.message}" with no id`);
call(3, 'echo', { text: 42 });
const invalid = await reply(3);
check(invalid.result.isError === true, `schema violation -> tool error: "${text(invalid)}"`);

step('ping is answered while every worker is blocked');
call(10, 'latch_wait', { name: 'a' });
call(11, 'latch_wait', { name: 'b' });
request(12, 'ping');
await reply(12);
check(!seen.some((m) => m.id === 10 || m.id === 11), 'both workers busy, ping answered at once');
call(13, 'latch_release', { name: 'a' });
call(14, 'latch_release', { name: 'b' });
await reply(10);
await reply(11);
check(true, 'latch_release needs no worker slot; both calls completed');

step('progress goes out with the client\'s token, strictly increasing, before the result');
call(20, 'progress', { steps: 4, interval_ms: 60 }, { progressToken: 'p-20' });  // keel sends at most 20/s per call
await reply(20);
const progress = seen.filter((m) => m.method === 'notifications/progress' && m.params.progressToken === 'p-20');
console.log(`   progress values: ${progress.map((m) => m.params.progress).join(', ')}`);
check(progress.length > 0 && progress.every((m, i) => i === 0 || m.params.progress > progress[i - 1].params.progress), 'strictly increasing');

step('cancellation wins: a cancelled call is never answered');
call(30, 'latch_wait', { name: 'never' });
send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 30, reason: 'user pressed stop' } });
call(31, 'latch_release', { name: 'never' });
request(32, 'ping');
await reply(32);
check(!seen.some((m) => m.id === 30), 'no response for id 30 after its cancel');

step('completion wins: a cancel that arrives after the response is ignored');
call(33, 'echo', { text: 'done first' });
await reply(33);
send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 33 } });
request(34, 'ping');
await reply(34);
check(seen.filter((m) => m.id === 33).length === 1, 'exactly one response for id 33, the late cancel changed nothing');

step('a call cancelled while queued never runs');
call(35, 'latch_wait', { name: 'q1' });
call(36, 'latch_wait', { name: 'q2' });
call(37, 'progress', { steps: 3 }, { progressToken: 'p-37' });  // both workers busy: queued
send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 37 } });
call(38, 'latch_release', { name: 'q1' });
call(39, 'latch_release', { name: 'q2' });
await reply(35);
await reply(36);
request(50, 'ping');
await reply(50);
check(!seen.some((m) => m.id === 37 || m.params?.progressToken === 'p-37'), 'no response and no progress for id 37');

step('two clocks: no progress for --idle-timeout 400 ms ends a call with a timeout result');
call(51, 'sleep', { ms: 10000 });
const idle = await reply(51);
const idleError = idle.result.structuredContent?.error;
console.log(`   ${text(idle)}`);
check(idle.result.isError === true && idleError?.type === 'timeout' && idleError.layer === 'idle',
  `isError result, error ${JSON.stringify(idleError)}`);

step('two clocks: progress keeps the idle clock alive, --max-timeout 1500 ms still ends the call');
call(52, 'progress', { steps: 100, interval_ms: 100 }, { progressToken: 'p-52' });
const max = await reply(52);
const maxError = max.result.structuredContent?.error;
const ticks = seen.filter((m) => m.params?.progressToken === 'p-52').length;
check(max.result.isError === true && maxError?.layer === 'max',
  `${ticks} progress notifications, then layer ${maxError?.layer} after ${maxError?.elapsed_ms} ms`);

step('exactly once: a retried charge with the same idempotency key runs once');
call(60, 'charge_account', { account: 'acct-7', cents: 1200, idempotencyKey: 'checkout-7' });
const charged = (await reply(60)).result;
console.log(`   ${text({ result: charged })}`);
call(61, 'charge_account', { account: 'acct-7', cents: 1200, idempotencyKey: 'checkout-7' });  // the retry, new JSON-RPC id
const replay = (await reply(61)).result;
check(replay._meta?.['dev.keel/replayed'] === true && replay.structuredContent.charge_id === charged.structuredContent.charge_id,
  `retry replayed charge ${replay.structuredContent.charge_id}, balance still ${replay.structuredContent.balance_cents}`);
call(62, 'charge_account', { account: 'acct-7', cents: 9900, idempotencyKey: 'checkout-7' });
const mismatch = (await reply(62)).result;
check(mismatch.isError === true && mismatch.structuredContent.error.type === 'idempotency_key_mismatch',
  'the same key with other arguments is refused: idempotency_key_mismatch, nothing charged');
call(63, 'ledger_lookup', { tool: 'charge_account', key: 'checkout-7' });
const record = (await reply(63)).result.structuredContent;
check(record.state === 'committed' && record.executions === 1, `ledger_lookup: ${record.state}, ${record.executions} execution(s)`);
call(64, 'charge_account', { account: 'acct-8', cents: 100 });
call(65, 'charge_account', { account: 'acct-8', cents: 100 });
const unkeyed = [(await reply(64)).result, (await reply(65)).result];
check(unkeyed[0].structuredContent.charge_id !== unkeyed[1].structuredContent.charge_id,
  'without a key the same call charges twice (a new JSON-RPC id is not idempotence)');

step('retries only where safe: the effect class decides, not the client');
call(66, 'flaky_read', { counter: 'demo-read', fail: ['backend_503', 'backend_503'] });
const retried = (await reply(66)).result;
check(retried.isError !== true && retried.structuredContent.attempt === 3,
  'a read refused twice with backend_503 is retried by keel: one answer, from attempt 3');
call(67, 'flaky_write', { counter: 'demo-write', fail: ['lost_response'] });
const ambiguous = (await reply(67)).result;
check(ambiguous.isError === true && ambiguous.structuredContent.error.needs_reconciliation === true,
  'an unsafe write whose response was lost is NOT retried: the answer says needs_reconciliation');

step('durable task: tasks/cancel reads cancelled at once; keel tracks when the work really stops');
call(70, 'latch_wait', { name: 'busy', ignore_cancel: true }, null, { ttl: 600000 });
const created = (await reply(70)).result.task;
console.log(`   created task ${created.taskId}: ${created.status}, ttl ${created.ttl} ms, poll every ${created.pollInterval} ms`);
request(71, 'tasks/cancel', { taskId: created.taskId });
const cancelled = (await reply(71)).result;
check(cancelled.status === 'cancelled', `tasks/cancel -> ${cancelled.status}: "${cancelled.statusMessage}"`);
call(72, 'latch_release', { name: 'busy' });  // the tool leaves its busy stretch and reaches a checkpoint
const observed = await waitFor((m) => m.method === 'notifications/tasks/status' && m.params.taskId === created.taskId &&
  m.params.statusMessage?.includes('cancel_observed'));
check(observed.params.status === 'cancelled', `then a status notification: "${observed.params.statusMessage}"`);
request(73, 'tasks/result', { taskId: created.taskId });
const noResult = await reply(73);
check(noResult.error?.data?.status === 'cancelled', `tasks/result of a cancelled task is an error (${noResult.error?.code}), never a fake success`);

step('durable task: tasks/result waits for the work and returns what the call returns');
call(74, 'progress', { steps: 3, interval_ms: 50 }, { progressToken: 'p-74' }, { ttl: 600000 });
const done = (await reply(74)).result.task;
request(75, 'tasks/result', { taskId: done.taskId });
const doneResult = (await reply(75)).result;
check(text({ result: doneResult }) === 'done 3 steps' && doneResult._meta?.['io.modelcontextprotocol/related-task']?.taskId === done.taskId,
  `"${text({ result: doneResult })}" with _meta related-task ${done.taskId.slice(0, 8)}…`);

step('durable task: a task still running when keel is killed is never forgotten');
call(76, 'progress', { steps: 10000, interval_ms: 100 }, null, { ttl: 600000 });  // progress keeps its idle clock alive
const orphan = (await reply(76)).result.task;
request(77, 'tasks/get', { taskId: orphan.taskId });
check((await reply(77)).result.status === 'working', `task ${orphan.taskId.slice(0, 8)}… is working; now kill -9 keel`);
keel.proc.kill('SIGKILL');
await keel.exited;
keel = startKeel();
({ seen, send, request, waitFor, reply } = keel);
await initialize(0);
request(78, 'tasks/get', { taskId: orphan.taskId });
const recovered = (await reply(78)).result;
check(recovered.status === 'failed', `a new keel on the same database: ${recovered.status}, "${recovered.statusMessage}"`);
request(79, 'tasks/get', { taskId: done.taskId });
check((await reply(79)).result.status === 'completed', 'the task that completed before the kill is still completed, its result kept');

step('stdin EOF: in-flight work finishes, then keel exits 0');
call(40, 'sleep', { ms: 300 });
const closedAt = Date.now();
keel.proc.end();
const slept = await reply(40);
const code = await keel.exited;
const elapsed = Date.now() - closedAt;
check(text(slept) === 'slept 300 ms', 'the sleep in flight at EOF still answered');
check(code === 0 && elapsed < 2000, `exit code ${code}, ${elapsed} ms after EOF (hosts send SIGTERM at 2000 ms)`);

step('a picture of what happened: keel trace report');
const reportPath = join(demoDir, 'report.html');
const report = spawnSync(keelPath, ['trace', 'report', tracePath, '-o', reportPath], { encoding: 'utf8' });
check(report.status === 0, `${reportPath} (calls, attempts, timeouts, cancels on a timeline)`);
if (report.status !== 0) console.log(`   ${report.stderr.trim()}`);
console.log(`   open it in a browser: xdg-open ${reportPath}  (or copy it to your laptop)`);

console.log(failures === 0 ? '\ndemo: every guarantee shown held' : `\ndemo: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
