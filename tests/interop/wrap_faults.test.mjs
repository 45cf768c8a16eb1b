// Interop: `keel wrap` in front of a misbehaving upstream MCP server (WRAP-1, WRAP-2, WRAP-3).
// The upstream is tests/fakes/upstream/misbehaving_server.mjs, a legacy 2025-11-25 stdio server
// with one misbehaviour per flag (its header lists them); each test starts
//   keel wrap --db <fresh dir>/keel.db [flags] -- node misbehaving_server.mjs --<flag>...
// and speaks raw JSON-RPC to keel as a legacy client (raw_keel.mjs), then checks what the
// client saw through keel, and what the upstream did, against the contract of `keel wrap`:
//  - WRAP-1: a cancelled call is never answered, whatever the upstream does after the cancel;
//    keel's own clocks end a call the upstream never answers (the text names keel's clock);
//    progress is strictly increasing and never after the response; a flood of upstream
//    progress is read within bounds; an upstream that never reads the client's answer to its
//    elicitation does not stop keel serving;
//  - WRAP-2: a keyed write runs once per key through keel's ledger: a retry with the same key
//    replays, also across an upstream crash (then: a replay or needs_reconciliation, never a
//    second effect); a read lost to a crash is retried on the restarted upstream;
//  - WRAP-3: junk on the upstream's stdout never reaches the client; its stderr is logged with
//    "[upstream] "; an upstream that cannot start makes `keel wrap` exit 69; on shutdown no
//    process of the upstream survives, even one ignoring EOF and SIGTERM, nor its grandchild.
// Run: node --test tests/interop/wrap_faults.test.mjs   (KEEL_BINARY picks the binary)
//
// Waiting without racing: the fake appends every event to $FAKE_LOG_FILE ("answer <id> slow
// cancelled=true", "late-progress <id>", ...), and the tests wait (bounded) for the event
// instead of sleeping. To know keel has read everything the upstream wrote up to an event,
// a test then makes one more call through keel (echo): the upstream writes its answer after
// the event's, on the same pipe, and keel reads that pipe in order. Likewise keel reads the
// client's input in order, so once a ping sent after a cancel is answered, keel has read the
// cancel.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KEEL, startRawKeel, withTimeout } from './raw_keel.mjs';

const FAKE = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fakes', 'upstream', 'misbehaving_server.mjs');
const KEY_META = 'dev.keel/idempotency-key';
const TEST_MS = 15000;

// A poll interval only: what the tests wait for happens in other processes (a file the fake
// appends to, a process that dies); every wait has a deadline.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const show = (x) => JSON.stringify(x);
const isResponse = (m) => 'id' in m && ('result' in m || 'error' in m);
const responsesFor = (k, id) => k.messages.filter((m) => isResponse(m) && !('method' in m) && m.id === id);
const indexOfResponse = (k, id) => k.messages.findIndex((m) => isResponse(m) && !('method' in m) && m.id === id);
const progressFor = (k, token) => k.messages
  .map((m, at) => ({ m, at }))
  .filter(({ m }) => m.method === 'notifications/progress' && m.params?.progressToken === token);
const errorOf = (response) => response.result?.structuredContent?.error;
const textOf = (response) => (response.result?.content ?? []).map((c) => c.text ?? '').join('\n');

function linesOf(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
}

// The fake's pid file: one "<pid>" line per start, "grandchild <pid>" per grandchild.
function pidsOf(files) {
  const lines = linesOf(files.pids);
  return {
    starts: lines.filter((l) => /^\d+$/.test(l)).map(Number),
    grandchildren: lines.filter((l) => l.startsWith('grandchild ')).map((l) => Number(l.split(' ')[1])),
  };
}

async function waitUntil(what, ms, predicate) {
  const t0 = performance.now();
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

// The first line of the fake's event log matching `re` (its match), waiting up to ms.
const fakeEvent = (files, re, ms = 5000) =>
  waitUntil(`the fake to log ${re}`, ms, () => linesOf(files.log).map((l) => re.exec(l)).find(Boolean));

// /proc/<pid>/stat: {state, ppid}, or null when there is no such process.
function procState(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ESRCH') return null;
    throw e;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], ppid: Number(fields[1]) };
}

