// keel_process.mjs, the one client of the tests and scripts: lines are framed whole whatever
// the chunking, responses are matched by id (0 included), notifications are kept, a process
// that dies fails what still waits for it, stderr stays a bounded tail. The peer is a small
// Node script speaking JSON lines (FAKE below), so these tests need no keel binary.
// Run: node --test tests/support/   (scripts/test runs it with the interop tests)
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { lineSplitter, rpcClient, spawnLines, withTimeout } from './keel_process.mjs';

const WAIT_MS = 10000;  // bounds waits for a process on a slow, shared machine; never asserted

// A JSON-lines peer. For each request: "echo" answers {echo: params}; "notify" sends a
// notification, then answers; "later" answers once the next request has been answered
// (so answers come out of order); "exit" exits with params.code without answering; "noise"
// writes params.bytes bytes to stderr, then answers; any other method is never answered.
const FAKE = `
let held = null;
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.method === 'later') { held = m; continue; }
    if (m.method === 'exit') process.exit(m.params.code);
    if (m.method === 'notify') out({ jsonrpc: '2.0', method: 'notifications/message', params: { data: m.id } });
    if (m.method === 'noise') process.stderr.write('e'.repeat(m.params.bytes));
    if (['echo', 'notify', 'noise'].includes(m.method)) out({ jsonrpc: '2.0', id: m.id, result: { echo: m.params ?? null } });
    if (held) { out({ jsonrpc: '2.0', id: held.id, result: { late: true } }); held = null; }
  }
});
`;

function startFake(t, options = {}) {
  const p = spawnLines(process.execPath, ['-e', FAKE], options);
  t.after(() => { if (p.exit === null) p.kill(); });
  return p;
}

// Feeds `chunks` to a splitter; returns the lines it produced and its unterminated rest.
function split(chunks, binary = false) {
  const lines = [];
  const s = lineSplitter({ onLine: (line) => lines.push(line) }, { binary });
  for (const c of chunks) s.push(c);
  return { lines, rest: s.rest() };
}

test('a line split over several chunks arrives whole, and several lines in one chunk arrive in order', () => {
  const { lines, rest } = split(['{"a":', '1}\n{"b":2}\n{"c"', ':3}\n', '{"d":4}']);
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
  assert.equal(rest, '{"d":4}');
});

test('an empty line is a line; output ending with a newline leaves no rest', () => {
  const { lines, rest } = split(['x\n\ny\n']);
  assert.deepEqual(lines, ['x', '', 'y']);
  assert.equal(rest, '');
});

test('binary framing splits on the byte 0x0a and hands back each line\'s bytes, invalid UTF-8 included', () => {
  const bad = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
  const { lines, rest } = split([bad.subarray(0, 2), Buffer.concat([bad.subarray(2), Buffer.from('\nab')])], true);
  assert.equal(lines.length, 1);
  assert.ok(Buffer.isBuffer(lines[0]));
  assert.deepEqual([...lines[0]], [...bad]);
  assert.deepEqual([...rest], [...Buffer.from('ab')]);
});

test('responses are matched to their requests by id, id 0 and out-of-order answers included', async (t) => {
  const c = rpcClient(startFake(t), { waitMs: WAIT_MS, firstId: 0 });
  const late = c.request('later', {});
  const zeroAnswer = await c.request('echo', { n: 1 });
  assert.equal(zeroAnswer.id, 1);
  assert.deepEqual((await late).result, { late: true });
  assert.equal((await late).id, 0);
  const named = await c.request('echo', { n: 2 }, { id: 'req-a' });
  assert.deepEqual(named.result, { echo: { n: 2 } });
  assert.equal(c.nextId, 2, 'an explicit id does not use up the counter');
});

test('notifications are kept in order, and waitFor finds a message that came before or comes after', async (t) => {
  const c = rpcClient(startFake(t), { waitMs: WAIT_MS });
  await c.request('notify', {});
  const seen = await c.waitFor((m) => m.method === 'notifications/message' && m.params.data === 1, { ms: WAIT_MS });
  assert.equal(seen.params.data, 1);
  const coming = c.waitFor((m) => m.params?.data === 2, { ms: WAIT_MS });
  const answered = c.response(2, { waitMs: WAIT_MS });
  c.send({ id: 2, method: 'notify' });  // written without request(), answered all the same
  assert.equal((await coming).params.data, 2);
  assert.deepEqual((await answered).result, { echo: null });
  assert.deepEqual(c.messages.map((m) => m.method ?? `answer ${m.id}`),
    ['notifications/message', 'answer 1', 'notifications/message', 'answer 2']);
});

test('a request still waiting when the process exits is rejected, and the exit is recorded', async (t) => {
  const p = startFake(t);
  const c = rpcClient(p, { waitMs: WAIT_MS, name: 'fake' });
  const never = c.request('unknown', {});
  c.send({ id: 99, method: 'exit', params: { code: 3 } });
  await assert.rejects(never, /fake exited \(3\) before answering/);
  const exit = await withTimeout(p.exited, 'the fake to exit', WAIT_MS);
  assert.equal(exit.code, 3);
  assert.equal(p.exit, exit);
});

test('a request nobody answers is rejected after waitMs, naming its method and id', async (t) => {
  const c = rpcClient(startFake(t));
  await assert.rejects(c.request('unknown', {}, { id: 'x', waitMs: 50 }), /no answer to unknown id "x" within 50 ms/);
});

test('stderr is kept as a bounded tail, and close() ends stdin and returns the exit', async (t) => {
  const p = startFake(t, { stderrLimit: 1000, stderrKeep: 100 });
  const c = rpcClient(p, { waitMs: WAIT_MS });
  await c.request('noise', { bytes: 5000 });
  const exit = await c.close(WAIT_MS);
  assert.equal(exit.code, 0);
  await withTimeout(p.closed, 'stderr to be read to its end', WAIT_MS);
  assert.ok(p.stderr.length <= 1000, `stderr kept ${p.stderr.length} characters`);
  assert.match(p.stderr, /^e+$/);
});

test('the whole stdout is kept with keepStdout, and onEnd hears that it ended on a newline', async (t) => {
  let rest = null;
  const p = startFake(t, { keepStdout: true, onEnd: (r) => { rest = r; } });
  const c = rpcClient(p, { waitMs: WAIT_MS });
  await c.request('echo', 'x');
  await c.close(WAIT_MS);
  await p.stdoutEnded;
  assert.equal(p.stdout, '{"jsonrpc":"2.0","id":1,"result":{"echo":"x"}}\n');
  assert.equal(rest, '');
  assert.equal(p.bytesRead, p.stdout.length);
});
