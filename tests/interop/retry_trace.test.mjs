// The trace file (--trace-file, OBS-1) checked field by field for retried, refused, replayed
// and shadow calls, with the real binary: every record has an RFC 3339 and a unix-ms
// timestamp, W3C trace and span ids (the client's traceparent is honoured), the policy
// version, the call and intent ids; every attempt has its own attempt id under the call;
// retry decisions carry their reason and the remaining budget; tool arguments stay out.
// Run: node --test tests/interop/retry_trace.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { KEEL, freshDir, startRawKeel } from './raw_keel.mjs';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

function readTrace(file) {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
}

async function run(t, extraArgs, calls) {
  const dir = freshDir(t, 'keel-trace-');
  const trace = join(dir, 'trace.jsonl');
  const args = ['--test-tools', '--db', join(dir, 'keel.db'), '--trace-file', trace, ...extraArgs(dir)];
  const k = startRawKeel(t, { binary: KEEL, args, clientName: 'trace' });
  await k.initialize();
  const answers = [];
  for (const params of calls) answers.push(await k.request('tools/call', params));
  await k.close();
  return { answers, records: readTrace(trace) };
}

// Every record, whatever its event.
function checkCommonFields(r) {
  assert.match(r.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, `ts of ${JSON.stringify(r)}`);
  assert.ok(Number.isInteger(r.ts_unix_ms) && Math.abs(r.ts_unix_ms - Date.parse(r.ts)) <= 1, 'ts_unix_ms matches ts');
  assert.match(r.trace_id, /^[0-9a-f]{32}$/);
  assert.match(r.span_id, /^[0-9a-f]{16}$/);
  assert.ok(['INFO', 'WARN', 'ERROR'].includes(r.severity_text), r.severity_text);
  assert.equal(r.resource['service.name'], 'keel');
  assert.ok(r.attributes['keel.policy.version'], 'policy version on every record');
  assert.equal(r.attributes['gen_ai.tool.call.arguments'], undefined, 'no arguments without --trace-arguments');
}

const ofCall = (records, callId) => records.filter((r) => r.attributes['keel.call.id'] === callId);

