// --trace-format otlp (ADO-3) with the real binary: a short stdio session (initialize, ping,
// tools/list, a retried call under the client's traceparent, a call whose result has isError,
// an unknown tool, an unserved method) writes OTLP/JSON that the collector's otlpjsonfile
// receiver reads: every line of the trace file and of its metrics file validates against a
// strict JSON Schema of the protobuf JSON mapping (fixtures/otlp/otlp_json.schema.json, from
// opentelemetry-proto v1.11.0); every request has exactly one SERVER span named per the MCP
// semantic conventions; the attempts are child spans of their call's span; backoffs are span
// events; error.type says tool_error or the JSON-RPC code; the mcp.server.operation.duration
// histogram counts every request. `keel trace summary --json` reads the file too.
// proves: ADO-3
// Run: node --test tests/interop/trace_otlp.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Ajv from 'ajv';

import { httpKeelTest, legacyClient, modernClient, waitUntil } from './http_keel.mjs';
import { KEEL, freshDir, startRawKeel } from './raw_keel.mjs';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const SERVER = 2;
const INTERNAL = 1;
const ERROR = 2;

const schema = JSON.parse(readFileSync(new URL('./fixtures/otlp/otlp_json.schema.json', import.meta.url), 'utf8'));
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);

function lines(file) {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

function checkSchema(objects, what) {
  assert.ok(objects.length > 0, `${what} has lines`);
  objects.forEach((o, i) => assert.ok(validate(o), `${what} line ${i + 1}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(o)}`));
}

// {key: value} of an OTLP KeyValue list (strings, bools, ints as strings, doubles).
function attrs(list = []) {
  const out = {};
  for (const { key, value } of list) out[key] = Object.values(value)[0];
  return out;
}

const spansOf = (requests) => requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));

