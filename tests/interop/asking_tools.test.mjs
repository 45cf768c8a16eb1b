// Interop: tools that ask the client for input (MRTR-1), with the official MCP TypeScript SDK
// clients: v2 (@modelcontextprotocol/client) pinned to MCP 2026-07-28, where the question
// travels as an InputRequiredResult the client fulfils and retries, and v1
// (@modelcontextprotocol/sdk) on 2025-11-25, where keel sends the question as server-to-client
// requests (ids "keel-<n>") and runs the tool again with the responses.
// Run: node --test tests/interop/asking_tools.test.mjs   (scripts/test runs it too)
// The binary is $KEEL_BINARY, else <repo>/build/keel, started with --test-tools, which adds
// ask_name, ask_two_rounds and ask_everything (server/tools/asking_tools.h). Every test starts
// its own keel (fresh temporary directory, own KEEL_DB) and stops it.
//
// Raw traffic: both helpers tap the transport before connect, so k.sent and k.seen hold every
// message the client wrote and keel wrote, in order. keel handles its input in order on one
// loop and writes its output in order, so "nothing for id N before the response to a later
// request" is a real observation, not a timing guess. Waits are for conditions only, with
// bounds; nothing here asserts timing.
//
// What the clients do (SDK versions in package.json):
//  v2: a handler registered with setRequestHandler('elicitation/create' | 'sampling/createMessage'
//      | 'roots/list') answers the embedded inputRequests entry of that method (its
//      ctx.mcpReq.id is the entry's key); setRequestHandler refuses a method whose capability
//      the Client options do not declare, and the declared capabilities are what each
//      request's envelope carries. The retry carries only this round's inputResponses and the
//      requestState byte for byte, on a new JSON-RPC id.
//  v1: setRequestHandler(ElicitRequestSchema | CreateMessageRequestSchema |
//      ListRootsRequestSchema) likewise needs the capability declared in the Client options.
//      Its elicitation wrapper validates the request (ElicitRequestSchema) and the handler's
//      result (ElicitResultSchema; not the content against requestedSchema), and refuses a
//      form-mode request unless elicitation is {} or has `form` (keel's questions are form
//      mode: {} is enough). Its sampling wrapper validates the request and the result.
//  Neither client checks an accepted elicitation's content against requestedSchema: an
//  accept whose content does not fit goes to keel as it is (keel then ends ask_name
//  input_declined, action "accept").
//  v1, aborting a call whose question keel is waiting on: the SDK sends notifications/cancelled
//  for the call; keel abandons its question without telling the client, so the handler is not
//  aborted and its late answer reaches keel, which drops it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport, getDefaultEnvironment as v1DefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, ListRootsRequestSchema, McpError,
} from '@modelcontextprotocol/sdk/types.js';

import { KEEL, withTimeout } from './raw_keel.mjs';
import { MODERN, sdk2KeelTest } from './sdk2_keel.mjs';

const PIN = { pin: MODERN };
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const reqOpts = { timeout: 5000 };
const WAIT_MS = 10000;

const isResponse = (m) => 'id' in m && ('result' in m || 'error' in m);
const isRequest = (m) => 'id' in m && typeof m.method === 'string';
const responseTo = (msgs, id) => msgs.find((m) => isResponse(m) && m.id === id);
const responsesTo = (msgs, id) => msgs.filter((m) => isResponse(m) && m.id === id);
const indexOfResponse = (msgs, id) => msgs.findIndex((m) => isResponse(m) && m.id === id);
const sentRequests = (k, method) => k.sent.filter((m) => m.method === method && 'id' in m);
const dump = (msgs) => msgs.map((m) => JSON.stringify(m)).join('\n');

// The answers the tests' handlers give.
const ALICE = { action: 'accept', content: { name: 'Alice' } };
const PARIS = { role: 'assistant', content: { type: 'text', text: 'Paris.' }, model: 'm', stopReason: 'endTurn' };
const ROOTS = { roots: [{ uri: 'file:///tmp/keel-interop-root', name: 'project' }] };
const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const CAPITAL_QUESTION = { messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 };

