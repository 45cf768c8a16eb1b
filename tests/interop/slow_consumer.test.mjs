// Slow consumer (BP-1): the real keel binary behind a client that stops reading stdout.
// Run: node --test tests/interop/slow_consumer.test.mjs   (scripts/test runs it too)
// The binary is $KEEL_BINARY, else <repo>/build/keel. It speaks raw JSON-RPC lines (no SDK
// client) so the test decides exactly when stdout is read.
//
// While the client reads nothing, keel's memory must stay bounded (--outbox-bytes): unsent
// progress is dropped oldest first and stdin is no longer read. Once the client reads
// again, every call still gets exactly one response, each call's progress comes before
// its response, and the progress values of a token strictly increase. How many progress
// notifications survive is not asserted (keel may drop or rate-limit them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { KEEL } from './raw_keel.mjs';
import { rpcClient, spawnLines } from '../support/keel_process.mjs';

// Enough that responses alone outgrow the bound plus the kernel's socket buffers (~300 kB
// here): with 2000 calls keel never had to drop progress or stop reading stdin.
const CALLS = 5000;
const STEPS = 50;
const OUTBOX_BYTES = 256 << 10;
// A memory bound, not a performance figure: keel's whole RSS while the client reads
// nothing, far above what a bounded outbox needs and far below an unbounded pile-up.
// KEEL_RSS_LIMIT_KB overrides it for an instrumented keel (scripts/sanitize: ASan's shadow
// memory and quarantine are not keel's).
const RSS_LIMIT_KB = Number(process.env.KEEL_RSS_LIMIT_KB) || 64 << 10;
// Generous: the machine is slow and shared. These bound waits for conditions; none of
// them is what the test asserts.
const TEST_TIMEOUT_MS = 240000;
const WAIT_TIMEOUT_MS = 90000;
const POLL_MS = 100;
// keel counts as stalled on the unread stdout once its CPU time stops moving for this many
// polls in a row; if it never does within STALL_WAIT_MS the samples taken so far are used.
const STALL_POLLS = 5;
const STALL_WAIT_MS = 20000;

// Polling interval only: every wait below is for a condition.
const tick = (ms) => new Promise((r) => setTimeout(r, ms));

// Resident set size in kB, from /proc.
function rssKb(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, `no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

// User plus system CPU ticks (fields 14 and 15 of /proc/<pid>/stat).
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function waitFor(what, condition, timeoutMs = WAIT_TIMEOUT_MS) {
  const t0 = performance.now();
  while (!condition()) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await tick(POLL_MS);
  }
}

// keel as a child process, with its stdout split into JSON messages in arrival order
// (k.messages). keel logs every dropped progress line: stderr is read too (into a tail), or
// keel would block on it.
function startKeel(args) {
  const cwd = mkdtempSync(join(tmpdir(), 'keel-slow-consumer-'));
  const p = spawnLines(KEEL, args, { cwd, env: { ...process.env, KEEL_DB: join(cwd, 'keel.db') }, stderrLimit: 8000 });
  const k = rpcClient(p);
  k.cwd = cwd;
  Object.defineProperties(k, { exited: { get: () => p.exit !== null }, stderr: { get: () => p.stderr } });
  return k;
}

test('a client that stops reading stdout: keel stays bounded, then every call is answered once with its progress first (BP-1)',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const k = startKeel(['--test-tools', '--outbox-bytes', String(OUTBOX_BYTES),
      // Every call runs (none is refused as busy), so every call reports progress.
      '--max-inflight', String(CALLS)]);
    try {
      k.send({ jsonrpc: '2.0', id: 'init', method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow-consumer', version: '0' } } });
      await waitFor('the initialize response', () => k.messages.some((m) => m.id === 'init'));
      assert.ok(k.messages.find((m) => m.id === 'init').result, 'initialize failed');
      k.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

      // Stop reading: Node keeps at most its stream buffer, then leaves the pipe full.
      k.child.stdout.pause();
      for (let i = 1; i <= CALLS; ++i) {
        k.send({ jsonrpc: '2.0', id: i, method: 'tools/call',
          params: { name: 'progress', arguments: { steps: STEPS }, _meta: { progressToken: i } } });
      }

      const rss = [];
      let lastCpu = -1;
      let still = 0;
      const t0 = performance.now();
      while (still < STALL_POLLS && performance.now() - t0 < STALL_WAIT_MS) {
        assert.ok(!k.exited, 'keel exited while the client was not reading');
        rss.push(rssKb(k.child.pid));
        const cpu = cpuTicks(k.child.pid);
        still = cpu === lastCpu ? still + 1 : 0;
        lastCpu = cpu;
        await tick(POLL_MS);
      }
      const maxRss = Math.max(...rss);
      t.diagnostic(`paused: ${rss.length} RSS samples, max ${maxRss} kB; ` +
        `keel ${still >= STALL_POLLS ? 'stalled' : 'still busy'}; ` +
        `${k.child.stdin.writableLength} request bytes not taken by keel yet`);
      assert.ok(maxRss < RSS_LIMIT_KB, `keel RSS reached ${maxRss} kB while stdout was unread (limit ${RSS_LIMIT_KB} kB)`);

      k.child.stdout.resume();
      const answered = () => k.messages.filter((m) => typeof m.id === 'number').length;
      await waitFor(`${CALLS} responses (have ${answered()})`, () => answered() >= CALLS);
      k.child.stdin.end();  // EOF: keel drains and exits, so any extra response would show
      await waitFor('keel to exit after stdin EOF', () => k.exited && k.child.stdout.readableEnded);

      const responses = new Map();  // id -> count
      const lastProgress = new Map();  // token -> last progress value
      let progressCount = 0;
      for (const m of k.messages) {
        if (m.method === 'notifications/progress') {
          const { progressToken: token, progress } = m.params;
          assert.ok(Number.isInteger(token) && token >= 1 && token <= CALLS, `unknown token ${token}`);
          assert.ok(!responses.has(token), `progress ${progress} for token ${token} after its response`);
          const last = lastProgress.get(token);
          assert.ok(last === undefined || progress > last, `token ${token}: progress ${progress} after ${last}`);
          lastProgress.set(token, progress);
          ++progressCount;
        } else if (typeof m.id === 'number') {
          assert.ok(m.result, `call ${m.id} failed: ${JSON.stringify(m)}`);
          assert.notEqual(m.result.isError, true, `call ${m.id}: ${JSON.stringify(m.result)}`);
          responses.set(m.id, (responses.get(m.id) ?? 0) + 1);
        }
      }
      for (let i = 1; i <= CALLS; ++i) {
        assert.equal(responses.get(i), 1, `call ${i} got ${responses.get(i) ?? 0} responses`);
      }
      assert.equal(responses.size, CALLS, 'responses to ids that were never sent');
      t.diagnostic(`${progressCount} progress notifications for ${lastProgress.size} tokens reached the client`);
    } catch (err) {
      if (k.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr}`;
      throw err;
    } finally {
      if (!k.exited) k.child.kill('SIGKILL');
      rmSync(k.cwd, { recursive: true, force: true });
    }
  });