// Dead: kill(pid, 0) fails with ESRCH, or the process is a zombie whose parent is not keel.
// Why a zombie counts: the grandchild's parent (the fake) dies with it, so it is reparented to
// PID 1 (or a subreaper), and in this sandbox PID 1 does not reap orphans; a killed process
// may stay a zombie of PID 1 forever. That is dead, and nothing keel could reap.
function dead(pid, keelPid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code === 'ESRCH') return true;
    throw e;
  }
  const s = procState(pid);
  return s === null || (s.state === 'Z' && s.ppid !== keelPid);
}

function killQuietly(pid, signal = 'SIGKILL') {
  try { process.kill(pid, signal); } catch (e) { if (e.code !== 'ESRCH') throw e; }
}

// Starts `keel wrap [keelArgs] -- node misbehaving_server.mjs [flags]` in a fresh directory.
// files: pids, effects, log, once (the fake's FAKE_* files; with crashOnce, FAKE_CRASH_ONCE_FILE
// is `once`, so only the first --crash-mid-call crash happens). After the test keel is SIGKILLed
// if still running, then every process of the fake still alive (each start's process group,
// each grandchild), so a failing keel leaves nothing behind.
function startWrap(t, { flags = [], keelArgs = [], crashOnce = false } = {}) {
  // Not freshDir: its clean-up would run first (after-hooks run in the order they were added)
  // and remove the pid file this one reads.
  const dir = mkdtempSync(join(tmpdir(), 'keel-wrap-'));
  const files = {
    pids: join(dir, 'pids'), effects: join(dir, 'effects'), log: join(dir, 'fake.log'), once: join(dir, 'crashed-once'),
  };
  const k = startRawKeel(t, {
    binary: KEEL,
    args: ['wrap', '--db', join(dir, 'keel.db'), ...keelArgs, '--', process.execPath, FAKE, ...flags],
    env: {
      FAKE_PID_FILE: files.pids, FAKE_EFFECT_FILE: files.effects, FAKE_LOG_FILE: files.log,
      ...(crashOnce ? { FAKE_CRASH_ONCE_FILE: files.once } : {}),
    },
    cwd: dir,
    clientName: 'wrap-faults',
  });
  t.after(async () => {
    if (k.exit === null) {
      k.child.kill('SIGKILL');
      await k.exited;
    }
    const { starts, grandchildren } = pidsOf(files);
    for (const pid of starts) {
      if (!dead(pid, k.pid)) {
        killQuietly(-pid);
        killQuietly(pid);
      }
    }
    for (const pid of grandchildren) if (!dead(pid, k.pid)) killQuietly(pid);
    rmSync(dir, { recursive: true, force: true });
  });
  return { k, files, dir };
}

async function initialize(k, options) {
  try {
    return await k.initialize(options);
  } catch (e) {
    throw new Error(`${e.message}; keel's stderr:\n${k.stderr}`);
  }
}