// ---------------------------------------------------------------------------------------------
// v2 client, pinned to 2026-07-28.

// Options for sdk2KeelTest: a pinned client declaring `capabilities`, with `handlers`
// ({method: fn(request, ctx)}) registered before connect; every call a handler gets is
// recorded in `asked` as {method, key, params}.
function modern(capabilities, handlers = {}) {
  const asked = [];
  return {
    asked,
    options: {
      mode: PIN,
      clientOptions: { capabilities },
      setup: (client) => {
        for (const [method, fn] of Object.entries(handlers)) {
          client.setRequestHandler(method, async (request, ctx) => {
            asked.push({ method, key: ctx.mcpReq.id, params: request.params });
            return fn(request, ctx);
          });
        }
      },
    },
  };
}

// The tools/call requests of `tool` on the wire and keel's answer to each, as multi
// round-trip flows (a flow begins with a request without requestState), each checked: every
// leg but the last answered input_required (with a string requestState and no content), the
// last complete; each retry on a new id with the same name and arguments, answering what the
// previous leg asked, with its requestState echoed. Returns [[{request, result}]].
function modernFlows(k, tool, capabilities) {
  const calls = sentRequests(k, 'tools/call').filter((m) => m.params.name === tool);
  assert.ok(calls.length >= 1, `no tools/call ${tool} on the wire:\n${dump(k.sent)}`);
  const flows = [];
  for (const request of calls) {
    if (!('requestState' in request.params)) flows.push([]);
    assert.ok(flows.length > 0, `a retry before any first call:\n${dump(k.sent)}`);
    flows.at(-1).push(request);
  }
  return flows.map((flow) => checkFlow(k, flow, capabilities));
}

// The single flow of `tool` (see modernFlows).
function modernLegs(k, tool, capabilities) {
  const flows = modernFlows(k, tool, capabilities);
  assert.equal(flows.length, 1, `more than one call of ${tool}:\n${dump(k.sent)}`);
  return flows[0];
}

function checkFlow(k, calls, capabilities) {
  const legs = calls.map((request) => {
    assert.deepEqual(request.params._meta?.[CLIENT_CAPABILITIES_KEY], capabilities, JSON.stringify(request));
    const response = responseTo(k.seen, request.id);
    assert.ok(response?.result, `no result for tools/call id ${request.id}:\n${dump(k.seen)}`);
    assert.equal(response.result._meta?.[SERVER_INFO_KEY]?.name, 'keel', JSON.stringify(response));
    return { request, result: response.result };
  });
  legs.forEach(({ request, result }, i) => {
    const last = i === legs.length - 1;
    assert.equal(result.resultType, last ? 'complete' : 'input_required', `leg ${i + 1}: ${JSON.stringify(result)}`);
    if (!last) {
      assert.equal(typeof result.requestState, 'string', JSON.stringify(result));
      assert.equal('content' in result, false, `input_required with content: ${JSON.stringify(result)}`);
    }
    if (i === 0) {
      assert.equal('inputResponses' in request.params, false, JSON.stringify(request));
      assert.equal('requestState' in request.params, false, JSON.stringify(request));
      return;
    }
    const before = legs[i - 1];
    assert.notEqual(request.id, before.request.id, 'the retry reused the JSON-RPC id');
    assert.equal(request.params.name, before.request.params.name);
    assert.deepEqual(request.params.arguments, before.request.params.arguments);
    assert.equal(request.params.requestState, before.result.requestState, 'requestState not echoed byte for byte');
    assert.deepEqual(Object.keys(request.params.inputResponses ?? {}).sort(), Object.keys(before.result.inputRequests).sort(),
      `the retry does not answer what was asked: ${JSON.stringify(request)}`);
    // The retry left after keel's input_required answer.
    assert.ok(indexOfResponse(k.seen, before.request.id) < indexOfResponse(k.seen, request.id), dump(k.seen));
  });
  return legs;
}

