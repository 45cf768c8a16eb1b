// Interop: `keel wrap` in front of two official reference servers, driven by the official
// clients. Issue 22's proof "interop with the official v2 and v1 clients through keel wrap
// around server-filesystem and server-memory (pinned): list, read, write, cancel, a keyed
// create_entities retried twice -> one entity set".
// Run: node --test tests/interop/wrap_reference_servers.test.mjs   (or: npm run test:interop)
//
// The upstreams are the pinned devDependencies @modelcontextprotocol/server-filesystem and
// @modelcontextprotocol/server-memory (2026.8.31: v1 SDK servers, legacy 2025-11-25 over
// stdio), started by keel as `node <repo>/node_modules/.../dist/index.js ARGS` (never npx).
// The clients: the v1 SDK (@modelcontextprotocol/sdk, legacy 2025-11-25: initialize) and the
// v2 SDK (@modelcontextprotocol/client, pinned to modern 2026-07-28: server/discover, the
// _meta envelope), so one legacy upstream serves both eras through keel (WRAP-4).
// Every test starts its own `keel wrap --db <fresh dir>/keel.db --log-level info -- node ...`
// in a fresh temporary directory, and ends by closing the client and checking that keel
// exited by itself (code 0) and that the upstream it started (its pid from keel's log line
// "upstream server started (pid N)") and that pid's process group are gone (WRAP-3).
// Both taps (k.sent: every line the client wrote; k.seen: every line keel wrote) are
// installed before connect, as in sdk2_keel.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { closeSync, constants as FS, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Transport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Transport } from '@modelcontextprotocol/client/stdio';

import { KEEL, REPO, spawnLines, rpcClient, withTimeout } from '../support/keel_process.mjs';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const KEY = 'dev.keel/idempotency-key';
const REPLAYED = 'dev.keel/replayed';
const reqOpts = { timeout: 8000 };

const pkgEntry = (name) => join(REPO, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');
const FS_ENTRY = pkgEntry('server-filesystem');
const MEMORY_ENTRY = pkgEntry('server-memory');
const EVERYTHING_ENTRY = pkgEntry('server-everything');
for (const entry of [KEEL, FS_ENTRY, MEMORY_ENTRY, EVERYTHING_ENTRY]) {
  if (!existsSync(entry)) {
    throw new Error(`${entry} not found: run scripts/build, and npm install (server-filesystem and server-memory 2026.8.31 are pinned devDependencies)`);
  }
}

// The upstream command keel runs: this very node, the package's entry, its arguments.
const UPSTREAMS = {
  filesystem: (dir) => ({ argv: [process.execPath, FS_ENTRY, dir], env: {} }),
  memory: (dir) => ({ argv: [process.execPath, MEMORY_ENTRY], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } }),
  everything: () => ({ argv: [process.execPath, EVERYTHING_ENTRY, 'stdio'], env: {} }),
};

const isResponse = (m) => 'id' in m && ('result' in m || 'error' in m);
const responsesTo = (k, id) => k.seen.filter((m) => isResponse(m) && m.id === id);
const sentCalls = (k, name) => k.sent.filter((m) => m.method === 'tools/call' && 'id' in m && m.params?.name === name);
const dump = (msgs) => msgs.map((m) => JSON.stringify(m)).join('\n');
const textOf = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

// The SDKs probe in place on a stdio transport that is not exactly their base class, so the
// v2 client's server/discover goes to the session keel (no sibling keel, no second upstream).
class InPlaceV2Transport extends V2Transport {}

const UPSTREAM_STARTED = /upstream server started \(pid (\d+)\)/;

