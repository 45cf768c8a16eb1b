// The seed's fault drills (FLT-1..4) against the real binary and its simulated deployment
// backend, each checking the seed's expected figures from the trace file (--trace-file):
// attempts, backend operations, retries, the timeout layer, the correlation id.
// (The answers themselves are also pinned by conformance/drill_*.txn.)
// Run: node --test tests/interop/fault_drills.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { KEEL, freshDir, startRawKeel } from './raw_keel.mjs';

async function drill(t, args, body) {
  const dir = freshDir(t, 'keel-drill-');
  const traceFile = join(dir, 'trace.jsonl');
  const k = startRawKeel(t, {
    binary: KEEL, args: ['--db', join(dir, 'keel.db'), '--trace-file', traceFile, ...args], clientName: 'drill',
  });
  await k.initialize();
  const call = (name, args2) => k.request('tools/call', { name, arguments: args2 });
  const out = await body(call);
  await k.close();
  const records = readFileSync(traceFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  return { out, records };
}

// The seed's figures for one call id.
function figures(records, callId) {
  const mine = records.filter((r) => r.attributes['keel.call.id'] === callId);
  const ops = new Set(mine.map((r) => r.attributes['keel.backend.operation.id']).filter(Boolean));
  return {
    attempts: mine.filter((r) => r.event === 'tool.attempt.start').length,
    backendOperations: ops.size,
    scheduled: mine.filter((r) => r.event === 'retry.scheduled'),
    suppressed: mine.filter((r) => r.event === 'retry.suppressed'),
    timeouts: mine.filter((r) => r.event === 'timeout.fired'),
    end: mine.find((r) => r.event === 'tool.call.end'),
  };
}
const callIdOf = (records, requestId) =>
  records.find((r) => r.event === 'tool.call.start' && r.attributes['jsonrpc.request.id'] === String(requestId))
    .attributes['keel.call.id'];

test('FLT-1 read_transient_503: attempts 2, backend operations 0, fresh state returned', async (t) => {
  const { out, records } = await drill(t, ['--fault', 'get_deployment_job:fail_503=1'],
    (call) => call('get_deployment_job', { job_id: 'web-api' }));
  assert.equal(out.result.isError, undefined, JSON.stringify(out));
  assert.equal(out.result.structuredContent.freshness, 'fresh');
  assert.equal(out.result.structuredContent.state, 'running');
  const f = figures(records, callIdOf(records, out.id));
  assert.equal(f.attempts, 2);
  assert.equal(f.backendOperations, 0);
  assert.equal(f.scheduled.length, 1);
  assert.equal(f.scheduled[0].attributes['error.type'], 'backend_503');
  assert.equal(f.end.attributes.outcome, 'ok');
});

test('FLT-2 write_response_lost_after_accept: no automatic retry, lookup by key, 0 duplicate operations', async (t) => {
  const restart = { job_id: 'worker', environment: 'production', intent_id: 'intent-flt2', approval_id: 'ap-flt2' };
  const { out, records } = await drill(t, ['--fault', 'restart_deployment_job:lose_response'], async (call) => {
    const lost = await call('restart_deployment_job', restart);
    const key = lost.result.structuredContent.error.idempotency_key;
    const lookup = await call('lookup_deployment_operation', { idempotency_key: key });
    const again = await call('restart_deployment_job', restart);  // an operator's explicit retry
    return { lost, lookup, again };
  });
  const error = out.lost.result.structuredContent.error;
  assert.equal(error.type, 'lost_response');
  assert.equal(error.needs_reconciliation, true);
  const f = figures(records, callIdOf(records, out.lost.id));
  assert.equal(f.attempts, 1, 'no automatic retry');
  assert.equal(f.suppressed.length, 1);
  assert.equal(f.suppressed[0].attributes['keel.retry.reason'], 'unsafe_write_ambiguous');
  assert.equal(out.lookup.result.structuredContent.found, true, 'the lookup by idempotency key finds it');
  assert.equal(out.again.result.structuredContent.replayed, true);
  assert.equal(out.again.result.structuredContent.operation_id, out.lookup.result.structuredContent.operation_id,
    'duplicate operations: 0');
  const allOps = new Set(records.map((r) => r.attributes['keel.backend.operation.id']).filter(Boolean));
  assert.equal(allOps.size, 1, 'one backend operation in the whole trace');
});

test('FLT-4 budget_exhausted: no extra retry, the timeout layer reported, the correlation id returned', async (t) => {
  const { out, records } = await drill(t, ['--fault', 'get_deployment_job:slow=8000'],
    (call) => call('get_deployment_job', { job_id: 'web-api' }));
  const error = out.result.structuredContent.error;
  assert.equal(error.type, 'attempt_timeout');
  assert.equal(error.layer, 'attempt');
  // The whole 7 s attempt was spent waiting; elapsed_ms counts from when the request was
  // sent, a moment after the attempt began (over 1 ms under a sanitizer build).
  assert.ok(error.elapsed_ms >= 6900, `elapsed ${error.elapsed_ms}`);
  const callId = callIdOf(records, out.id);
  assert.equal(error.correlation_id, callId, 'the correlation id is returned');
  const f = figures(records, callId);
  assert.equal(f.attempts, 1, 'no extra retry');
  assert.equal(f.scheduled.length, 0);
  assert.equal(f.suppressed.length, 1);
  assert.equal(f.suppressed[0].attributes['keel.retry.reason'], 'budget_exhausted');
  assert.ok(f.suppressed[0].attributes['keel.budget.remaining_ms'] < 3500);
  assert.equal(f.timeouts.length, 1);
  assert.equal(f.timeouts[0].attributes['keel.timeout.layer'], 'attempt');
});

test('FLT-3 sustained_dependency_failure: the breaker opens, probe concurrency 1, no write fallback', async (t) => {
  const policy = join(process.cwd(), 'conformance', 'fixtures', 'drill_breaker_policy.json');
  const { out, records } = await drill(t, [
    '--workers', '4', '--policy', policy,
    '--fault', 'get_deployment_job:start_after=1', '--fault', 'get_deployment_job:sustained_503=90000',
    '--fault', 'get_deployment_job:latency=200', '--fault', 'restart_deployment_job:sustained_503=90000',
  ], async (call) => {
    const get = () => call('get_deployment_job', { job_id: 'web-api' });
    const restart = () => call('restart_deployment_job',
      { job_id: 'web-api', environment: 'production', intent_id: 'i-flt3', approval_id: 'ap-flt3' });
    const good = await get();
    const failing = await get();
    const cached = await get();
    await restart();
    const rejectedWrite = await restart();
    await new Promise((r) => setTimeout(r, 1200));  // the open time (1 s) runs out
    const together = await Promise.all([get(), get(), get(), get()]);
    return { good, failing, cached, rejectedWrite, together };
  });
  assert.equal(out.good.result.structuredContent.freshness, 'fresh');
  assert.equal(out.cached.result.structuredContent.freshness, 'cached');
  assert.equal(out.cached.result.structuredContent.no_write_action_performed, true);
  const writeError = out.rejectedWrite.result.structuredContent.error;
  assert.equal(writeError.type, 'circuit_open');
  assert.equal(writeError.freshness, undefined, 'no write fallback');
  for (const r of out.together) assert.equal(r.result.structuredContent.freshness, 'cached', JSON.stringify(r));

  // The breaker opened: a state record says so, with the failure rate that tripped it.
  const opened = records.filter((r) => r.event === 'breaker.state' && r.attributes['keel.circuit.state'] === 'open');
  assert.ok(opened.length >= 1, 'circuit_opens');
  assert.ok(records.some((r) => r.event === 'breaker.rejected'), 'calls were rejected while open');
  // Probe concurrency 1: the attempts admitted as half-open probes never overlap in time.
  const probes = [];
  for (const start of records.filter((r) => r.event === 'tool.attempt.start' && r.attributes['keel.circuit.probe'])) {
    const end = records.find((r) => r.event === 'tool.attempt.end' && r.span_id === start.span_id);
    probes.push([start.ts_unix_ms, end.ts_unix_ms]);
  }
  assert.ok(probes.length >= 1, 'a probe was admitted after the open time');
  probes.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < probes.length; i++) {
    assert.ok(probes[i][0] >= probes[i - 1][1], `probes ${i - 1} and ${i} overlap: ${JSON.stringify(probes)}`);
  }
  // Rejected attempts never reached the backend: no attempt record for them.
  const rejectedSpans = new Set(records.filter((r) => r.event === 'breaker.rejected').map((r) => r.attributes['keel.attempt.id']));
  const attempted = records.filter((r) => r.event === 'tool.attempt.start' && rejectedSpans.has(r.attributes['keel.attempt.id']));
  assert.equal(attempted.length, 0);
});

test('shadow mode (OPS-1): the breaker computes its decisions and records would_have, but never rejects', async (t) => {
  const policy = join(process.cwd(), 'conformance', 'fixtures', 'drill_breaker_policy.json');
  const { out, records } = await drill(t, [
    '--shadow', '--policy', policy, '--fault', 'get_deployment_job:sustained_503=90000',
  ], async (call) => {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await call('get_deployment_job', { job_id: 'web-api' }));
    return answers;
  });
  for (const a of out) {
    assert.equal(a.result.structuredContent.error.type, 'backend_503', 'every call reached the backend');
  }
  assert.equal(records.filter((r) => r.event === 'breaker.rejected').length, 0);
  assert.ok(records.some((r) => r.event === 'breaker.would_have'), 'would-have rejections are recorded');
  assert.equal(records.filter((r) => r.event === 'retry.scheduled').length, 0, 'shadow: no retries either');
  assert.ok(records.filter((r) => r.event === 'retry.would_have').length >= 1);
  assert.equal(records.filter((r) => r.event === 'tool.attempt.start').length, 6, 'one attempt per call');
});