{
  const { asked, options } = modern({ elicitation: {} }, { 'elicitation/create': () => ALICE });
  sdk2KeelTest('v2 client, ask_name: keel answers input_required asking user_name, the client\'s elicitation handler answers, the retry carries inputResponses and the requestState, and the tool greets (MRTR-1, ERA-4)', options, async (k) => {
    const result = await k.client.callTool({ name: 'ask_name', arguments: {} }, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Alice!' }]);

    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.equal(asked[0].key, 'user_name');
    assert.deepEqual(asked[0].params, { mode: 'form', message: 'What is your name?', requestedSchema: NAME_SCHEMA });

    // On the wire: two tools/call and nothing else (no elicitation response of its own).
    assert.deepEqual(k.sent.map((m) => m.method), ['tools/call', 'tools/call'], dump(k.sent));
    const [first, retry] = modernLegs(k, 'ask_name', { elicitation: {} });
    assert.deepEqual(Object.keys(first.result.inputRequests), ['user_name'], JSON.stringify(first.result));
    assert.deepEqual(first.result.inputRequests.user_name, { method: 'elicitation/create', params: asked[0].params });
    assert.deepEqual(retry.request.params.inputResponses, { user_name: ALICE });
    assert.equal(retry.request.params.requestState, first.result.requestState);
    assert.deepEqual(retry.result.content, [{ type: 'text', text: 'Hello, Alice!' }]);
    assert.deepEqual(k.errors, []);
  });
}

{
  const answers = [{ action: 'decline' }, { action: 'cancel' }];
  const { asked, options } = modern({ elicitation: {} }, { 'elicitation/create': () => answers[asked.length - 1] });
  sdk2KeelTest('v2 client, ask_name declined or cancelled in the handler: the call ends isError input_declined with the action (MRTR-1)', options, async (k) => {
    for (const action of ['decline', 'cancel']) {
      const result = await k.client.callTool({ name: 'ask_name', arguments: {} }, reqOpts);
      assert.equal(result.isError, true, JSON.stringify(result));
      assert.equal(result.structuredContent?.error?.type, 'input_declined', JSON.stringify(result));
      assert.equal(result.structuredContent.error.action, action, JSON.stringify(result));
    }
    assert.equal(asked.length, 2);
    const flows = modernFlows(k, 'ask_name', { elicitation: {} });
    assert.deepEqual(flows.map((legs) => legs.length), [2, 2], dump(k.sent));
    assert.deepEqual(flows.map(([, retry]) => retry.request.params.inputResponses), [{ user_name: answers[0] }, { user_name: answers[1] }]);
    assert.notEqual(flows[0][0].result.requestState, flows[1][0].result.requestState, 'two calls asked under one requestState');
  });
}

{
  const { asked, options } = modern({ elicitation: {} }, {
    'elicitation/create': (request) => (/color/.test(request.params.message)
      ? { action: 'accept', content: { color: 'blue' } } : ALICE),
  });
  sdk2KeelTest('v2 client, ask_two_rounds: three round trips, step1 then step2, round 2 under a new requestState, the earlier answer carried by keel\'s state (MRTR-1)', options, async (k) => {
    const result = await k.client.callTool({ name: 'ask_two_rounds', arguments: {} }, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'Alice likes blue (asked-step2 after asked-step1)' }]);

    assert.deepEqual(asked.map((a) => a.key), ['step1', 'step2'], JSON.stringify(asked));
    assert.equal(asked[0].params.message, 'Step 1: What is your name?');
    assert.equal(asked[1].params.message, 'Step 2: What is your favorite color?');
    assert.deepEqual(asked[1].params.requestedSchema, { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] });

    assert.deepEqual(k.sent.map((m) => m.method), ['tools/call', 'tools/call', 'tools/call'], dump(k.sent));
    const legs = modernLegs(k, 'ask_two_rounds', { elicitation: {} });
    assert.equal(legs.length, 3);
    assert.deepEqual(Object.keys(legs[0].result.inputRequests), ['step1']);
    assert.deepEqual(Object.keys(legs[1].result.inputRequests), ['step2']);
    assert.notEqual(legs[1].result.requestState, legs[0].result.requestState, 'round 2 reused the requestState of round 1');
    // The client sends only this round's answer; step1 travels inside keel's state.
    assert.deepEqual(legs[1].request.params.inputResponses, { step1: ALICE });
    assert.deepEqual(legs[2].request.params.inputResponses, { step2: { action: 'accept', content: { color: 'blue' } } });
    assert.equal(legs[2].request.params.requestState, legs[1].result.requestState);
    assert.deepEqual(k.errors, []);
  });
}