test('an otlp trace: schema-valid lines, one SERVER span per request, attempts as children, metrics', async (t) => {
  const dir = freshDir(t, 'keel-otlp-');
  const trace = join(dir, 'trace.jsonl');
  const k = startRawKeel(t, {
    binary: KEEL,
    args: ['--test-tools', '--db', join(dir, 'keel.db'), '--trace-file', trace, '--trace-format', 'otlp'],
    clientName: 'otlp',
  });
  await k.initialize();
  const answers = {};
  answers.ping = await k.request('ping', {});
  answers.list = await k.request('tools/list', {});
  answers.retried = await k.request('tools/call', {
    name: 'flaky_read',
    arguments: { counter: 'o1', fail: ['backend_503'], retry_after_ms: 20 },
    _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01` },
  });
  answers.failed = await k.request('tools/call', { name: 'fail', arguments: { message: 'no' } });
  answers.unknown = await k.request('tools/call', { name: 'no_such_tool', arguments: {} });
  answers.unserved = await k.request('no/such/method', {});
  await k.close();
  assert.equal(answers.retried.result.structuredContent.attempt, 2, JSON.stringify(answers.retried));
  assert.equal(answers.failed.result.isError, true);
  assert.ok(answers.unknown.error, JSON.stringify(answers.unknown));
  assert.equal(answers.unserved.error.code, -32601);

  const requests = lines(trace);
  checkSchema(requests, 'trace file');
  const spans = spansOf(requests);
  for (const r of requests) {
    const resource = attrs(r.resourceSpans[0].resource.attributes);
    assert.equal(resource['service.name'], 'keel');
    assert.equal(r.resourceSpans[0].scopeSpans[0].scope.name, 'keel');
  }

  // Exactly one SERVER span per request, named per the MCP conventions.
  const server = spans.filter((s) => s.kind === SERVER);
  const byId = new Map();
  for (const s of server) {
    const a = attrs(s.attributes);
    assert.ok(a['jsonrpc.request.id'] !== undefined, `request id on ${s.name}`);
    assert.ok(!byId.has(a['jsonrpc.request.id']), `one SERVER span for request ${a['jsonrpc.request.id']}`);
    byId.set(a['jsonrpc.request.id'], { span: s, a });
    assert.equal(a['network.transport'], 'pipe');
    assert.ok(a['mcp.method.name'], 'mcp.method.name');
    assert.ok(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano));
  }
  const ids = ['1', ...Object.values(answers).map((a) => String(a.id))];
  assert.deepEqual([...byId.keys()].sort(), ids.sort(), 'every request (initialize included) has its span');
  const spanOf = (answer) => byId.get(String(answer.id));
  assert.equal(byId.get('1').span.name, 'initialize');
  assert.equal(byId.get('1').a['mcp.protocol.version'], '2025-11-25');
  assert.equal(spanOf(answers.ping).span.name, 'ping');
  assert.equal(spanOf(answers.list).span.name, 'tools/list');
  const sessionId = spanOf(answers.list).a['mcp.session.id'];
  assert.match(sessionId, /^[0-9a-f]{32}$/);

  // The retried call: the client's span is the parent; two attempt spans under the call span;
  // the backoff is an event on the call span.
  const retried = spanOf(answers.retried);
  assert.equal(retried.span.name, 'tools/call flaky_read');
  assert.equal(retried.span.traceId, TRACE_ID);
  assert.equal(retried.span.parentSpanId, PARENT);
  assert.equal(retried.a['gen_ai.tool.name'], 'flaky_read');
  assert.equal(retried.a['gen_ai.operation.name'], 'execute_tool');
  assert.equal(retried.a['mcp.session.id'], sessionId);
  assert.equal(retried.a['keel.outcome'], 'ok');
  assert.equal(retried.a['error.type'], undefined);
  for (const legacy of ['retry.attempt', 'idempotency.key', 'task.id', 'outcome', 'duration_ms']) {
    assert.equal(retried.a[legacy], undefined, `${legacy} is under keel.* in OTLP`);
  }
  const attempts = spans.filter((s) => s.kind === INTERNAL && s.parentSpanId === retried.span.spanId);
  assert.equal(attempts.length, 2, 'one child span per attempt');
  assert.deepEqual(attempts.map((s) => attrs(s.attributes)['keel.retry.attempt']).sort(), ['1', '2']);
  for (const s of attempts) assert.equal(s.traceId, TRACE_ID);
  const first = attempts.find((s) => attrs(s.attributes)['keel.retry.attempt'] === '1');
  assert.equal(first.status.code, ERROR);
  assert.equal(attrs(first.attributes)['error.type'], 'backend_503');
  const backoff = retried.span.events.find((e) => e.name === 'keel.retry.scheduled');
  assert.ok(backoff, JSON.stringify(retried.span.events));
  assert.match(backoff.timeUnixNano, /^[0-9]+$/);
  assert.ok(BigInt(backoff.timeUnixNano) >= BigInt(retried.span.startTimeUnixNano));
  assert.equal(attrs(backoff.attributes)['keel.retry.reason'], 'retry');
  for (const s of spans.filter((x) => x.kind === INTERNAL)) {
    assert.ok(server.some((p) => p.spanId === s.parentSpanId), 'every attempt span has its call span');
  }

  // Errors: isError is tool_error; a JSON-RPC error is its code.
  const failed = spanOf(answers.failed);
  assert.equal(failed.a['error.type'], 'tool_error');
  assert.equal(failed.span.status.code, ERROR);
  const unknown = spanOf(answers.unknown);
  assert.equal(unknown.span.status.code, ERROR);
  assert.equal(unknown.a['error.type'], String(answers.unknown.error.code));
  assert.equal(unknown.a['rpc.response.status_code'], String(answers.unknown.error.code));
  const unserved = spanOf(answers.unserved);
  assert.equal(unserved.span.name, 'no/such/method');
  assert.equal(unserved.a['error.type'], '-32601');

  // The histogram: in the sibling file, written at exit, counting every request.
  const metrics = lines(`${trace}.metrics.jsonl`);
  checkSchema(metrics, 'metrics file');
  const last = metrics.at(-1).resourceMetrics[0].scopeMetrics[0].metrics;
  const histogram = last.find((m) => m.name === 'mcp.server.operation.duration');
  assert.equal(histogram.unit, 's');
  assert.equal(histogram.histogram.aggregationTemporality, 2, 'cumulative');
  const points = histogram.histogram.dataPoints;
  assert.equal(points.reduce((n, p) => n + Number(p.count), 0), ids.length);
  for (const p of points) {
    assert.deepEqual(p.explicitBounds, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]);
    assert.equal(p.bucketCounts.reduce((n, c) => n + Number(c), 0), Number(p.count));
  }
  const toolError = points.find((p) => attrs(p.attributes)['error.type'] === 'tool_error');
  assert.equal(attrs(toolError.attributes)['gen_ai.tool.name'], 'fail');

  // keel trace summary --json reads the OTLP file.
  const summary = spawnSync(KEEL, ['trace', 'summary', '--json', trace], { encoding: 'utf8' });
  assert.equal(summary.status, 0, summary.stderr);
  const figures = JSON.parse(summary.stdout);
  const flaky = figures.groups.find((g) => g.tool === 'flaky_read');
  assert.equal(flaky.calls, 1);
  assert.equal(flaky.retries, 1);
  assert.equal(flaky.outcome, 'ok');
});

test('the schema refuses what OTLP/JSON forbids: base64 ids, numeric nanoseconds, unknown fields', () => {
  const span = {
    traceId: TRACE_ID, spanId: PARENT, name: 'ping', kind: 2,
    startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: [], status: {},
  };
  const wrap = (s) => ({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'keel' }, spans: [s] }] }] });
  assert.ok(validate(wrap(span)), JSON.stringify(validate.errors));
  assert.ok(!validate(wrap({ ...span, traceId: 'S/kvNXezTaajzpKdDg5HNg==' })), 'base64 trace id');
  assert.ok(!validate(wrap({ ...span, startTimeUnixNano: 1 })), 'a number for a fixed64');
  assert.ok(!validate(wrap({ ...span, kind: 'SPAN_KIND_SERVER' })), 'an enum by name');
  assert.ok(!validate(wrap({ ...span, start_time_unix_nano: '1' })), 'a snake_case field');
  assert.ok(!validate(wrap({ ...span, attributes: [{ key: 'a', value: { intValue: 1 } }] })), 'intValue as a number');
});

test('the default trace format is still the JSON lines records', async (t) => {
  const dir = freshDir(t, 'keel-otlp-');
  const trace = join(dir, 'trace.jsonl');
  const k = startRawKeel(t, {
    binary: KEEL,
    args: ['--test-tools', '--db', join(dir, 'keel.db'), '--trace-file', trace],
    clientName: 'otlp',
  });
  await k.initialize();
  await k.request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
  await k.close();
  const records = lines(trace);
  assert.deepEqual(records.map((r) => r.event), ['tool.call.start', 'tool.attempt.start', 'tool.attempt.end', 'tool.call.end']);
  assert.equal(readFileSync(trace, 'utf8').includes('resourceSpans'), false);
});

// Over --http, with the format from the environment (KEEL_TRACE_FORMAT): a legacy session's
// requests share its mcp.session.id; a modern client's requests have none (no session).
httpKeelTest('otlp over --http: a SERVER span per request of both eras, network.transport tcp', {
  args: (dir) => ['--trace-file', join(dir, 'trace.jsonl')],
  env: { KEEL_TRACE_FORMAT: 'otlp' },
}, async (k) => {
  const legacy = await legacyClient(k);
  await legacy.client.listTools();
  await legacy.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  const modern = await modernClient(k);
  await modern.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  const file = join(k.dir, 'trace.jsonl');
  const spans = await waitUntil(() => {
    const all = spansOf(lines(file));
    return all.filter((s) => s.name === 'tools/call echo').length === 2 && all;
  }, 'two tools/call spans');
  checkSchema(lines(file), 'trace file');
  const server = spans.filter((s) => s.kind === SERVER).map((s) => ({ s, a: attrs(s.attributes) }));
  for (const { a } of server) assert.equal(a['network.transport'], 'tcp');
  const legacySpans = server.filter(({ a }) => a['mcp.protocol.version'] === '2025-11-25');
  assert.deepEqual(legacySpans.map(({ s }) => s.name).sort(), ['initialize', 'tools/call echo', 'tools/list']);
  const session = legacySpans.find(({ s }) => s.name === 'tools/list').a['mcp.session.id'];
  assert.match(session, /^[0-9a-f]{32}$/);
  assert.equal(legacySpans.find(({ s }) => s.name === 'tools/call echo').a['mcp.session.id'], session);
  const modernCall = server.find(({ s, a }) => s.name === 'tools/call echo' && a['mcp.protocol.version'] === '2026-07-28');
  assert.ok(modernCall, JSON.stringify(server.map(({ s, a }) => [s.name, a['mcp.protocol.version']])));
  assert.equal(modernCall.a['mcp.session.id'], undefined);
});
