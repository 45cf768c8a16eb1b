// What a queued call holds does not grow with its _meta (BP-1): the real keel
// binary, one worker blocked on a latch, and six tools/call lines each carrying a ~14 MB
// _meta array (parsed, about 8 bytes of memory per byte on the wire). keel keeps only the
// _meta keys it reads, so once the six are queued its RSS stays far below what six parsed
// arrays would take (~690 MB before the fix). Then every call is answered once.
// Run: node --test tests/interop/meta_memory_bounded.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { KEEL, freshDir, startRawKeel, withTimeout } from './raw_keel.mjs';

const CALLS = 6;
const META_BYTES = 14_000_000;  // under the default --max-line-bytes (16 MiB)
// A memory bound, not a performance figure: one call's parse in passing plus keel itself,
// far below six parsed arrays. KEEL_RSS_LIMIT_KB overrides it for an instrumented keel
// (scripts/sanitize: ASan's shadow memory and quarantine are not keel's).
const RSS_LIMIT_KB = Number(process.env.KEEL_RSS_LIMIT_KB) || 200 << 10;

function rssKb(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, `no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

test('six queued calls with a 14 MB _meta each keep keel far below their parsed size',
  { timeout: 180000 }, async (t) => {
    const dir = freshDir(t, 'keel-meta-');
    // The latch holds the only worker while six 14 MB lines are parsed: under a sanitizer on a
    // loaded machine that takes longer than the default 30 s idle clock, which is not this test.
    const k = startRawKeel(t, {
      binary: KEEL,
      args: ['--test-tools', '--workers', '1', '--db', `${dir}/keel.db`,
        '--idle-timeout', '600000', '--max-timeout', '900000'],
      waitMs: 120000,
    });
    await k.initialize();
    const blocked = k.request('tools/call', { name: 'latch_wait', arguments: { name: 'm' } });
    blocked.catch(() => {});  // awaited below; a failure before that must not go unhandled

    // "[1,1,...,1]": two bytes on the wire per element, sixteen once parsed.
    const bulk = `[${'1,'.repeat(META_BYTES / 2 - 1)}1]`;
    const answers = [];
    for (let i = 0; i < CALLS; i++) {
      const id = 100 + i;
      answers.push(k.response(id, { waitMs: Infinity }).catch((e) => e));
      const line = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo",` +
        `"arguments":{"text":"q${i}"},"_meta":{"progressToken":"p${i}","bulk":${bulk}}}}\n`;
      if (!k.child.stdin.write(line)) await new Promise((r) => k.child.stdin.once('drain', r));
    }
    // Lines are handled in order: once this ping is answered, all six calls are queued.
    const ping = await k.request('ping', {});
    assert.deepEqual(ping.result, {});
    const rss = rssKb(k.pid);
    t.diagnostic(`RSS with ${CALLS} calls queued: ${rss} kB`);
    assert.ok(rss < RSS_LIMIT_KB,
      `keel holds ${rss} kB with ${CALLS} queued calls (limit ${RSS_LIMIT_KB} kB)`);

    const released = await k.request('tools/call', { name: 'latch_release', arguments: { name: 'm' } });
    assert.equal(released.result.content[0].text, 'released m');
    assert.equal((await blocked).result.content[0].text, 'released m');
    const done = await withTimeout(Promise.all(answers), 'the queued calls', 120000);
    done.forEach((m, i) => assert.equal(m.result.content[0].text, `q${i}`, JSON.stringify(m).slice(0, 300)));
    await k.close();
  });