{
  const everything = { elicitation: {}, sampling: {}, roots: {} };
  const { asked, options } = modern(everything, {
    'elicitation/create': () => ALICE,
    'sampling/createMessage': () => PARIS,
    'roots/list': () => ROOTS,
  });
  sdk2KeelTest('v2 client declaring elicitation, sampling and roots, ask_everything: one round asks all three, each handler answers once, the tool reports all three (MRTR-1)', options, async (k) => {
    const result = await k.client.callTool({ name: 'ask_everything', arguments: {} }, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'name: Alice; capital: Paris.; roots: 1 root(s)' }]);

    const byKey = Object.fromEntries(asked.map((a) => [a.key, a]));
    assert.equal(asked.length, 3, JSON.stringify(asked));
    assert.equal(byKey.user_name?.method, 'elicitation/create');
    assert.equal(byKey.capital?.method, 'sampling/createMessage');
    assert.deepEqual(byKey.capital.params, CAPITAL_QUESTION);
    assert.equal(byKey.client_roots?.method, 'roots/list');

    const [first, retry] = modernLegs(k, 'ask_everything', everything);
    assert.deepEqual(Object.keys(first.result.inputRequests).sort(), ['capital', 'client_roots', 'user_name']);
    assert.deepEqual(retry.request.params.inputResponses.capital, PARIS);
    assert.deepEqual(retry.request.params.inputResponses.client_roots, ROOTS);
    assert.deepEqual(retry.request.params.inputResponses.user_name, ALICE);
    assert.deepEqual(k.errors, []);
  });
}

{
  const { asked, options } = modern({ sampling: {} }, { 'sampling/createMessage': () => PARIS });
  sdk2KeelTest('v2 client declaring only sampling, ask_everything: only capital is asked, the others answer "(not asked)" (MRTR-1)', options, async (k) => {
    const result = await k.client.callTool({ name: 'ask_everything', arguments: {} }, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'name: (not asked); capital: Paris.; roots: (not asked)' }]);
    assert.deepEqual(asked.map((a) => [a.key, a.method]), [['capital', 'sampling/createMessage']]);
    const [first, retry] = modernLegs(k, 'ask_everything', { sampling: {} });
    assert.deepEqual(Object.keys(first.result.inputRequests), ['capital'], JSON.stringify(first.result));
    assert.deepEqual(retry.request.params.inputResponses, { capital: PARIS });
  });
}