const params = (name, args = {}, meta) => ({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
const call = (k, name, args, meta, waitMs = 10000) => k.request('tools/call', params(name, args, meta), { waitMs });

async function echo(k, text) {
  const r = await call(k, 'echo', { text });
  assert.deepEqual(r.result?.content, [{ type: 'text', text }], `echo through keel: ${show(r)}`);
  return r;
}

// Every line keel wrote is one JSON-RPC 2.0 message.
function assertOnlyJsonRpc(stdout) {
  const lines = stdout.split('\n');
  assert.equal(lines.pop(), '', `keel's stdout does not end with a newline: ${show(stdout.slice(-200))}`);
  for (const line of lines) {
    let m;
    assert.doesNotThrow(() => { m = JSON.parse(line); }, `not JSON on keel's stdout: ${show(line)}`);
    assert.ok(m !== null && typeof m === 'object' && !Array.isArray(m), `not a JSON-RPC message: ${line}`);
    assert.equal(m.jsonrpc, '2.0', `not JSON-RPC 2.0: ${line}`);
    const request = typeof m.method === 'string';
    const response = 'id' in m && ('result' in m) !== ('error' in m) && !request;
    assert.ok(request || response, `neither a request, a notification nor a response: ${line}`);
  }
}

// 1. Cancel: no answer after it, whatever the upstream does ----------------------------------

const CANCEL_FLAGS = {
  '--answer-after-cancel': 'answers the cancelled call 100 ms later',
  '--ignore-cancel': 'ignores the cancel and answers when done, with progress until then',
};
for (const [flag, what] of Object.entries(CANCEL_FLAGS)) {
  test(`WRAP-1: a call cancelled by the client is never answered and gets no progress after the cancel, though the upstream ${what}; keel forwards the cancel upstream and keeps serving`,
    { timeout: TEST_MS }, async (t) => {
      const { k, files } = startWrap(t, { flags: [flag] });
      await initialize(k);
      const id = 'cancel-me';
      k.send({ id, method: 'tools/call', params: params('slow', { ms: 1000 }, { progressToken: 'p-cancel' }) });
      // The first progress: the call runs upstream.
      await k.waitFor((m) => m.method === 'notifications/progress' && m.params?.progressToken === 'p-cancel',
        { what: 'progress of the slow call' });
      k.notify('notifications/cancelled', { requestId: id, reason: 'the test cancels' });
      const ping = await k.request('ping', {});  // answered: keel has read the cancel
      const pingAt = indexOfResponse(k, ping.id);

      const [, upstreamId] = await fakeEvent(files, /^\d+ cancelled (\S+)$/);
      const [, answeredId, cancelled] = await fakeEvent(files, /^\d+ answer (\S+) slow cancelled=(\w+)$/);
      assert.equal(answeredId, upstreamId, 'the cancel named another upstream request');
      assert.equal(cancelled, 'true', 'the fake answered before it saw the cancel');
      // The late answer is on the upstream's stdout before the echo's: once the echo is
      // answered, keel has read the late answer.
      await echo(k, 'after the cancel');

      assert.deepEqual(responsesFor(k, id), [], `keel answered the cancelled call: ${show(responsesFor(k, id))}`);
      const late = progressFor(k, 'p-cancel').filter(({ at }) => at > pingAt).map(({ m }) => m);
      assert.deepEqual(late, [], 'progress after the cancel was read');
    });
}

// 2. keel's clocks end a call the upstream never answers -------------------------------------

test('WRAP-1: a `slow` call the upstream never answers ends with keel\'s max timeout (--max-timeout 1500): one isError result naming keel\'s clock; the upstream is told to cancel; keel keeps serving',
  { timeout: TEST_MS }, async (t) => {
    const { k, files } = startWrap(t, { flags: ['--never-answer'], keelArgs: ['--max-timeout', '1500', '--idle-timeout', '1500'] });
    await initialize(k);
    const t0 = performance.now();
    const r = await call(k, 'slow', { ms: 100 });
    const took = performance.now() - t0;
    assert.equal(r.result?.isError, true, show(r));
    assert.equal(errorOf(r)?.type, 'timeout', show(r));
    assert.equal(errorOf(r).layer, 'max', show(r));
    assert.match(textOf(r), /timed out/, show(r));
    assert.match(textOf(r), /--max-timeout/, 'the text names keel\'s clock');
    assert.ok(took >= 1400, `answered after ${took.toFixed(0)} ms, before the 1500 ms clock`);
    assert.equal(responsesFor(k, r.id).length, 1);

    const [, callId] = await fakeEvent(files, /^\d+ call (\S+) slow /);
    const [, cancelledId] = await fakeEvent(files, /^\d+ cancelled (\S+)$/, 3000);
    assert.equal(cancelledId, callId, 'keel cancelled another upstream request');
    await echo(k, 'still serving');
  });

// 3. Progress: strictly increasing, never after the response ---------------------------------

test('WRAP-1: upstream progress that goes backwards, repeats and comes after the response reaches the client strictly increasing and never after the response',
  { timeout: TEST_MS }, async (t) => {
    const { k, files } = startWrap(t, { flags: ['--bad-progress'] });
    await initialize(k);
    const r = await call(k, 'slow', { ms: 600 }, { progressToken: 'p-bad' });
    assert.deepEqual(r.result?.content, [{ type: 'text', text: 'slept 600 ms' }], show(r));
    await fakeEvent(files, /^\d+ late-progress /);
    await echo(k, 'after the late progress');  // keel has read the late progress

    const answeredAt = indexOfResponse(k, r.id);
    const seen = progressFor(k, 'p-bad');
    assert.ok(seen.length >= 1, 'no progress reached the client');
    const values = seen.map(({ m }) => m.params.progress);
    for (let i = 1; i < values.length; i++) {
      assert.ok(values[i] > values[i - 1], `progress not strictly increasing: ${show(values)}`);
    }
    const after = seen.filter(({ at }) => at > answeredAt).map(({ m }) => m);
    assert.deepEqual(after, [], 'progress after the response');
  });

// 4. Junk on the upstream's stdout -----------------------------------------------------------

test('WRAP-3: junk on the upstream\'s stdout (non-JSON lines, half lines, JSON that is not JSON-RPC, a response to an id nobody sent) never reaches the client: keel\'s stdout is JSON-RPC only, and every call works',
  { timeout: TEST_MS }, async (t) => {
    const { k } = startWrap(t, { flags: ['--junk-stdout'] });
    await initialize(k);
    const list = await k.request('tools/list', {});
    assert.deepEqual((list.result?.tools ?? []).map((tool) => tool.name).sort(), ['ask', 'echo', 'retool', 'slow', 'write'], show(list));
    await echo(k, 'through the junk');
    const slow = await call(k, 'slow', { ms: 300 }, { progressToken: 'p-junk' });
    assert.deepEqual(slow.result?.content, [{ type: 'text', text: 'slept 300 ms' }], show(slow));
    const write = await call(k, 'write', { key: 'j', value: '1' });
    assert.match(textOf(write), /^wrote j=1 as effect 1 /, show(write));
    await echo(k, 'again');
    const exit = await k.close(5000);
    assert.equal(exit.code, 0, `keel exited ${show(exit)}; stderr:\n${k.stderr}`);

    assertOnlyJsonRpc(k.stdout);
    assert.doesNotMatch(k.stdout, /nobody asked|half line|not JSON \(|"not": "json-rpc"/, 'the upstream\'s junk reached the client');
    const strays = k.messages.filter((m) => isResponse(m) && typeof m.id === 'string' && m.id.startsWith('junk-'));
    assert.deepEqual(strays, [], 'a response to an id the client never sent');
  });

// 5. Crashes mid-call ------------------------------------------------------------------------

test('WRAP-2, WRAP-3: a keyed write whose upstream crashes after the effect is answered upstream_lost ("may have taken effect"); a retry with the same key never runs the effect again (a replay or needs_reconciliation)',
  { timeout: TEST_MS }, async (t) => {
    const { files, k } = startWrap(t, { flags: ['--crash-mid-call'], crashOnce: true });
    await initialize(k);
    const meta = { [KEY_META]: 'k-crash' };
    const first = await call(k, 'write', { key: 'a', value: '1' }, meta);
    assert.equal(first.result?.isError, true, show(first));
    assert.equal(errorOf(first)?.type, 'upstream_lost', show(first));
    assert.match(textOf(first), /may have taken effect/, show(first));
    assert.deepEqual(linesOf(files.effects), ['{"key":"a","value":"1"}']);

    // The restarted upstream does not crash again (FAKE_CRASH_ONCE_FILE): a second run of the
    // effect would show as a second line.
    const again = await call(k, 'write', { key: 'a', value: '1' }, meta);
    const replayed = again.result?._meta?.['dev.keel/replayed'] === true;
    const reconcile = errorOf(again)?.type === 'needs_reconciliation';
    assert.ok(replayed || reconcile, `neither a replay nor needs_reconciliation: ${show(again)}`);
    assert.deepEqual(linesOf(files.effects), ['{"key":"a","value":"1"}'], 'the retry ran the effect again');
    const writes = linesOf(files.log).filter((l) => / call \S+ write /.test(l));
    assert.equal(writes.length, 1, `the write was sent upstream again:\n${writes.join('\n')}`);
  });

test('WRAP-2, WRAP-3: a read (`slow`) whose upstream crashes mid-call is retried by keel on the restarted upstream: the client gets the result; two upstream starts',
  { timeout: TEST_MS }, async (t) => {
    const { files, k } = startWrap(t, { flags: ['--crash-mid-call'], crashOnce: true });
    await initialize(k);
    const r = await call(k, 'slow', { ms: 600 });
    assert.deepEqual(r.result?.content, [{ type: 'text', text: 'slept 600 ms' }], `${show(r)}\nstderr:\n${k.stderr}`);
    assert.equal(r.result.isError, undefined, show(r));
    const { starts } = pidsOf(files);
    assert.equal(starts.length, 2, `upstream starts: ${show(starts)}`);
    assert.ok(linesOf(files.log).some((l) => l === `${starts[0]} crash slow`), 'the first upstream did not crash mid-call');
    assert.equal(linesOf(files.log).filter((l) => / call \S+ slow /.test(l)).length, 2, 'not one attempt per upstream');
  });

// 6. An upstream that cannot start ------------------------------------------------------------

test('WRAP-3: an upstream that exits 1 before its handshake makes `keel wrap` exit 69 and say why on stderr',
  { timeout: TEST_MS }, async (t) => {
    const { k, files } = startWrap(t, { flags: ['--crash-on-start'] });
    // If keel waits for a client before starting the upstream, this is that client.
    k.send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'wrap-faults', version: '0' } } });
    const exit = await withTimeout(k.exited, 'keel wrap to exit', 10000);
    assert.equal(exit.code, 69, `exit ${show(exit)}; stderr:\n${k.stderr}`);
    assert.ok(pidsOf(files).starts.length >= 1, 'the upstream was never started');
    assert.match(k.stderr, /upstream/i, `stderr does not say the upstream failed:\n${k.stderr}`);
    assert.match(k.stderr, /exit|status|code/i, `stderr does not say how the upstream ended:\n${k.stderr}`);
    assertOnlyJsonRpc(k.stdout);
  });

