// keel's stdio streams as a careless host leaves them (BP-1): a stderr nobody reads, and
// a stdout the host closes with a call still running. The real binary, raw JSON-RPC lines.
// Run: node --test tests/interop/stdio_streams.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { KEEL, freshDir, startRawKeel, withTimeout } from './raw_keel.mjs';
import { rpcClient, spawnLines } from '../support/keel_process.mjs';

// Each too-long line makes keel log one warning: enough of them to fill any pipe or socket
// buffer on stderr many times over (a 64 KiB pipe held about 450).
const LONG_LINES = 2000;
const MAX_LINE_BYTES = 1024;
const longLine = `{"jsonrpc":"2.0","method":"notifications/padding","params":{"p":"${'x'.repeat(2 * MAX_LINE_BYTES)}"}}\n`;
// Generous on a slow, shared machine; a keel blocked on stderr never answers at all.
const ANSWER_MS = 15000;

const DROP_REPORT = /keel W \S+ (\d+) log line\(s\) dropped: stderr was full/;

// keel with stdin and stdout pipes (Node gives socketpairs) and `stderr` as given; stdout is
// read and parsed, stderr is not touched here.
function startKeel(t, stderr) {
  const dir = freshDir(t, 'keel-stdio-');
  const p = spawnLines(KEEL, ['--max-line-bytes', String(MAX_LINE_BYTES)], {
    env: { ...process.env, KEEL_DB: join(dir, 'keel.db') }, stderr, captureStderr: false,
  });
  t.after(() => { if (p.exit === null) p.child.kill('SIGKILL'); });
  const k = rpcClient(p);
  k.dir = dir;
  k.exited = p.exited.then((exit) => exit.code);
  k.ping = (id) => k.request('ping', undefined, { id, waitMs: ANSWER_MS });
  return k;
}

function floodWithLongLines(k) {
  for (let i = 0; i < LONG_LINES; i++) k.child.stdin.write(longLine);
}

test('a host that never reads stderr (a socket) cannot stall keel; the drops are reported later', async (t) => {
  const k = startKeel(t, 'pipe');
  k.child.stderr.pause();  // Node stops reading once its own buffer is full
  floodWithLongLines(k);
  assert.deepEqual((await k.ping(1)).result, {});

  let stderr = '';
  k.child.stderr.setEncoding('utf8');
  k.child.stderr.on('data', (d) => { stderr += d; });
  k.child.stderr.resume();
  // The report goes out ahead of the first line keel logs once stderr has room; Node drains
  // the socket while keel keeps logging.
  for (let id = 2; id < 200 && !DROP_REPORT.test(stderr); id++) {
    k.child.stdin.write(longLine);
    await k.ping(id);
    await new Promise((res) => setImmediate(res));
  }
  const report = DROP_REPORT.exec(stderr);
  assert.ok(report, `no drop report in stderr: ${stderr.slice(-2000)}`);
  assert.ok(Number(report[1]) > 0);
  k.child.stdin.end();
  assert.equal(await withTimeout(k.exited, 'keel to exit after EOF', ANSWER_MS), 0);
});

test('a host that never reads stderr (a pipe) cannot stall keel; the drops are reported later', async (t) => {
  const dir = freshDir(t, 'keel-fifo-');
  const fifo = join(dir, 'stderr.fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  // Opened read-write: a reader exists from the start, and nothing reads it until later.
  const stderrFd = openSync(fifo, 'r+');
  const k = startKeel(t, stderrFd);
  closeSync(stderrFd);
  floodWithLongLines(k);
  assert.deepEqual((await k.ping(1)).result, {});

  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.after(() => closeSync(reader));
  const drain = () => {
    let text = '';
    const buffer = Buffer.alloc(1 << 16);
    for (;;) {
      let n;
      try {
        n = readSync(reader, buffer);
      } catch (e) {
        if (e.code === 'EAGAIN') return text;
        throw e;
      }
      if (n === 0) return text;
      text += buffer.toString('utf8', 0, n);
    }
  };
  drain();
  k.child.stdin.write(longLine);  // the next warning finds room: the report goes first
  assert.deepEqual((await k.ping(2)).result, {});
  const stderr = drain();
  const report = DROP_REPORT.exec(stderr);
  assert.ok(report, `no drop report in stderr: ${stderr.slice(-2000)}`);
  assert.ok(Number(report[1]) > 0);
  assert.ok(stderr.indexOf(report[0]) < stderr.lastIndexOf('skipped an input line'),
    'the report comes before the line that found room');
  k.child.stdin.end();
  assert.equal(await withTimeout(k.exited, 'keel to exit after EOF', ANSWER_MS), 0);
});

test('stdout closed with a call running: the call is cancelled, and keel says so (CAN-2)', async (t) => {
  const dir = freshDir(t, 'keel-peer-gone-');
  const k = startRawKeel(t, {
    binary: KEEL, args: ['--test-tools', '--log-level', 'info'], env: { KEEL_DB: join(dir, 'keel.db') },
  });
  await k.initialize();
  // A tool that ignores its token is still running when keel exits, whatever the timing.
  k.send({ id: 50, method: 'tools/call', params: { name: 'latch_wait', arguments: { name: 'never', ignore_cancel: true } } });
  assert.deepEqual((await k.request('ping', {})).result, {});  // the call is admitted by now
  k.child.stdout.destroy();
  k.send({ id: 51, method: 'ping' });  // keel finds stdout closed when it writes the answer
  const exit = await withTimeout(k.exited, 'keel to exit once stdout is closed', ANSWER_MS);
  assert.equal(exit.code, 0);
  assert.match(k.stderr, /exchange closed: cancelled 1 request\(s\)/);
  // keel does not wait for the hold check: it exits at once, saying what still runs. On a
  // loaded machine the call may still be queued when stdout closes: then it never starts.
  assert.doesNotMatch(k.stderr, /did not stop after cancellation/);
  if (!/1 call\(s\) settled before starting/.test(k.stderr)) {
    assert.match(k.stderr, /1 job\(s\) still running when the client closed stdout \(cancelled, not stopped yet\)/);
  }
});
