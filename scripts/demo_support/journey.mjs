#!/usr/bin/env node
// The inspect-then-restart journey of the second seed, against keel's simulated deployment
// backend with faults on. Usage: node scripts/demo_support/journey.mjs [path/to/keel]
// Speaks raw JSON-RPC over stdio like any MCP host; exits non-zero if keel misbehaves.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { rpcClient, spawnLines } from '../../tests/support/keel_process.mjs';

const keelPath = process.argv[2] ?? 'build/keel';
const dir = mkdtempSync(join(tmpdir(), 'keel-journey-'));
const trace = join(dir, 'trace.jsonl');
const policy = join(dir, 'policy.json');
// A short open time so the journey sees the breaker half-open within a second.
writeFileSync(policy, JSON.stringify({
  version: 'journey-1',
  defaults: { breaker: { minimum_calls: 4, open_ms: 1000, half_open_probes: 3 } },
}));
const args = ['--db', join(dir, 'keel.db'), '--trace-file', trace, '--policy', policy, '--workers', '4'];
let failures = 0;

// One keel (tests/support/keel_process.mjs); requests wait for their answer as long as it takes.
function startKeel(extra) {
  const proc = spawnLines(keelPath, [...args, ...extra], { stderr: 'inherit' });
  const c = rpcClient(proc, { waitMs: Infinity });
  return { proc, request: c.request, exited: proc.exited.then((exit) => exit.code) };
}

const step = (title) => console.log(`\n== ${title}`);
const check = (ok, what) => {
  console.log(`   ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
};
const say = (result) => console.log(`   keel: ${result.content?.map((c) => c.text).join(' | ')}`);

let keel = startKeel([
  '--fault', 'get_deployment_job:fail_503=1',          // the first read meets a 503
  '--fault', 'restart_deployment_job:lose_response',    // the first restart's answer is lost
  '--fault', 'lookup_deployment_operation:latency=50',
]);
await keel.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'journey', version: '1' } });
keel.proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
const call = (name, a) => keel.request('tools/call', { name, arguments: a }).then((m) => m.result);

step('inspect: get_deployment_job web-api (the deployment API answers 503 once)');
const job = await call('get_deployment_job', { job_id: 'web-api' });
say(job);
check(job.structuredContent?.freshness === 'fresh', 'keel retried the read itself: one answer, fresh state');

step('restart with approval: restart_deployment_job (the answer is lost after the backend accepts)');
const restart = { job_id: 'web-api', environment: 'production', intent_id: 'ops-intent-1', approval_id: 'CHG-4711' };
const noApproval = await call('restart_deployment_job', { ...restart, approval_id: undefined });
check(noApproval.structuredContent?.error?.type === 'approval_required', 'without an approval_id nothing runs: approval_required');
const lost = await call('restart_deployment_job', restart);
say(lost);
check(lost.structuredContent?.error?.needs_reconciliation === true, 'an unsafe write is not retried after a lost answer: needs_reconciliation');

step('reconcile: lookup_deployment_operation by the idempotency key');
const key = lost.structuredContent?.error?.idempotency_key;
const found = await call('lookup_deployment_operation', { idempotency_key: key });
say(found);
check(found.structuredContent?.found === true, `the restart did happen: operation ${found.structuredContent?.operation_id}`);
const again = await call('restart_deployment_job', restart);
check(again.structuredContent?.operation_id === found.structuredContent?.operation_id && again.structuredContent?.replayed,
  'asking again with the same intent and approval returns the same operation: no duplicate');
await keel.request('ping', {});
keel.proc.end();
await keel.exited;

step('outage: the deployment API fails for 90 s (a new keel, same trace file)');
keel = startKeel(['--fault', 'get_deployment_job:sustained_503=90000', '--fault', 'get_deployment_job:start_after=1']);
await keel.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'journey', version: '1' } });
await call('get_deployment_job', { job_id: 'web-api' });  // a good read before the outage
const failing = await call('get_deployment_job', { job_id: 'web-api' });
check(failing.isError === true, `retries could not help: ${failing.structuredContent?.error?.type}, and the breaker opened`);
const degraded = await call('get_deployment_job', { job_id: 'web-api' });
say(degraded);
check(degraded.structuredContent?.freshness === 'cached' && degraded.structuredContent?.no_write_action_performed === true,
  'while open: an instant answer, the last known state marked cached, no write performed');
keel.proc.end();
await keel.exited;

step('keel trace summary (per tool, backend and outcome)');
const summary = spawnSync(keelPath, ['trace', 'summary', trace], { encoding: 'utf8' });
console.log(summary.stdout);
check(summary.status === 0, 'the summary reads the trace');

console.log(failures === 0 ? '\njourney: every step held' : `\njourney: ${failures} step(s) FAILED`);
process.exit(failures === 0 ? 0 : 1);