// 7. Shutdown: no upstream process survives keel ----------------------------------------------

test('WRAP-3: after keel\'s stdin closes, keel exits 0 within --shutdown-grace plus margin and no process of the upstream survives, though it ignores EOF and SIGTERM and has a grandchild (ignoring SIGTERM too) in its group',
  { timeout: TEST_MS }, async (t) => {
    const GRACE_MS = 1000;
    const { k, files } = startWrap(t, {
      flags: ['--ignore-eof', '--ignore-sigterm', '--spawn-grandchild'],
      keelArgs: ['--shutdown-grace', String(GRACE_MS)],
    });
    await initialize(k);
    await echo(k, 'up');
    const { starts, grandchildren } = await waitUntil('the fake and its grandchild to write their pids', 5000, () => {
      const p = pidsOf(files);
      return p.starts.length >= 1 && p.grandchildren.length >= 1 ? p : null;
    });
    assert.equal(starts.length, 1, `upstream starts: ${show(starts)}`);
    for (const pid of [...starts, ...grandchildren]) assert.ok(!dead(pid, k.pid), `pid ${pid} is not running before the shutdown`);

    const t0 = performance.now();
    const exit = await k.close(GRACE_MS + 3000);
    const took = performance.now() - t0;
    assert.equal(exit.code, 0, `keel exited ${show(exit)}; stderr:\n${k.stderr}`);
    assert.ok(took < GRACE_MS + 1000, `keel took ${took.toFixed(0)} ms to exit after EOF (grace ${GRACE_MS} ms)`);

    // Death after SIGKILL is the kernel's, asynchronous: a short bounded wait.
    const pids = [...starts, ...grandchildren];
    const until = performance.now() + 500;
    while (pids.some((pid) => !dead(pid, k.pid)) && performance.now() < until) await sleep(20);
    for (const pid of pids) {
      assert.ok(dead(pid, k.pid), `pid ${pid} (${grandchildren.includes(pid) ? 'the grandchild' : 'the upstream'}) survived keel: ${show(procState(pid))}`);
    }
    assert.ok(linesOf(files.log).some((l) => / eof$/.test(l)), 'the upstream never got EOF on its stdin');
  });