// Starts `keel wrap` for `upstream` ('filesystem' or 'memory') with `era` 'legacy' (v1
// client) or 'modern' (v2 client pinned to 2026-07-28). dir holds the upstream's files and
// keel.db; keel runs in it. Returns k: client, transport, era, dir, db, stderr (all of it,
// bounded), upstreamPid (from keel's log), sent, seen, errors, child, exit.
async function startWrapped({ era, upstream, dir, extraKeelArgs = [] }) {
  const up = UPSTREAMS[upstream](dir);
  const db = join(dir, 'keel.db');
  const args = ['wrap', '--db', db, '--log-level', 'info', ...extraKeelArgs, '--', ...up.argv];
  const env = { ...getDefaultEnvironment(), ...up.env };
  const Transport = era === 'modern' ? InPlaceV2Transport : V1Transport;
  const transport = new Transport({ command: KEEL, args, cwd: dir, stderr: 'pipe', env });
  const k = { transport, era, upstream, dir, db, stderr: '', upstreamPid: null, sent: [], seen: [], errors: [], child: null, exit: null };
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (d) => {
    k.stderr = (k.stderr + d).slice(-200000);
    const m = k.upstreamPid === null && UPSTREAM_STARTED.exec(k.stderr);
    if (m) k.upstreamPid = Number(m[1]);
  });
  const origSend = transport.send.bind(transport);
  transport.send = (m, options) => { k.sent.push(structuredClone(m)); return origSend(m, options); };
  let handler;
  const recorded = new WeakSet();
  Object.defineProperty(transport, 'onmessage', {
    configurable: true, enumerable: true,
    get: () => {
      const h = handler;
      return h && ((m, extra) => {
        if (!recorded.has(m)) { recorded.add(m); k.seen.push(m); }
        h(m, extra);
      });
    },
    set: (h) => { handler = h; },
  });
  k.client = era === 'modern'
    ? new V2Client({ name: 'keel-wrap-interop-v2', version: '0.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
    : new V1Client({ name: 'keel-wrap-interop-v1', version: '0.0.0' });
  k.client.onerror = (e) => { k.errors.push(String(e?.message ?? e)); };
  // tools/call: the v1 client takes (params, resultSchema, options), the v2 one (params, options).
  k.call = era === 'modern'
    ? (params, options = reqOpts) => k.client.callTool(params, options)
    : (params, options = reqOpts) => k.client.callTool(params, undefined, options);
  const connecting = k.client.connect(transport, { timeout: 20000 });
  // The ChildProcess is private to the transport; read only to learn keel's exit.
  const watchChild = () => {
    if (k.child || !transport._process) return;
    k.child = transport._process;
    k.child.once('exit', (code, signal) => { k.exit = { code, signal }; });
  };
  watchChild();
  try {
    await connecting;
  } catch (err) {
    watchChild();
    await forceStop(k);
    if (err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr.slice(-6000)}`;
    throw err;
  }
  watchChild();
  return k;
}

function processState(pid) {
  try { return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? '?'; } catch { return 'gone'; }
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch (e) { assert.equal(e.code, 'ESRCH', String(e)); return false; }
}

// The upstream pid (and its process group: keel starts it as a group leader) must be gone.
async function assertUpstreamGone(pid, what) {
  assert.ok(Number.isInteger(pid) && pid > 1, `${what}: no "upstream server started (pid N)" line in keel's stderr`);
  const deadline = performance.now() + 1000;  // a reaped zombie may linger a moment
  while ((alive(pid) || alive(-pid)) && performance.now() < deadline) await sleep(20);
  const survivor = alive(pid) ? `pid ${pid} (state ${processState(pid)})` : alive(-pid) ? `process group ${pid}` : null;
  if (survivor) {
    try { process.kill(-pid, 'SIGKILL'); } catch {}
    try { process.kill(pid, 'SIGKILL'); } catch {}
  }
  assert.equal(survivor, null, `${what}: the upstream outlived keel: ${survivor}`);
}

// Closes the client (stdin EOF to keel), then checks that keel exited by itself with 0, that
// keel wrote nothing but JSON-RPC (the SDKs report any other line to onerror), and that no
// upstream process survived it (WRAP-3).
async function closeAndAssertClean(k) {
  const child = k.child;
  const pid = k.upstreamPid;
  assert.ok(child, 'no keel child process');
  const exited = k.exit ? Promise.resolve() : new Promise((r) => child.once('exit', r));
  const t0 = performance.now();
  await k.client.close();
  await withTimeout(exited, 'keel to exit after the client closed', 6000);
  const ms = performance.now() - t0;
  assert.deepEqual(k.exit, { code: 0, signal: null }, `keel's exit after stdin EOF (${ms.toFixed(0)} ms; the v1 SDK sends SIGTERM after 2 s)`);
  assert.ok(ms < 2000, `keel took ${ms.toFixed(0)} ms to exit after stdin EOF`);
  await assertUpstreamGone(pid, `${k.upstream} behind keel (${k.era} client)`);
  assert.deepEqual(k.errors, [], `the client reported errors (e.g. a non-JSON-RPC line on keel's stdout):\n${k.errors.join('\n')}`);
  k.closed = true;
}

async function forceStop(k) {
  const child = k.child ?? k.transport._process;
  try { await k.client.close(); } catch {}
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (k.upstreamPid && alive(k.upstreamPid)) { try { process.kill(-k.upstreamPid, 'SIGKILL'); } catch {} }
}

// One test with its own directory and keel (filesystem: the directory is the allowed root;
// memory: MEMORY_FILE_PATH in it). fn(k, t) must end with closeAndAssertClean(k).
function wrapTest(name, { era, upstream, timeoutMs = 20000, setup }, fn) {
  test(name, { timeout: timeoutMs }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), `keel-wrap-${upstream}-`));
    let k = null;
    try {
      setup?.(dir);
      k = await startWrapped({ era, upstream, dir });
      assert.equal(k.client.getServerVersion()?.name, 'keel', 'serverInfo: keel answers the handshake itself');
      if (era === 'modern') {
        assert.equal(k.client.getProtocolEra(), 'modern');
        assert.equal(k.client.getNegotiatedProtocolVersion(), MODERN);
        const init = k.sent.filter((m) => m.method === 'initialize');
        assert.deepEqual(init, [], 'the modern client sent initialize');
      } else {
        const init = k.sent.find((m) => m.method === 'initialize');
        const answer = k.seen.find((m) => isResponse(m) && m.id === init?.id);
        assert.equal(answer?.result?.protocolVersion, LEGACY, dump(k.seen));
      }
      await fn(k, t);
      assert.ok(k.closed, 'the test did not close its keel');
    } catch (err) {
      if (k?.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr.slice(-6000)}`;
      throw err;
    } finally {
      if (k && !k.closed) await forceStop(k);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

// The upstream's own tools/list, asked once directly (no keel), per server.
const directLists = new Map();
async function upstreamTools(upstream) {
  if (directLists.has(upstream)) return directLists.get(upstream);
  const dir = mkdtempSync(join(tmpdir(), `keel-wrap-direct-${upstream}-`));
  try {
    const up = UPSTREAMS[upstream](dir);
    const transport = new V1Transport({ command: up.argv[0], args: up.argv.slice(1), cwd: dir, stderr: 'pipe', env: { ...getDefaultEnvironment(), ...up.env } });
    transport.stderr.resume();
    const client = new V1Client({ name: 'direct', version: '0' });
    await client.connect(transport, { timeout: 10000 });
    const { tools } = await client.listTools(undefined, reqOpts);
    await client.close();
    directLists.set(upstream, tools);
    return tools;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// tools/list through keel: the upstream's tools, same names, titles, descriptions and schemas.
// Effect annotations may be rewritten to keel's class; the read/write split must not change.
async function assertSameTools(k) {
  const direct = await upstreamTools(k.upstream);
  const { tools } = await k.client.listTools(undefined, reqOpts);
  assert.deepEqual(tools.map((x) => x.name).sort(), direct.map((x) => x.name).sort(), 'tool names through keel vs the upstream alone');
  for (const mine of direct) {
    const got = tools.find((x) => x.name === mine.name);
    for (const field of ['title', 'description', 'inputSchema', 'outputSchema']) {
      assert.deepEqual(got[field], mine[field], `${mine.name}.${field} through keel vs the upstream alone`);
    }
    assert.equal(got.annotations?.readOnlyHint === true, mine.annotations?.readOnlyHint === true, `${mine.name}: readOnlyHint ${JSON.stringify(got.annotations)} vs ${JSON.stringify(mine.annotations)}`);
  }
  return tools;
}

// ---------------------------------------------------------------------------------------
// server-filesystem: list, read, write, list_directory.

for (const era of ['legacy', 'modern']) {
  const who = era === 'modern' ? 'v2 client (2026-07-28)' : 'v1 client (2025-11-25)';
  wrapTest(`WRAP-1 WRAP-4 server-filesystem through keel wrap, ${who}: tools/list equals the upstream's own list; read_text_file, write_file then read back, list_directory`, {
    era, upstream: 'filesystem', setup: (dir) => writeFileSync(join(dir, 'hello.txt'), 'hello from the temp dir\n'),
  }, async (k) => {
    const { dir } = k;
    const tools = await assertSameTools(k);
    for (const name of ['read_text_file', 'write_file', 'list_directory', 'edit_file', 'directory_tree']) {
      assert.ok(tools.some((x) => x.name === name), `${name} missing from ${tools.map((x) => x.name)}`);
    }

    const read = await k.call({ name: 'read_text_file', arguments: { path: join(dir, 'hello.txt') } }, reqOpts);
    assert.notEqual(read.isError, true, JSON.stringify(read));
    assert.equal(textOf(read), 'hello from the temp dir\n');
    assert.deepEqual(read.structuredContent, { content: 'hello from the temp dir\n' });

    const written = join(dir, `written-${era}.txt`);
    const body = `written through keel by the ${who}\nline 2 ✓\n`;
    const write = await k.call({ name: 'write_file', arguments: { path: written, content: body } }, reqOpts);
    assert.notEqual(write.isError, true, JSON.stringify(write));
    assert.match(textOf(write), /Successfully wrote/);
    assert.equal(readFileSync(written, 'utf8'), body, 'the file on disk');
    const back = await k.call({ name: 'read_text_file', arguments: { path: written } }, reqOpts);
    assert.equal(textOf(back), body);

    const list = await k.call({ name: 'list_directory', arguments: { path: dir } }, reqOpts);
    assert.notEqual(list.isError, true, JSON.stringify(list));
    const entries = textOf(list).split('\n').filter(Boolean).sort();
    // keel.db (and its -wal/-shm) live in the same directory: only the test's files are checked.
    assert.ok(entries.includes('[FILE] hello.txt'), textOf(list));
    assert.ok(entries.includes(`[FILE] written-${era}.txt`), textOf(list));

    // A path outside the allowed directory: the upstream's own isError result, passed through.
    const denied = await k.call({ name: 'read_text_file', arguments: { path: '/etc/hostname' } }, reqOpts);
    assert.equal(denied.isError, true, JSON.stringify(denied));
    assert.match(textOf(denied), /Access denied|outside allowed/i, JSON.stringify(denied));

    // The upstream's stderr reaches keel's log with the prefix; nothing of it on stdout.
    assert.match(k.stderr, /\[upstream\] Secure MCP Filesystem Server running on stdio/);
    await closeAndAssertClean(k);
  });
}

