// Interop: cancellation and timeouts between keel and the official MCP TypeScript SDK
// client (RequestOptions signal, timeout, resetTimeoutOnProgress, maxTotalTimeout,
// onprogress) over stdio.
// Run: node --test tests/interop/cancel_timeout.test.mjs   (or: npm run test:interop)
// The binary is $KEEL_BINARY, else <repo>/build/keel; it is started with --test-tools plus
// the flags a test asks for. Every test starts its own keel (in a fresh temporary working
// directory) and stops it.
//
// Raw traffic: after connect, the transport's onmessage (installed by the SDK's Protocol)
// and send are wrapped, so a test sees every message keel wrote and every message the SDK
// sent, in order. keel handles its input in order on one loop and writes its output in
// order, so "nothing for id N after the response to a later request" is a real observation,
// not a timing guess.
import assert from 'node:assert/strict';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { sdkKeelTest } from './sdk_keel.mjs';

const TEST_TIMEOUT_MS = 20000;
const REQUEST_TIMEOUT_MS = 5000;
const reqOpts = { timeout: REQUEST_TIMEOUT_MS };

// A real wait: only to let keel reach a state (a call picked up by a worker) or to poll for
// a message the SDK sends from its own timer; never an assertion.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function keelTest(name, args, fn) {
  sdkKeelTest(name, { args, timeoutMs: TEST_TIMEOUT_MS }, fn);
}

const isResponse = (m) => 'id' in m && ('result' in m || 'error' in m);
const responsesFor = (k, id) => k.seen.filter((m) => isResponse(m) && m.id === id);
const progressFor = (k, token) => k.seen.filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === token);
const lastSentId = (k, method) => {
  const reqs = k.sent.filter((m) => m.method === method && 'id' in m);
  return reqs.length ? reqs[reqs.length - 1].id : undefined;
};
const indexOfResponse = (k, id) => k.seen.findIndex((m) => isResponse(m) && m.id === id);

// Polls k.sent for a message (the SDK sends some from its own timers).
async function waitForSent(k, pred, ms) {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    const hit = k.sent.find(pred);
    if (hit) return hit;
    await sleep(10);
  }
  return undefined;
}

// Runs an echo and a ping; returns the index in k.seen of the ping's response. Everything keel
// did with input sent before them is written before that index.
async function echoThenPing(k, text) {
  const r = await k.client.callTool({ name: 'echo', arguments: { text } }, undefined, reqOpts);
  assert.deepEqual(r.content, [{ type: 'text', text }], `echo after the cancel: ${JSON.stringify(r)}`);
  await k.client.ping(reqOpts);
  const pingId = lastSentId(k, 'ping');
  const at = indexOfResponse(k, pingId);
  assert.ok(at >= 0, 'ping response not seen in raw traffic');
  return at;
}

// Gives a tool that wrongly kept running time to report again (several of its intervals),
// then a ping round trip so that anything it wrote is in k.seen. Not an assertion itself.
async function settle(k, ms) {
  await sleep(ms);
  await k.client.ping(reqOpts);
}

keelTest('AbortController abort of a running call: the SDK rejects, keel never answers it and frees its worker; the next call works (CAN-1, CAN-2, RACE-1)',
  ['--workers', '1'], async (k) => {
    const controller = new AbortController();
    const call = k.client.callTool({ name: 'sleep', arguments: { ms: 10000 } }, undefined,
      { timeout: 30000, signal: controller.signal });
    const rejected = assert.rejects(call, (err) => {
      assert.ok(err instanceof McpError, `not an McpError: ${err}`);
      assert.equal(err.code, ErrorCode.RequestTimeout); // the SDK reports every abort as -32001
      assert.match(err.message, /user pressed stop/);
      return true;
    });
    const sleepId = lastSentId(k, 'tools/call');
    assert.equal(typeof sleepId, 'number');
    // keel answers in order: once the ping is answered, the call was admitted; the short
    // wait lets the single worker pick it up (either way it must never be answered).
    await k.client.ping(reqOpts);
    await sleep(100);
    controller.abort('user pressed stop');
    await rejected;
    const cancel = k.sent.find((m) => m.method === 'notifications/cancelled' && m.params?.requestId === sleepId);
    assert.ok(cancel, `the SDK sent no notifications/cancelled for ${sleepId}`);

    // One worker: the echo can only run once the cancelled sleep has given its worker back
    // (else it would wait out the 10 s sleep and the 5 s request timeout would fail it).
    await echoThenPing(k, 'after abort');
    assert.deepEqual(responsesFor(k, sleepId), [], `keel answered the cancelled call: ${JSON.stringify(responsesFor(k, sleepId))}`);
  });

keelTest('progress with resetTimeoutOnProgress keeps a call alive past its 500 ms timeout; onprogress sees strictly increasing values (PRG-1, TMO-1)',
  [], async (k) => {
    const values = [];
    const t0 = performance.now();
    const result = await k.client.callTool({ name: 'progress', arguments: { steps: 8, interval_ms: 200 } }, undefined, {
      timeout: 500, resetTimeoutOnProgress: true, maxTotalTimeout: 5000,
      onprogress: (p) => { values.push(p.progress); },
    });
    const took = performance.now() - t0;
    assert.notEqual(result.isError, true, `unexpected error result: ${JSON.stringify(result)}`);
    assert.deepEqual(result.content, [{ type: 'text', text: 'done 8 steps' }]);
    assert.ok(took > 500, `the call took ${took.toFixed(0)} ms; 8 steps 200 ms apart cannot finish within 500 ms`);
    assert.ok(values.length >= 1, 'onprogress was never called');
    for (let i = 1; i < values.length; i++) {
      assert.ok(values[i] > values[i - 1], `progress not strictly increasing: ${JSON.stringify(values)}`);
    }
    assert.ok(values[values.length - 1] <= 8, `progress beyond the 8 steps: ${JSON.stringify(values)}`);
  });