sdk2KeelTest('v2 client declaring nothing, ask_everything: the call rejects with -32021 and data.requiredCapabilities, nothing asked; keel goes on serving (MRTR-1, ERA-4)', { mode: PIN }, async (k) => {
  await assert.rejects(k.client.callTool({ name: 'ask_everything', arguments: {} }, reqOpts), (err) => {
    assert.ok(err instanceof ProtocolError, `not a ProtocolError: ${err?.constructor?.name} ${err}`);
    assert.equal(err.code, -32021, err.message);
    const required = err.data?.requiredCapabilities;
    assert.ok(required && typeof required === 'object', `data: ${JSON.stringify(err.data)}`);
    for (const capability of ['elicitation', 'sampling', 'roots']) {
      assert.ok(capability in required, `requiredCapabilities without ${capability}: ${JSON.stringify(required)}`);
    }
    return true;
  });
  const [request] = sentRequests(k, 'tools/call');
  assert.deepEqual(request.params._meta?.[CLIENT_CAPABILITIES_KEY], {}, JSON.stringify(request));
  const raw = responseTo(k.seen, request.id);
  assert.equal(raw?.error?.code, -32021, JSON.stringify(raw));
  assert.deepEqual(k.seen.filter((m) => m.result?.resultType === 'input_required'), [], dump(k.seen));
  assert.deepEqual(k.sent.map((m) => m.method), ['tools/call'], `the client retried:\n${dump(k.sent)}`);

  const echo = await k.client.callTool({ name: 'echo', arguments: { text: 'after -32021' } }, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'after -32021' }]);
});

// ---------------------------------------------------------------------------------------------
// v1 client, 2025-11-25: keel asks with server-to-client requests.

// Starts keel and connects a v1 Client with `capabilities`; setup(client) runs before connect
// (handlers). The transport is tapped before connect: k.sent (client -> keel) and k.seen
// (keel -> client), from initialize on. send is wrapped on the instance; onmessage, which the
// SDK's Protocol assigns at connect, becomes an accessor recording each message first.
async function startV1Keel({ capabilities, setup } = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'keel-asking-'));
  const transport = new V1StdioClientTransport({
    command: KEEL, args: ['--test-tools'], cwd, stderr: 'pipe',
    env: { ...v1DefaultEnvironment(), KEEL_DB: join(cwd, 'keel.db') },
  });
  const k = { transport, cwd, stderr: '', child: null, seen: [], sent: [], errors: [] };
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (d) => { k.stderr = (k.stderr + d).slice(-8000); });
  const origSend = transport.send.bind(transport);
  transport.send = (m, options) => { k.sent.push(structuredClone(m)); return origSend(m, options); };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true, enumerable: true,
    get: () => handler && ((m, extra) => { k.seen.push(m); handler(m, extra); }),
    set: (h) => { handler = h; },
  });
  k.client = new V1Client({ name: 'keel-asking-v1-test', version: '0.0.0' }, capabilities ? { capabilities } : undefined);
  k.client.onerror = (e) => { k.errors.push(String(e?.message ?? e)); };
  try {
    setup?.(k.client, k);
    const connecting = k.client.connect(transport, { timeout: 5000 });
    k.child = transport._process ?? null;  // read only, to kill a keel left running
    await connecting;
  } catch (err) {
    await stopV1Keel(k);
    throw err;
  }
  return k;
}

async function stopV1Keel(k) {
  const child = k.child ?? k.transport._process;
  try { await k.client.close(); } catch {}
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(k.cwd, { recursive: true, force: true });
}