// A cancel. server-filesystem has no slow tool; read_text_file of a FIFO in the allowed
// directory blocks in the upstream (fs.readFile waits for a writer) until the test writes it,
// so the call is surely in flight when the client aborts it, and the upstream can answer
// late, after the cancel, once the test feeds the FIFO.
for (const era of ['legacy', 'modern']) {
  const who = era === 'modern' ? 'v2 client (2026-07-28)' : 'v1 client (2025-11-25)';
  wrapTest(`WRAP-1 WRAP-4 server-filesystem cancel through keel wrap, ${who}: an AbortSignal on a read blocked upstream sends notifications/cancelled, keel never answers the call (not even once the upstream could), and keeps serving`, {
    era, upstream: 'filesystem',
    setup: (dir) => {
      const r = spawnSync('mkfifo', [join(dir, 'slow.fifo')], { encoding: 'utf8' });
      assert.equal(r.status, 0, `mkfifo: ${r.stderr}`);
    },
  }, async (k) => {
    const { dir } = k;
    const fifo = join(dir, 'slow.fifo');
    const controller = new AbortController();
    const blocked = k.call({ name: 'read_text_file', arguments: { path: fifo } }, { ...reqOpts, signal: controller.signal });
    const rejected = assert.rejects(blocked, (err) => {
      assert.match(String(err?.message ?? err), /test cancels/);
      return true;
    });
    // keel reads its input in order: once this call is answered, the read was taken too.
    await k.call({ name: 'list_allowed_directories', arguments: {} }, reqOpts);
    const blockedId = sentCalls(k, 'read_text_file')[0]?.id;
    assert.notEqual(blockedId, undefined, dump(k.sent));
    assert.deepEqual(responsesTo(k, blockedId), [], 'the read of an unwritten FIFO was answered');

    controller.abort('test cancels');
    await rejected;
    const cancels = k.sent.filter((m) => m.method === 'notifications/cancelled');
    assert.equal(cancels.length, 1, dump(k.sent));
    assert.equal(cancels[0].params.requestId, blockedId);

    // Feed the FIFO: the upstream's read now finishes (whether it answers depends on the
    // upstream; keel must drop it either way). O_NONBLOCK: ENXIO while no reader has it open
    // (the upstream has not reached its open yet), instead of blocking this process.
    let fd = null;
    const deadline = performance.now() + 3000;
    while (fd === null) {
      try { fd = openSync(fifo, FS.O_WRONLY | FS.O_NONBLOCK); } catch (e) {
        if (e.code !== 'ENXIO' || performance.now() > deadline) throw new Error(`the upstream never opened the FIFO for reading: ${e}`);
        await sleep(20);
      }
    }
    writeSync(fd, 'late answer\n');
    closeSync(fd);

    // keel keeps serving, the upstream too; a fresh read of the same FIFO works.
    const again = k.call({ name: 'read_text_file', arguments: { path: fifo } }, reqOpts);
    await sleep(300);  // time for the upstream's late answer (if any) to reach keel
    fd = null;
    while (fd === null) {
      try { fd = openSync(fifo, FS.O_WRONLY | FS.O_NONBLOCK); } catch (e) {
        if (e.code !== 'ENXIO' || performance.now() > deadline + 3000) throw new Error(`the second read never opened the FIFO: ${e}`);
        await sleep(20);
      }
    }
    writeSync(fd, 'second read\n');
    closeSync(fd);
    const second = await again;
    assert.equal(textOf(second), 'second read\n', JSON.stringify(second));
    await k.call({ name: 'list_allowed_directories', arguments: {} }, reqOpts);
    assert.deepEqual(responsesTo(k, blockedId), [], `keel answered the cancelled call:\n${dump(k.seen)}`);
    const progress = k.seen.filter((m) => m.method === 'notifications/progress');
    assert.deepEqual(progress, [], dump(progress));
    await closeAndAssertClean(k);
  });
}