keelTest('SDK maxTotalTimeout ends a progressing call with -32001 "Maximum total timeout"; keel honours the cancel that follows, no progress after it, and keeps serving (CAN-1, CAN-2, PRG-1)',
  [], async (k) => {
    const values = [];
    const t0 = performance.now();
    const call = k.client.callTool({ name: 'progress', arguments: { steps: 20, interval_ms: 200 } }, undefined, {
      timeout: 500, resetTimeoutOnProgress: true, maxTotalTimeout: 900,
      onprogress: (p) => { values.push(p.progress); },
    });
    const callId = lastSentId(k, 'tools/call');
    await assert.rejects(call, (err) => {
      assert.ok(err instanceof McpError, `not an McpError: ${err}`);
      assert.equal(err.code, -32001);
      assert.match(err.message, /Maximum total timeout/);
      return true;
    });
    const took = performance.now() - t0;
    assert.ok(took >= 900, `rejected after ${took.toFixed(0)} ms, before maxTotalTimeout 900`);
    for (let i = 1; i < values.length; i++) {
      assert.ok(values[i] > values[i - 1], `progress not strictly increasing: ${JSON.stringify(values)}`);
    }
    // SDK 1.32.2 rejects here without sending a cancel; its idle timer (500 ms, never
    // cleared) then sends notifications/cancelled for the call.
    const cancel = await waitForSent(k, (m) => m.method === 'notifications/cancelled' && m.params?.requestId === callId, 3000);
    assert.ok(cancel, `the SDK sent no notifications/cancelled for ${callId} within 3 s`);
    // keel read the cancel before the echo: after the echo's response it must write nothing
    // more for the call (20 steps would otherwise run for 4 s).
    const echoFrom = k.seen.length;
    await echoThenPing(k, 'after max total');
    await settle(k, 600);
    const echoAt = k.seen.findIndex((m, i) => i >= echoFrom && isResponse(m) && m.id === lastSentId(k, 'tools/call'));
    assert.ok(echoAt >= 0, 'echo response not seen in raw traffic');
    const late = k.seen.slice(echoAt).filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === callId);
    assert.deepEqual(late, [], 'progress for the cancelled call after keel read the cancel');
    assert.deepEqual(responsesFor(k, callId), [], `keel answered the cancelled call: ${JSON.stringify(responsesFor(k, callId))}`);
  });

keelTest('--idle-timeout 300: a call without progress resolves (no throw) with isError and structuredContent.error {type timeout, layer idle} (TMO-1, TMO-3)',
  ['--idle-timeout', '300'], async (k) => {
    const result = await k.client.callTool({ name: 'sleep', arguments: { ms: 5000 } }, undefined, { timeout: 15000 });
    assert.equal(result.isError, true, `expected isError: ${JSON.stringify(result)}`);
    const error = result.structuredContent?.error;
    assert.equal(error?.type, 'timeout', JSON.stringify(result));
    assert.equal(error.layer, 'idle');
    assert.equal(error.limit_ms, 300);
    assert.ok(Number.isInteger(error.elapsed_ms) && error.elapsed_ms >= 300, `elapsed_ms ${error.elapsed_ms}`);
    assert.equal(typeof error.correlation_id, 'string');
    assert.ok(error.correlation_id.length > 0, 'empty correlation_id');
    assert.match(result.content?.[0]?.text ?? '', /Tool 'sleep' timed out/);
    const r = await k.client.callTool({ name: 'echo', arguments: { text: 'next' } }, undefined, reqOpts);
    assert.deepEqual(r.content, [{ type: 'text', text: 'next' }]);
  });

keelTest('--idle-timeout 300 --max-timeout 600: progress keeps the idle clock alive, the max clock ends the call with isError layer max; no progress after it (TMO-1, TMO-3, PRG-1)',
  ['--idle-timeout', '300', '--max-timeout', '600'], async (k) => {
    const values = [];
    const call = k.client.callTool({ name: 'progress', arguments: { steps: 50, interval_ms: 100 } }, undefined, {
      timeout: 15000, onprogress: (p) => { values.push(p.progress); },
    });
    const callId = lastSentId(k, 'tools/call');
    const result = await call;
    assert.equal(result.isError, true, `expected isError: ${JSON.stringify(result)}`);
    const error = result.structuredContent?.error;
    assert.equal(error?.type, 'timeout', JSON.stringify(result));
    assert.equal(error.layer, 'max');
    assert.equal(error.limit_ms, 600);
    assert.ok(Number.isInteger(error.elapsed_ms) && error.elapsed_ms >= 600, `elapsed_ms ${error.elapsed_ms}`);
    assert.ok(typeof error.correlation_id === 'string' && error.correlation_id.length > 0, 'correlation_id');
    assert.ok(values.length >= 1, 'onprogress was never called');
    for (let i = 1; i < values.length; i++) {
      assert.ok(values[i] > values[i - 1], `progress not strictly increasing: ${JSON.stringify(values)}`);
    }
    await echoThenPing(k, 'after max');
    await settle(k, 400);
    const at = indexOfResponse(k, callId);
    const late = k.seen.slice(at + 1).filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === callId);
    assert.deepEqual(late, [], 'progress after the timeout result');
    assert.equal(responsesFor(k, callId).length, 1, 'exactly one response for the timed-out call');
  });