function v1Test(name, { capabilities, setup, timeoutMs = 20000 } = {}, fn) {
  test(name, { timeout: timeoutMs }, async (t) => {
    let k = null;
    try {
      k = await startV1Keel({ capabilities, setup });
      await fn(k, t);
    } catch (err) {
      if (k?.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr}`;
      throw err;
    } finally {
      if (k) await stopV1Keel(k);
    }
  });
}

// keel's server-to-client requests on the wire.
const keelRequests = (k) => k.seen.filter(isRequest);

// Checks one legacy ask: the tools/call (last of `tool`), keel's requests while it ran (ids
// "keel-<n>", distinct, after the call and before its response, in `methods`' set), each
// answered by the client before keel's response to the call. Returns {call, asks, response}.
function legacyAsk(k, tool, methods) {
  const call = sentRequests(k, 'tools/call').filter((m) => m.params.name === tool).at(-1);
  assert.ok(call, `no tools/call ${tool}:\n${dump(k.sent)}`);
  assert.equal(call.params._meta?.[CLIENT_CAPABILITIES_KEY], undefined, 'a legacy call with the modern envelope');
  const at = indexOfResponse(k.seen, call.id);
  assert.ok(at >= 0, `no response to tools/call ${call.id}:\n${dump(k.seen)}`);
  const response = k.seen[at];
  // keel read every earlier request before this call and answered those the test awaited
  // before sending it: the call's questions come after the last of those answers.
  const earlier = new Set(k.sent.slice(0, k.sent.indexOf(call)).filter(isRequest).map((m) => m.id));
  const from = Math.max(-1, ...k.seen.map((m, i) => (isResponse(m) && earlier.has(m.id) ? i : -1)));
  const asks = k.seen.slice(from + 1, at).filter(isRequest);
  assert.deepEqual(asks.map((m) => m.method).sort(), [...methods].sort(), `keel's requests:\n${dump(k.seen)}`);
  for (const ask of asks) {
    assert.equal(typeof ask.id, 'string', JSON.stringify(ask));
    assert.match(ask.id, /^keel-\d+$/, JSON.stringify(ask));
    const answer = responseTo(k.sent, ask.id);
    assert.ok(answer, `the client never answered ${ask.id}:\n${dump(k.sent)}`);
    assert.ok(k.sent.indexOf(answer) > k.sent.indexOf(call), 'an answer before the call');
  }
  assert.equal(new Set(asks.map((m) => m.id)).size, asks.length, `ids reused: ${dump(asks)}`);
  return { call, asks, response };
}

{
  const asked = [];
  const answers = [ALICE, { action: 'decline' }];
  v1Test('v1 client declaring elicitation, ask_name: keel sends elicitation/create as request keel-<n>, the handler\'s answer greets "Hello, Alice!"; a decline ends isError input_declined (MRTR-1)', {
    capabilities: { elicitation: {} },
    setup: (client) => client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request);
      return answers[asked.length - 1];
    }),
  }, async (k) => {
    assert.equal(k.client.getServerVersion()?.name, 'keel');
    assert.deepEqual(k.sent[0].params.capabilities, { elicitation: {} }, JSON.stringify(k.sent[0]));
    const result = await k.client.callTool({ name: 'ask_name', arguments: {} }, undefined, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Alice!' }]);

    assert.equal(asked.length, 1);
    assert.deepEqual(asked[0].params, { mode: 'form', message: 'What is your name?', requestedSchema: NAME_SCHEMA });
    const { asks, response } = legacyAsk(k, 'ask_name', ['elicitation/create']);
    assert.deepEqual(responseTo(k.sent, asks[0].id), { jsonrpc: '2.0', id: asks[0].id, result: ALICE });
    assert.equal(response.result.resultType, undefined, 'a legacy result with resultType');
    assert.equal('inputRequests' in response.result, false, JSON.stringify(response));

    const declined = await k.client.callTool({ name: 'ask_name', arguments: {} }, undefined, reqOpts);
    assert.equal(declined.isError, true, JSON.stringify(declined));
    assert.equal(declined.structuredContent?.error?.type, 'input_declined', JSON.stringify(declined));
    assert.equal(declined.structuredContent.error.action, 'decline');
    const second = legacyAsk(k, 'ask_name', ['elicitation/create']);
    assert.notEqual(second.asks[0].id, asks[0].id, 'keel reused a request id');
    assert.deepEqual(k.errors, []);
  });
}

{
  const asked = [];
  v1Test('v1 client declaring elicitation, sampling and roots, ask_everything: keel sends all three requests at once, the tool reports all three answers (MRTR-1)', {
    capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } },
    setup: (client) => {
      client.setRequestHandler(ElicitRequestSchema, async (r) => { asked.push(r); return ALICE; });
      client.setRequestHandler(CreateMessageRequestSchema, async (r) => { asked.push(r); return PARIS; });
      client.setRequestHandler(ListRootsRequestSchema, async (r) => { asked.push(r); return ROOTS; });
    },
  }, async (k) => {
    const result = await k.client.callTool({ name: 'ask_everything', arguments: {} }, undefined, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'name: Alice; capital: Paris.; roots: 1 root(s)' }]);
    assert.deepEqual(asked.map((r) => r.method).sort(), ['elicitation/create', 'roots/list', 'sampling/createMessage']);
    const { asks } = legacyAsk(k, 'ask_everything', ['elicitation/create', 'sampling/createMessage', 'roots/list']);
    const sampling = asks.find((m) => m.method === 'sampling/createMessage');
    assert.deepEqual(sampling.params, CAPITAL_QUESTION);
    assert.deepEqual(responseTo(k.sent, sampling.id).result, PARIS);
    // One round: keel wrote the three requests together, one after the other.
    const where = asks.map((m) => k.seen.indexOf(m));
    assert.equal(Math.max(...where) - Math.min(...where), 2, dump(k.seen));
    assert.deepEqual(k.errors, []);
  });
}