// ---------------------------------------------------------------------------------------
// server-memory: keyed create_entities run once, retries replayed (WRAP-2).
//
// server-memory's create_entities skips names it already has and then rewrites its file
// (write to a temporary file, rename over): so a second real run answers {entities: []} and
// gives the file a new inode. A replay answers what the first run answered and leaves the
// file alone.

const inode = (path) => statSync(path).ino;

async function readGraph(k) {
  const r = await k.call({ name: 'read_graph', arguments: {} }, reqOpts);
  assert.notEqual(r.isError, true, JSON.stringify(r));
  return r.structuredContent;
}

for (const era of ['legacy', 'modern']) {
  const who = era === 'modern' ? 'v2 client (2026-07-28)' : 'v1 client (2025-11-25)';
  wrapTest(`WRAP-2 WRAP-4 server-memory through keel wrap, ${who}: create_entities with _meta dev.keel/idempotency-key sent three times (new ids, same key) runs once, the retries are replayed, read_graph shows one entity set; without a key a write runs every time`, {
    era, upstream: 'memory',
  }, async (k) => {
    const { dir } = k;
    const memoryFile = join(dir, 'memory.jsonl');
    const tools = await assertSameTools(k);
    // Effect classes from the annotations: no readOnlyHint -> a write (create_entities:
    // idempotentHint false, an unsafe write); read_graph is a read.
    const ann = (name) => tools.find((x) => x.name === name)?.annotations ?? {};
    assert.notEqual(ann('create_entities').readOnlyHint, true, JSON.stringify(ann('create_entities')));
    assert.notEqual(ann('create_entities').idempotentHint, true, JSON.stringify(ann('create_entities')));
    assert.equal(ann('read_graph').readOnlyHint, true, JSON.stringify(ann('read_graph')));

    const key = randomUUID();
    const entities = [
      { name: `Ada-${era}`, entityType: 'person', observations: ['wrote the first program', 'liked engines'] },
      { name: `Engine-${era}`, entityType: 'machine', observations: ['analytical'] },
    ];
    const call = () => k.call({ name: 'create_entities', arguments: { entities }, _meta: { [KEY]: key } }, reqOpts);

    const first = await call();
    assert.notEqual(first.isError, true, JSON.stringify(first));
    assert.deepEqual(first.structuredContent, { entities }, JSON.stringify(first));
    assert.notEqual(first._meta?.[REPLAYED], true, `the first run is marked replayed: ${JSON.stringify(first)}`);
    const inodeAfterFirst = inode(memoryFile);

    const retries = [await call(), await call()];
    const ids = sentCalls(k, 'create_entities').map((m) => m.id);
    assert.equal(new Set(ids).size, 3, `three requests with three ids: ${JSON.stringify(ids)}`);
    for (const m of sentCalls(k, 'create_entities')) assert.equal(m.params._meta?.[KEY], key, JSON.stringify(m));
    for (const [i, r] of retries.entries()) {
      assert.notEqual(r.isError, true, `retry ${i + 1}: ${JSON.stringify(r)}`);
      assert.equal(r._meta?.[REPLAYED], true, `retry ${i + 1} not marked replayed: ${JSON.stringify(r)}`);
      // The first run's answer, not a second run's (which would be {entities: []}).
      assert.deepEqual(r.structuredContent, first.structuredContent, `retry ${i + 1}`);
      assert.deepEqual(r.content, first.content, `retry ${i + 1}`);
      // On the wire too (the client could strip _meta): keel's raw response says replayed.
      const raw = responsesTo(k, ids[i + 1]);
      assert.equal(raw.length, 1, dump(k.seen));
      assert.equal(raw[0].result?._meta?.[REPLAYED], true, JSON.stringify(raw[0]));
    }
    assert.equal(inode(memoryFile), inodeAfterFirst, 'the upstream rewrote its memory file: create_entities ran again');

    const graph = await readGraph(k);
    assert.deepEqual(graph, { entities, relations: [] }, JSON.stringify(graph));
    const lines = readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.name), entities.map((e) => e.name), 'the memory file on disk');

    // The same key with other arguments is not a retry: keel refuses it, nothing runs.
    const other = await k.call({ name: 'create_entities', arguments: { entities: [{ name: 'Mallory', entityType: 'person', observations: [] }] }, _meta: { [KEY]: key } }, reqOpts);
    assert.equal(other.isError, true, `a key reused with other arguments: ${JSON.stringify(other)}`);
    assert.equal(inode(memoryFile), inodeAfterFirst, 'a key reused with other arguments reached the upstream');

    // A write without a key needs nothing more: it runs, every time (the second run finds
    // the name and answers [] - it really ran, it was not replayed).
    const extra = [{ name: `Babbage-${era}`, entityType: 'person', observations: ['designed it'] }];
    const plain = () => k.call({ name: 'create_entities', arguments: { entities: extra } }, reqOpts);
    const p1 = await plain();
    assert.notEqual(p1.isError, true, JSON.stringify(p1));
    assert.deepEqual(p1.structuredContent, { entities: extra });
    assert.notEqual(p1._meta?.[REPLAYED], true, JSON.stringify(p1));
    const inodeAfterPlain = inode(memoryFile);
    const p2 = await plain();
    assert.notEqual(p2.isError, true, JSON.stringify(p2));
    assert.deepEqual(p2.structuredContent, { entities: [] }, `an unkeyed write must run again: ${JSON.stringify(p2)}`);
    assert.notEqual(p2._meta?.[REPLAYED], true, JSON.stringify(p2));
    assert.notEqual(inode(memoryFile), inodeAfterPlain, 'the second unkeyed create_entities did not reach the upstream');

    const after = await readGraph(k);
    assert.deepEqual(after.entities.map((e) => e.name), [...entities, ...extra].map((e) => e.name));
    assert.deepEqual(after.entities[0].observations, entities[0].observations, 'observations duplicated');
    // The key is keel's: never forwarded (no overlay says the upstream takes it). The
    // upstream's strict output schema would refuse nothing here, so this is checked by the
    // upstream's behaviour above only; keel's stderr must not show an upstream error.
    assert.doesNotMatch(k.stderr, /\[upstream\].*(Error|error)/, 'the upstream logged an error');
    await closeAndAssertClean(k);
  });
}