// 8. A flood of progress ---------------------------------------------------------------------

// A memory bound, not a performance figure. KEEL_RSS_LIMIT_KB overrides it for an instrumented
// keel (scripts/sanitize: ASan's shadow memory and quarantine are not keel's).
const FLOOD_RSS_LIMIT_KB = Number(process.env.KEEL_RSS_LIMIT_KB) || 64 << 10;

function rssKb(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, `no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

test('WRAP-1: an upstream flooding progress (thousands of notifications) does not stop the call completing; the client gets at most 20 progress a second, increasing; keel\'s RSS stays under 64 MB',
  { timeout: TEST_MS }, async (t) => {
    const { k, files } = startWrap(t, { flags: ['--flood-progress'] });
    await initialize(k);
    let maxKb = rssKb(k.pid);
    const sampler = setInterval(() => { try { maxKb = Math.max(maxKb, rssKb(k.pid)); } catch { /* exited */ } }, 25);
    t.after(() => clearInterval(sampler));
    const t0 = performance.now();
    const r = await call(k, 'slow', { ms: 1000 }, { progressToken: 'p-flood' });
    const took = performance.now() - t0;
    clearInterval(sampler);
    maxKb = Math.max(maxKb, rssKb(k.pid));
    assert.deepEqual(r.result?.content, [{ type: 'text', text: 'slept 1000 ms' }], show(r));
    const [, , sent] = await fakeEvent(files, /^\d+ flooded (\S+) (\d+)$/);
    t.diagnostic(`the upstream sent ${sent} progress notifications; keel's RSS peaked at ${(maxKb / 1024).toFixed(1)} MB`);
    assert.ok(Number(sent) >= 1000, `the upstream sent only ${sent} progress notifications: no flood`);
    assert.ok(maxKb < FLOOD_RSS_LIMIT_KB, `keel's RSS reached ${maxKb} kB (limit ${FLOOD_RSS_LIMIT_KB} kB)`);

    const values = progressFor(k, 'p-flood').map(({ m }) => m.params.progress);
    const allowed = Math.ceil((20 * took) / 1000) + 2;
    assert.ok(values.length <= allowed, `${values.length} progress notifications in ${took.toFixed(0)} ms (at most ${allowed})`);
    for (let i = 1; i < values.length; i++) {
      assert.ok(values[i] > values[i - 1], `progress not strictly increasing: ${show(values.slice(0, 50))}`);
    }
    await echo(k, 'after the flood');
  });