{
  const asked = [];
  v1Test('v1 client declaring only elicitation, ask_everything: keel sends only elicitation/create, the others answer "(not asked)" (MRTR-1)', {
    capabilities: { elicitation: {} },
    setup: (client) => client.setRequestHandler(ElicitRequestSchema, async (r) => { asked.push(r); return ALICE; }),
  }, async (k) => {
    const result = await k.client.callTool({ name: 'ask_everything', arguments: {} }, undefined, reqOpts);
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.content, [{ type: 'text', text: 'name: Alice; capital: (not asked); roots: (not asked)' }]);
    assert.equal(asked.length, 1);
    legacyAsk(k, 'ask_everything', ['elicitation/create']);
  });
}

v1Test('v1 client declaring no capabilities, ask_name and ask_everything: isError input_unavailable naming the questions, no request sent to the client (MRTR-1)', {}, async (k) => {
  assert.deepEqual(k.sent[0].params.capabilities, {}, JSON.stringify(k.sent[0]));
  for (const tool of ['ask_name', 'ask_everything']) {
    const result = await k.client.callTool({ name: tool, arguments: {} }, undefined, reqOpts);
    assert.equal(result.isError, true, JSON.stringify(result));
    const error = result.structuredContent?.error;
    assert.equal(error?.type, 'input_unavailable', JSON.stringify(result));
    assert.ok(error.missingCapabilities && 'elicitation' in error.missingCapabilities, JSON.stringify(error));
    if (tool === 'ask_everything') {
      assert.ok('sampling' in error.missingCapabilities && 'roots' in error.missingCapabilities, JSON.stringify(error));
    }
  }
  assert.deepEqual(keelRequests(k), [], `keel asked a client that cannot answer:\n${dump(keelRequests(k))}`);
});

v1Test('v1 client whose elicitation handler throws, ask_name: the client answers keel-<n> with a JSON-RPC error, the call ends isError input_failed carrying it (MRTR-1)', {
  capabilities: { elicitation: {} },
  setup: (client) => client.setRequestHandler(ElicitRequestSchema, async () => {
    throw new McpError(ErrorCode.InvalidRequest, 'no user interface here');
  }),
}, async (k) => {
  const result = await k.client.callTool({ name: 'ask_name', arguments: {} }, undefined, reqOpts);
  assert.equal(result.isError, true, JSON.stringify(result));
  const error = result.structuredContent?.error;
  assert.equal(error?.type, 'input_failed', JSON.stringify(result));
  assert.equal(error.key, 'user_name', JSON.stringify(error));
  assert.equal(error.clientError?.code, ErrorCode.InvalidRequest, JSON.stringify(error));
  assert.match(error.clientError.message, /no user interface here/);
  const { asks } = legacyAsk(k, 'ask_name', ['elicitation/create']);
  const answer = responseTo(k.sent, asks[0].id);
  assert.equal(answer.error?.code, ErrorCode.InvalidRequest, JSON.stringify(answer));
  // keel keeps serving.
  const echo = await k.client.callTool({ name: 'echo', arguments: { text: 'after input_failed' } }, undefined, reqOpts);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'after input_failed' }]);
});

