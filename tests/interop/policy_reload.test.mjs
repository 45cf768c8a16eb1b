// The resilience policy from outside (BUD-1): an invalid --policy stops keel
// with exit 78 listing every problem; SIGHUP reloads the file, a valid version replaces the
// running one (kept as the previous one: `keel policy show --previous`), an invalid one is
// refused and the running version stays; the trace names the policy version in force.
// Run: node --test tests/interop/policy_reload.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { KEEL, freshDir, startRawKeel } from './raw_keel.mjs';

const keel = (args) => spawnSync(KEEL, args, { encoding: 'utf8', input: '' });
// A real wait, only between polls of a condition; never an assertion.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('an invalid --policy exits 78 and lists every problem; policy check says the same', (t) => {
  const dir = freshDir(t, 'keel-policy-');
  const file = join(dir, 'policy.json');
  writeFileSync(file, JSON.stringify({ version: 'v1', defaults: { timeouts: { attempt_ms: 60000 } }, tools: { echo: { retry: { max_atempts: 2 } } } }));
  const run = keel(['--policy', file, '--db', join(dir, 'keel.db')]);
  assert.equal(run.status, 78, run.stderr);
  assert.equal(run.stdout, '', 'nothing on stdout');
  assert.match(run.stderr, /tools\.echo\.retry\.max_atempts: unknown field/);
  assert.match(run.stderr, /timeouts\.attempt_ms \(60000\) must be less than timeouts\.max_ms \(55000\)/);
  const check = keel(['policy', 'check', file]);
  assert.equal(check.status, 78);
  assert.equal(check.stderr, run.stderr);
});

test('SIGHUP: a valid file replaces the running version, an invalid one is refused', async (t) => {
  const dir = freshDir(t, 'keel-policy-');
  const file = join(dir, 'policy.json');
  const db = join(dir, 'keel.db');
  const traceFile = join(dir, 'trace.jsonl');
  writeFileSync(file, JSON.stringify({ version: 'v1' }));
  const k = startRawKeel(t, { binary: KEEL, args: ['--policy', file, '--db', db, '--trace-file', traceFile, '--log-level', 'info'] });
  await k.initialize();
  const versionOfLastCall = async (id) => {
    const r = await k.request('tools/call', { name: 'echo', arguments: { text: id } });
    assert.equal(r.result?.content?.[0]?.text, id);
    const records = readFileSync(traceFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    return records.filter((r) => r.event === 'tool.call.start').at(-1).attributes['keel.policy.version'];
  };
  assert.equal(await versionOfLastCall('a'), 'v1');

  writeFileSync(file, JSON.stringify({ version: 'v2' }));
  process.kill(k.pid, 'SIGHUP');
  for (let i = 0; i < 200 && !k.stderr.includes('policy version v2 replaces v1'); ++i) await sleep(10);
  assert.match(k.stderr, /policy version v2 replaces v1/);
  assert.equal(await versionOfLastCall('b'), 'v2');

  writeFileSync(file, '{"version": "v3", "defaults": {"retry": {"max_attempts": 99}}}');
  process.kill(k.pid, 'SIGHUP');
  for (let i = 0; i < 200 && !k.stderr.includes('keeping policy version v2'); ++i) await sleep(10);
  assert.match(k.stderr, /is invalid; keeping policy version v2/);
  assert.match(k.stderr, /max_attempts/);
  assert.equal(await versionOfLastCall('c'), 'v2');
  await k.close();

  const current = keel(['policy', 'show', '--db', db]);
  assert.equal(current.status, 0, current.stderr);
  assert.equal(JSON.parse(current.stdout).version, 'v2');
  const previous = keel(['policy', 'show', '--previous', '--db', db]);
  assert.equal(previous.status, 0, previous.stderr);
  assert.equal(JSON.parse(previous.stdout).version, 'v1');
});