// 9. An elicitation whose answer the upstream never reads ------------------------------------

test('WRAP-1, WRAP-3 (and WRAP-4): an `ask` whose upstream sends elicitation/create and then never reads stdin again ends by keel\'s max timeout after the legacy client answers (256 KiB, more than a pipe holds); meanwhile keel answers ping and answers other calls itself; the deaf upstream does not outlive keel',
  { timeout: TEST_MS }, async (t) => {
    const { k, files } = startWrap(t, { flags: ['--never-read-answer'], keelArgs: ['--max-timeout', '1500', '--idle-timeout', '1500'] });
    await initialize(k, { capabilities: { elicitation: {} } });
    const askId = k.nextId;
    const asked = call(k, 'ask', { question: 'Will you be read?' });
    asked.catch(() => {});  // awaited below; handled now, in case keel exits first
    const question = await k.waitFor((m) => m.method === 'elicitation/create' && 'id' in m, { what: 'the elicitation keel relays' });
    assert.match(question.params?.message ?? '', /Will you be read\?/, show(question));
    await fakeEvent(files, /^\d+ stdin-paused$/);
    k.send({ id: question.id, result: { action: 'accept', content: { answer: 'x'.repeat(256 * 1024) } } });

    const ping = await k.request('ping', {}, { waitMs: 1000 });
    assert.deepEqual(ping.result, {}, show(ping));
    assert.equal(indexOfResponse(k, askId), -1, 'the ask was answered before keel\'s clock ran out');
    const echoed = await call(k, 'echo', { text: 'meanwhile' }, undefined, 5000);
    const r = await asked;
    const pong = await k.request('ping', {}, { waitMs: 1000 });
    assert.deepEqual(pong.result, {}, 'keel stopped answering');

    // The deaf upstream (it will never see EOF) does not outlive keel either.
    const exit = await k.close(5000);
    assert.equal(exit.code, 0, `keel exited ${show(exit)}; stderr:\n${k.stderr}`);
    const [pid] = pidsOf(files).starts;
    const until = performance.now() + 500;
    while (!dead(pid, k.pid) && performance.now() < until) await sleep(20);
    assert.ok(dead(pid, k.pid), `the deaf upstream (pid ${pid}) survived keel: ${show(procState(pid))}`);

    // What keel answered: the ask by keel's clock; the echo, which the upstream can never
    // read, by keel too (the upstream's stdin not accepting, or keel's clock).
    assert.equal(r.result?.isError, true, show(r));
    assert.equal(errorOf(r)?.type, 'timeout', show(r));
    assert.match(textOf(r), /--max-timeout/, show(r));
    assert.ok(echoed.result, show(echoed));
    if (echoed.result.isError) {
      assert.ok(['upstream_unavailable', 'timeout'].includes(errorOf(echoed)?.type), show(echoed));
    }
  });

// 10. The upstream's stderr ------------------------------------------------------------------