test('a retried read: call, two attempts with their own ids, the retry with its reason and budget', async (t) => {
  const { answers, records } = await run(t, () => [], [{
    name: 'flaky_read',
    arguments: { counter: 'tr1', fail: ['backend_503'], retry_after_ms: 20 },
    _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01` },
  }]);
  assert.equal(answers[0].result.structuredContent.attempt, 2, JSON.stringify(answers[0]));
  records.forEach(checkCommonFields);
  const start = records.find((r) => r.event === 'tool.call.start');
  const callId = start.attributes['keel.call.id'];
  const events = ofCall(records, callId);
  assert.deepEqual(events.map((r) => r.event), [
    'tool.call.start', 'tool.attempt.start', 'tool.attempt.end', 'retry.scheduled',
    'tool.attempt.start', 'tool.attempt.end', 'tool.call.end']);
  for (const r of events) {
    assert.equal(r.trace_id, TRACE_ID, 'the client traceparent sets the trace id');
    assert.equal(r.attributes['gen_ai.tool.name'], 'flaky_read');
    assert.equal(r.attributes['keel.intent.id'], callId, 'no key: the intent is the call');
    assert.equal(r.attributes['keel.effect'], 'read');
    assert.equal(r.attributes['keel.backend'], 'flaky_read');
    assert.equal(r.attributes['keel.policy.version'], 'builtin-1');
    assert.equal(r.attributes['jsonrpc.request.id'], String(answers[0].id));
  }
  assert.equal(start.parent_span_id, PARENT, 'the call span is a child of the client span');
  const [, a1, e1, retry, a2, e2, end] = events;
  assert.equal(a1.parent_span_id, start.span_id, 'an attempt span is a child of the call span');
  assert.equal(a1.attributes['retry.attempt'], 1);
  assert.equal(a1.attributes['keel.attempt.id'], `${callId}/1`);
  assert.equal(e1.span_id, a1.span_id);
  assert.equal(e1.attributes.outcome, 'error');
  assert.equal(e1.attributes['error.type'], 'backend_503');
  assert.equal(e1.attributes['keel.failure.class'], 'rejected_transient');
  assert.ok(e1.attributes.duration_ms >= 0);
  assert.equal(retry.attributes['keel.retry.reason'], 'retry');
  assert.equal(retry.attributes['keel.failure.class'], 'rejected_transient');
  assert.equal(retry.attributes['keel.retry_after_ms'], 20);
  assert.ok(retry.attributes['keel.retry.delay_ms'] >= 20, 'the retry-after hint is honoured');
  assert.ok(retry.attributes['keel.budget.remaining_ms'] > 0);
  assert.equal(a2.attributes['retry.attempt'], 2);
  assert.equal(a2.attributes['keel.attempt.id'], `${callId}/2`);
  assert.notEqual(a2.span_id, a1.span_id);
  assert.equal(e2.attributes.outcome, 'ok');
  assert.equal(end.attributes.outcome, 'ok');
  assert.equal(end.span_id, start.span_id);
});

test('an ambiguous unsafe write: one attempt, the suppressed retry says why, the answer says reconcile', async (t) => {
  const { answers, records } = await run(t, () => [], [
    { name: 'flaky_write', arguments: { counter: 'tw1', fail: ['lost_response'] } },
  ]);
  const error = answers[0].result.structuredContent.error;
  assert.equal(error.needs_reconciliation, true);
  assert.equal(error.effect, 'unknown');
  records.forEach(checkCommonFields);
  const suppressed = records.filter((r) => r.event === 'retry.suppressed');
  assert.equal(suppressed.length, 1);
  assert.equal(suppressed[0].attributes['keel.retry.reason'], 'unsafe_write_ambiguous');
  assert.equal(suppressed[0].attributes['keel.failure.class'], 'ambiguous');
  assert.equal(suppressed[0].attributes['keel.needs_reconciliation'], true);
  assert.equal(records.filter((r) => r.event === 'tool.attempt.start').length, 1);
});

test('a keyed replay is traced with its idempotency key and intent', async (t) => {
  const call = { name: 'charge_account', arguments: { account: 'a-tr', cents: 10, idempotencyKey: 'tr-k1' } };
  const { records } = await run(t, () => [], [call, call]);
  records.forEach(checkCommonFields);
  const starts = records.filter((r) => r.event === 'tool.call.start');
  assert.equal(starts.length, 2);
  for (const s of starts) {
    assert.equal(s.attributes['idempotency.key'], 'tr-k1');
    assert.equal(s.attributes['keel.intent.id'], 'charge_account/tr-k1', 'one intent for both calls');
    assert.equal(s.attributes['keel.backend'], 'payments');
  }
  assert.notEqual(starts[0].attributes['keel.call.id'], starts[1].attributes['keel.call.id']);
  const replays = records.filter((r) => r.event === 'idempotency.replay');
  assert.equal(replays.length, 1);
  assert.equal(replays[0].attributes['keel.call.id'], starts[1].attributes['keel.call.id']);
});

test('shadow mode (--shadow, or per tool in the policy) records would_have and changes nothing', async (t) => {
  for (const extra of [
    () => ['--shadow'],
    (dir) => {
      const policy = join(dir, 'policy.json');
      writeFileSync(policy, JSON.stringify({ version: 'shadow-1', tools: { flaky_read: { shadow: true } } }));
      return ['--policy', policy];
    },
  ]) {
    const { answers, records } = await run(t, extra, [
      { name: 'flaky_read', arguments: { counter: 'ts1', fail: ['backend_503'] } },
      { name: 'flaky_read', arguments: { counter: 'ts1', fail: ['backend_503'] } },
    ]);
    assert.equal(answers[0].result.structuredContent.error.type, 'backend_503', 'the failure is not retried');
    assert.equal(answers[1].result.structuredContent.attempt, 2, 'only one attempt ran');
    records.forEach(checkCommonFields);
    const would = records.filter((r) => r.event === 'retry.would_have');
    assert.equal(would.length, 1, JSON.stringify(records.map((r) => r.event)));
    assert.equal(would[0].attributes['keel.shadow'], true);
    assert.equal(would[0].attributes['keel.would_have.retry'], true);
    assert.equal(would[0].attributes['keel.retry.reason'], 'retry');
    assert.equal(records.filter((r) => r.event === 'retry.scheduled').length, 0);
  }
});