// The ledger is durable (--db): a retry with the same key after keel (and the upstream)
// restarted is still a replay, and the upstream does not run it.
test('WRAP-2 server-memory through keel wrap, v1 client: a keyed create_entities retried after keel restarts on the same --db is replayed, not run again', { timeout: 20000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-wrap-memory-restart-'));
  const ks = [];
  try {
    const key = randomUUID();
    const entities = [{ name: 'Durable', entityType: 'thing', observations: ['survives a restart'] }];
    const call = (k) => k.call({ name: 'create_entities', arguments: { entities }, _meta: { [KEY]: key } }, reqOpts);
    const k1 = await startWrapped({ era: 'legacy', upstream: 'memory', dir });
    ks.push(k1);
    const first = await call(k1);
    assert.deepEqual(first.structuredContent, { entities }, JSON.stringify(first));
    await closeAndAssertClean(k1);
    const memoryFile = join(dir, 'memory.jsonl');
    const before = inode(memoryFile);

    const k2 = await startWrapped({ era: 'legacy', upstream: 'memory', dir });
    ks.push(k2);
    assert.notEqual(k2.upstreamPid, k1.upstreamPid);
    const retry = await call(k2);
    assert.equal(retry._meta?.[REPLAYED], true, `not replayed after a restart: ${JSON.stringify(retry)}`);
    assert.deepEqual(retry.structuredContent, first.structuredContent);
    assert.equal(inode(memoryFile), before, 'the upstream ran create_entities again after the restart');
    const graph = await readGraph(k2);
    assert.deepEqual(graph, { entities, relations: [] });
    await closeAndAssertClean(k2);
  } catch (err) {
    const tail = ks.at(-1)?.stderr;
    if (tail?.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${tail.slice(-6000)}`;
    throw err;
  } finally {
    for (const k of ks) if (!k.closed) await forceStop(k);
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------
// An upstream tool that runs only as a task (2025-11-25 execution.taskSupport "required"):
// server-everything's simulate-research-query (four stages of a second). A plain tools/call
// of it is refused by the upstream (-32601); keel calls it as a task, waits on tasks/result,
// and the client, of either era, gets the report as an ordinary result.

for (const era of ['legacy', 'modern']) {
  wrapTest(`WRAP-1 server-everything through keel wrap, ${era === 'modern' ? 'v2' : 'v1'} client: simulate-research-query, which the upstream runs only as a task, answers with its report (keel drives the upstream task)`,
    { era, upstream: 'everything', timeoutMs: 30000 }, async (k) => {
      const listed = await k.client.listTools();
      assert.ok(listed.tools.some((tool) => tool.name === 'simulate-research-query'), JSON.stringify(listed.tools.map((tool) => tool.name)));
      const result = await k.call({ name: 'simulate-research-query', arguments: { topic: 'keel wrap' } }, { timeout: 20000 });
      assert.ok(!result.isError, JSON.stringify(result));
      assert.match(textOf(result), /keel wrap/, JSON.stringify(result));
      const call = sentCalls(k, 'simulate-research-query');
      assert.equal(call.length, 1);
      assert.equal(call[0].params.task, undefined, 'the client did not ask for a task: keel did, upstream');
      await closeAndAssertClean(k);
    });
}

// ---------------------------------------------------------------------------------------
// keel's stdout and the upstream's end, seen raw (WRAP-3, WRAP-1): every byte keel writes is
// a JSON-RPC line; after stdin EOF keel exits 0 and leaves no upstream process behind.

for (const upstream of ['filesystem', 'memory']) {
  test(`WRAP-3 WRAP-1 ${upstream} behind keel wrap, raw client: keel's stdout is only JSON-RPC lines, its stderr has the upstream's pid and its [upstream] lines; after stdin EOF keel exits 0 and the upstream and its process group are gone`, { timeout: 20000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), `keel-wrap-raw-${upstream}-`));
    const up = UPSTREAMS[upstream](dir);
    const p = spawnLines(KEEL, ['wrap', '--db', join(dir, 'keel.db'), '--log-level', 'info', '--', ...up.argv], {
      cwd: dir, env: { ...process.env, ...up.env }, keepStdout: true, stderrLimit: 200000,
    });
    try {
      const c = rpcClient(p, { waitMs: 10000 });
      const init = await c.initialize({ protocolVersion: LEGACY, clientName: 'raw-wrap' });
      assert.equal(init.serverInfo?.name, 'keel');
      const list = await c.request('tools/list', {});
      assert.ok(list.result?.tools?.length > 0, JSON.stringify(list));
      const name = upstream === 'memory' ? 'read_graph' : 'list_allowed_directories';
      const r = await c.request('tools/call', { name, arguments: {} });
      assert.ok(r.result && r.result.isError !== true, JSON.stringify(r));
      const pid = Number(UPSTREAM_STARTED.exec(p.stderr)?.[1]);
      assert.ok(alive(pid), `upstream pid ${pid} not running while keel serves:\n${p.stderr}`);
      const exit = await c.close(6000);
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
      await p.stdoutEnded;
      // Every line parsed already (rpcClient's JSON.parse would have thrown); check the bytes.
      assert.ok(p.stdout.endsWith('\n'), 'keel left a partial line on stdout');
      for (const line of p.stdout.split('\n').slice(0, -1)) {
        const m = JSON.parse(line);
        assert.equal(m.jsonrpc, '2.0', line);
      }
      assert.equal(c.messages.length, 3, `keel wrote more than the three answers:\n${p.stdout}`);
      if (upstream === 'filesystem') assert.match(p.stderr, /\[upstream\] Secure MCP Filesystem Server running on stdio/);
      await assertUpstreamGone(pid, `${upstream} behind keel (raw client)`);
    } catch (err) {
      if (p.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${p.stderr.slice(-6000)}`;
      throw err;
    } finally {
      if (p.exit === null) p.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
