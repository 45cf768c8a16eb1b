// Interop: keel driven by the official MCP TypeScript SDK client over stdio.
// Run: npm run test:interop   (or: node --test tests/interop/)
// The binary is $KEEL_BINARY, else <repo>/build/keel; it is started with --test-tools.
// Every test starts its own keel (in a fresh temporary working directory) and stops it.
import assert from 'node:assert/strict';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { sdkKeelTest } from './sdk_keel.mjs';

const TEST_TIMEOUT_MS = 15000;
const REQUEST_TIMEOUT_MS = 5000;
const EXIT_BUDGET_MS = 2000;
const reqOpts = { timeout: REQUEST_TIMEOUT_MS };

// A real wait, used only to poll whether keel's pid is gone: process exit has no event to
// await when the SDK owns the child. The 2 s bound is the hosts' SIGTERM deadline, not a
// performance figure.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if (e.code === 'ESRCH') return false;
    throw e; // EPERM would mean the pid was reused by someone else's process
  }
}

function keelTest(name, fn) {
  sdkKeelTest(name, { timeoutMs: TEST_TIMEOUT_MS }, fn);
}

keelTest('initialize: serverInfo is keel, protocol 2025-11-25, capabilities tools, logging and tasks for tools/call', async ({ client, negotiated }) => {
  const info = client.getServerVersion();
  assert.equal(info?.name, 'keel');
  assert.equal(typeof info?.version, 'string');
  assert.equal(negotiated, '2025-11-25');
  const caps = client.getServerCapabilities();
  assert.ok(caps?.tools, `tools capability missing: ${JSON.stringify(caps)}`);
  assert.ok(caps?.logging, `logging capability missing: ${JSON.stringify(caps)}`);
  assert.deepEqual(caps?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    `tasks capability: ${JSON.stringify(caps)}`);
  await client.close();
});

keelTest('tools/list: echo is listed, every inputSchema is an object schema, names are valid', async ({ client }) => {
  const { tools } = await client.listTools(undefined, reqOpts);
  const names = tools.map((x) => x.name);
  assert.ok(names.includes('echo'), `echo missing from ${JSON.stringify(names)}`);
  for (const name of ['sleep', 'progress', 'latch_wait', 'latch_release', 'fail']) {
    assert.ok(names.includes(name), `--test-tools tool ${name} missing from ${JSON.stringify(names)}`);
  }
  assert.equal(new Set(names).size, names.length, `duplicate tool names: ${JSON.stringify(names)}`);
  for (const tool of tools) {
    assert.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.equal(tool.inputSchema?.type, 'object', `${tool.name}: inputSchema.type`);
  }
  await client.close();
});

keelTest('tools/call echo returns its text as one text content item', async ({ client }) => {
  const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, reqOpts);
  assert.notEqual(result.isError, true);
  assert.deepEqual(result.content, [{ type: 'text', text: 'hi' }]);
  await client.close();
});

keelTest('ping is answered', async ({ client }) => {
  const result = await client.ping(reqOpts);
  assert.deepEqual(result, {});
  await client.close();
});

keelTest('logging/setLevel is accepted', async ({ client }) => {
  const result = await client.setLoggingLevel('warning', reqOpts);
  assert.deepEqual(result, {});
  await client.close();
});

keelTest('tools/call with arguments that fail the input schema is a tool error (isError), not a protocol error', async ({ client }) => {
  const result = await client.callTool({ name: 'echo', arguments: { text: 5 } }, undefined, reqOpts);
  assert.equal(result.isError, true, `expected isError: ${JSON.stringify(result)}`);
  assert.ok(Array.isArray(result.content) && result.content.length > 0, 'an error result should explain itself');
  await client.close();
});

keelTest('tools/call of an unknown tool rejects with McpError -32602 (invalid params)', async ({ client }) => {
  let result;
  try {
    result = await client.callTool({ name: 'no_such_tool', arguments: {} }, undefined, reqOpts);
  } catch (err) {
    assert.ok(err instanceof McpError, `not an McpError: ${err}`);
    assert.equal(err.code, ErrorCode.InvalidParams, `code ${err.code}: ${err.message}`);
    assert.equal(err.code, -32602);
    await client.close();
    return;
  }
  assert.fail(`expected a JSON-RPC error -32602, got a result: ${JSON.stringify(result)}`);
});

keelTest('client.close(): keel exits by itself (code 0, no signal) within 2 s of stdin EOF', async (k, t) => {
  const { client, pid, child } = k;
  assert.ok(Number.isInteger(pid) && pid > 0, `no pid: ${pid}`);
  // Make sure the server is idle-but-live before closing.
  await client.ping(reqOpts);
  const t0 = performance.now();
  // close() ends keel's stdin; the SDK sends SIGTERM only if keel is still running 2 s
  // later. Do not await it first: measure the exit independently by polling the pid.
  const closing = client.close();
  let gone = null;
  while (performance.now() - t0 < EXIT_BUDGET_MS + 3000) {
    if (!alive(pid)) { gone = performance.now() - t0; break; }
    await sleep(5);
  }
  await closing;
  assert.ok(gone !== null, `keel (pid ${pid}) still alive ${EXIT_BUDGET_MS + 3000} ms after close()`);
  assert.ok(gone < EXIT_BUDGET_MS, `keel took ${gone.toFixed(0)} ms to exit after stdin EOF (budget ${EXIT_BUDGET_MS} ms)`);
  if (child) {
    const ex = k.exit;
    assert.ok(ex, 'no exit event');
    assert.equal(ex.signal, null, `keel was killed by ${ex.signal}`);
    assert.equal(ex.code, 0, `keel exit code ${ex.code}`);
    assert.ok(ex.at - t0 < EXIT_BUDGET_MS, `exit event ${(ex.at - t0).toFixed(0)} ms after close()`);
  }
  t.diagnostic(`keel exited ${gone.toFixed(1)} ms after close()`);
});