{
  // The first elicitation hangs until the test lets it go; later ones answer Bob.
  let release;
  const hung = new Promise((resolve) => { release = resolve; });
  let reached;
  const reachedHandler = new Promise((resolve) => { reached = resolve; });
  const asked = [];
  v1Test('v1 client cancels (AbortController) while keel waits for its elicitation answer: the call rejects, keel never answers it, keel cancels its own open question, and ping and the next ask_name work (CAN-1, CAN-2, MRTR-1)', {
    capabilities: { elicitation: {} },
    setup: (client) => client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      asked.push({ id: extra.requestId, signal: extra.signal });
      if (asked.length === 1) {
        reached();
        await hung;
        return { action: 'accept', content: { name: 'Too late' } };
      }
      return { action: 'accept', content: { name: 'Bob' } };
    }),
  }, async (k, t) => {
    try {
      const controller = new AbortController();
      const call = k.client.callTool({ name: 'ask_name', arguments: {} }, undefined, { timeout: 30000, signal: controller.signal });
      const rejected = assert.rejects(call, (err) => {
        assert.ok(err instanceof McpError, `not an McpError: ${err}`);
        assert.equal(err.code, ErrorCode.RequestTimeout);  // the SDK reports every abort as -32001
        assert.match(err.message, /user pressed stop/);
        return true;
      });
      const callId = sentRequests(k, 'tools/call').at(-1).id;
      await withTimeout(reachedHandler, 'keel\'s elicitation/create reaching the handler', WAIT_MS);
      const [ask] = keelRequests(k);
      assert.equal(ask?.method, 'elicitation/create', dump(k.seen));
      assert.match(ask.id, /^keel-\d+$/);
      controller.abort('user pressed stop');
      await rejected;
      const cancel = k.sent.find((m) => m.method === 'notifications/cancelled' && m.params?.requestId === callId);
      assert.ok(cancel, `the SDK sent no notifications/cancelled for ${callId}:\n${dump(k.sent)}`);

      // keel read the cancel before the ping: from the ping's answer on, nothing for the call.
      assert.deepEqual(await k.client.ping(reqOpts), {});
      // keel abandoned its question and cancels it at the client (its own request: not CAN-4),
      // so the SDK aborts the handler. Whatever the handler does later is dropped by keel.
      await withTimeout((async () => {
        while (!k.seen.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === ask.id)) {
          await new Promise((r) => setTimeout(r, 10));
        }
      })(), `keel's notifications/cancelled for its abandoned ${ask.id}`, WAIT_MS);
      release();
      const afterLate = k.seen.length;
      assert.deepEqual(await k.client.ping(reqOpts), {});
      const pingId = sentRequests(k, 'ping').at(-1).id;
      assert.deepEqual(k.seen.slice(afterLate).filter((m) => !(isResponse(m) && m.id === pingId)), [],
        `keel wrote something after the late answer:\n${dump(k.seen.slice(afterLate))}`);

      // The next question goes out under a new id and is answered.
      const next = await k.client.callTool({ name: 'ask_name', arguments: {} }, undefined, reqOpts);
      assert.deepEqual(next.content, [{ type: 'text', text: 'Hello, Bob!' }], JSON.stringify(next));
      const second = legacyAsk(k, 'ask_name', ['elicitation/create']);
      assert.notEqual(second.asks[0].id, ask.id);
      assert.deepEqual(await k.client.ping(reqOpts), {});
      assert.deepEqual(responsesTo(k.seen, callId), [], `keel answered the cancelled call:\n${dump(responsesTo(k.seen, callId))}`);
      assert.equal(asked.length, 2, 'the handler ran once per question');
    } finally {
      release();
    }
  });
}