test('WRAP-3: the upstream\'s stderr lines reach keel\'s stderr prefixed "[upstream] ", never its stdout',
  { timeout: TEST_MS }, async (t) => {
    // --log-level info: the contract does not say at which level upstream stderr is logged.
    const { k } = startWrap(t, { flags: ['--stderr-noise'], keelArgs: ['--log-level', 'info'] });
    await initialize(k);
    await echo(k, 'noisy');
    await k.close(5000);
    assert.match(k.stderr, /\[upstream\] noise: misbehaving server \d+ starting/, `keel's stderr:\n${k.stderr}`);
    assert.match(k.stderr, /\[upstream\] noise: got tools\/call/, `keel's stderr:\n${k.stderr}`);
    assert.doesNotMatch(k.stdout, /noise/);
    assertOnlyJsonRpc(k.stdout);
  });

// 11. A keyed write retried ------------------------------------------------------------------

test('WRAP-2: a keyed `write` (unsafe_write by its missing annotations) retried twice with the same key runs once: one effect line, each retry the first answer replayed; the key is not forwarded upstream',
  { timeout: TEST_MS }, async (t) => {
    const { k, files } = startWrap(t);
    await initialize(k);
    const meta = { [KEY_META]: 'k-twice' };
    const first = await call(k, 'write', { key: 'b', value: '2' }, meta);
    assert.notEqual(first.result?.isError, true, show(first));
    assert.match(textOf(first), /^wrote b=2 as effect 1 by pid \d+$/, show(first));
    for (const n of [1, 2]) {
      const again = await call(k, 'write', { key: 'b', value: '2' }, meta);
      assert.equal(again.result?._meta?.['dev.keel/replayed'], true, `retry ${n}: ${show(again)}`);
      assert.deepEqual(again.result.content, first.result.content, `retry ${n}`);
      assert.deepEqual(again.result.structuredContent, first.result.structuredContent, `retry ${n}`);
    }
    assert.deepEqual(linesOf(files.effects), ['{"key":"b","value":"2"}']);
    const sent = linesOf(files.log).filter((l) => / call \S+ write /.test(l));
    assert.equal(sent.length, 1, `sent upstream ${sent.length} times:\n${sent.join('\n')}`);
    assert.doesNotMatch(sent[0], /idempotency-key/, 'the key was forwarded upstream');
  });

// 9. The upstream's tool list changes -----------------------------------------------------------

const toolNames = async (k) => (await k.request('tools/list', {})).result.tools.map((t) => t.name);
const listChangedCount = (k) => k.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;

test('WRAP-1: keel follows the upstream\'s tools/list_changed: it offers tools.listChanged, tells the client, lists and serves an added tool, drops a removed one, and a call of the removed tool already running still finishes',
  { timeout: TEST_MS }, async (t) => {
    const { k } = startWrap(t);
    const init = await initialize(k);
    assert.equal(init.capabilities?.tools?.listChanged, true, show(init.capabilities));
    assert.deepEqual(await toolNames(k), ['echo', 'slow', 'write', 'ask', 'retool']);

    const added = await call(k, 'retool', { add: 'shout' });
    assert.match(textOf(added), /shout/, show(added));
    await k.waitFor((m) => m.method === 'notifications/tools/list_changed');
    assert.deepEqual(await toolNames(k), ['echo', 'slow', 'write', 'ask', 'retool', 'shout']);
    const shouted = await call(k, 'shout', { text: 'hi' });
    assert.equal(textOf(shouted), 'shout: hi', show(shouted));

    // `slow` runs while the upstream takes it away: it still answers.
    const running = call(k, 'slow', { ms: 600 }, { progressToken: 'p-removed' });
    await k.waitFor((m) => m.method === 'notifications/progress' && m.params?.progressToken === 'p-removed');
    const seen = listChangedCount(k);
    await call(k, 'retool', { remove: 'slow' });
    await k.waitFor(() => listChangedCount(k) > seen);
    assert.deepEqual(await toolNames(k), ['echo', 'write', 'ask', 'retool', 'shout']);
    const finished = await running;
    assert.equal(textOf(finished), 'slept 600 ms', show(finished));
    const gone = await call(k, 'slow', { ms: 1 });
    assert.ok(gone.error || gone.result?.isError, `a removed tool is not served: ${show(gone)}`);

    // The same list again is no change: no notification.
    const before = listChangedCount(k);
    await call(k, 'retool', {});
    await echo(k, 'after');
    assert.equal(listChangedCount(k), before, 'keel told the client of a change that was none');
  });
