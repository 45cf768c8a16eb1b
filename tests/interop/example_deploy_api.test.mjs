// examples/deploy-api keeps working: its catalog loads, its one command (`try`) passes, and
// its deployment API script (bin/deploy-api) keeps the promises the catalog relies on.
// Run: node --test tests/interop/example_deploy_api.test.mjs   (scripts/test runs it too)
// The binary is $KEEL_BINARY, else <repo>/build/keel. Every test uses its own temporary
// state directory and database; waits are for conditions only, with generous bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KEEL, freshDir, startRawKeel, withTimeout } from './raw_keel.mjs';

const example = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples', 'deploy-api');
const catalog = join(example, 'catalog.json');
const api = join(example, 'bin', 'deploy-api');
const TEST_TIMEOUT_MS = 60000;

// bin/deploy-api run directly, as keel would (no fd 3).
function deployApi(state, args, env = {}) {
  const r = spawnSync(api, args, { encoding: 'utf8', env: { PATH: process.env.PATH, DEPLOY_API_STATE: state, ...env } });
  return { status: r.status, signal: r.signal, out: r.stdout.trim() ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

test('keel accepts the example catalog', { timeout: TEST_TIMEOUT_MS }, (t) => {
  const dir = freshDir(t, 'keel-example-');
  const r = spawnSync(KEEL, ['--catalog', catalog, '--db', join(dir, 'keel.db')], { input: '', encoding: 'utf8' });
  assert.equal(r.status, 0, `keel exited ${r.status}: ${r.stderr}`);
});

test('examples/deploy-api/try passes and says what it proved', { timeout: TEST_TIMEOUT_MS }, async () => {
  const child = spawn(join(example, 'try'), [], { env: { ...process.env, KEEL_BINARY: KEEL } });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const code = await withTimeout(new Promise((res) => child.on('close', res)), 'try to finish', 45000)
    .finally(() => child.kill('SIGKILL'));
  assert.equal(code, 0, out);
  assert.doesNotMatch(out, /FAIL/, out);
  for (const line of [
    /ok {3}one answer, structured: the 503 was transient/,
    /progress 50\/100: starting web-api/,
    /ok {3}the same operation_id: no second restart/,
    /ok {3}marked _meta\["dev.keel\/replayed"\]/,
    /ok {3}marked _meta\["dev.keel\/reconciled"\]/,
    /ok {3}worker restarted exactly once, by that operation/,
    /ok {3}refused with the API's 409/,
    /try: every guarantee held/,
  ]) assert.match(out, line, out);
});

test('deploy-api: one restart per key, even for concurrent calls; lookup finds it', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const state = join(freshDir(t, 'keel-example-'), 'state');
  const runs = Array.from({ length: 4 }, () => new Promise((res) => {
    const c = spawn(api, ['restart', 'web-api', 'production'], {
      env: { PATH: process.env.PATH, DEPLOY_API_STATE: state, DEPLOY_API_SLOW_MS: '200', KEEL_IDEMPOTENCY_KEY: 'k-1' },
    });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    // 'close', not 'exit': 'exit' may come before the last of stdout has been read.
    c.on('close', (code) => res({ code, op: JSON.parse(out) }));
  }));
  const answers = await Promise.all(runs);
  assert.ok(answers.every((a) => a.code === 0), JSON.stringify(answers));
  assert.equal(new Set(answers.map((a) => a.op.operation_id)).size, 1, JSON.stringify(answers));
  assert.deepEqual(readdirSync(join(state, 'ops')).filter((f) => f.endsWith('.json')).length, 1);
  assert.equal(deployApi(state, ['get', 'web-api']).out.restart_count, 1);

  const found = deployApi(state, ['lookup', 'k-1']);
  assert.deepEqual(found.out, { happened: true, result: answers[0].op });
  assert.deepEqual(deployApi(state, ['lookup'], { KEEL_IDEMPOTENCY_KEY: 'k-2' }).out, { happened: false });
  // A key reused for another restart is refused; nothing restarts.
  const reused = deployApi(state, ['restart', 'worker', 'production', 'k-1']);
  assert.equal(reused.status, 1);
  assert.equal(reused.out.error.type, 'backend_422');
  assert.equal(deployApi(state, ['get', 'worker']).out.restart_count, 0);
});

test('deploy-api: errors as {"error": ...} with the documented exit codes; echoed keys stay JSON', { timeout: TEST_TIMEOUT_MS }, (t) => {
  const state = join(freshDir(t, 'keel-example-'), 'state');
  const missing = deployApi(state, ['get', 'nope']);
  assert.equal(missing.status, 1);
  assert.deepEqual([missing.out.error.type, missing.out.error.status], ['backend_404', 404]);
  const wrongEnv = deployApi(state, ['restart', 'billing-sync', 'production', 'k']);
  assert.equal(wrongEnv.status, 1);
  assert.equal(wrongEnv.out.error.type, 'backend_409');
  assert.equal(deployApi(state, ['get', '../jobs']).out.error.status, 400);
  assert.equal(deployApi(state, ['frobnicate']).status, 64);
  const busy = deployApi(state, ['get', 'web-api'], { DEPLOY_API_FAIL_ONCE: '503' });
  assert.deepEqual([busy.status, busy.out.error.type], [75, 'backend_503']);
  assert.equal(deployApi(state, ['get', 'web-api'], { DEPLOY_API_FAIL_ONCE: '503' }).status, 0, 'once only');
  const key = 'q"uo\\te\ttab\u0001ctl é';
  const op = deployApi(state, ['restart', 'web-api', 'production', key]);
  assert.equal(op.status, 0, op.stderr);
  assert.equal(op.out.idempotency_key, key);
});

test('a restart stopped before it took effect is looked up as not done, and the key runs it later', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const dir = freshDir(t, 'keel-example-');
  const k = startRawKeel(t, {
    binary: KEEL, args: ['--catalog', catalog, '--db', join(dir, 'keel.db'), '--log-level', 'info'],
    env: { DEPLOY_API_STATE: join(dir, 'state'), DEPLOY_API_SLOW_MS: '1200' }, clientName: 'example-deploy-api',
  });
  await k.initialize();
  const restart = { name: 'restart_job', arguments: { job_id: 'worker', environment: 'production', idempotencyKey: 'cancel-me' } };
  const id = k.nextId;
  const never = k.request('tools/call', { ...restart, _meta: { progressToken: 'p' } });
  never.catch(() => {});
  // Cancel once the script is running (its first progress line arrived).
  while (!k.messages.some((m) => m.method === 'notifications/progress')) await new Promise((r) => setTimeout(r, 20));
  k.send({ method: 'notifications/cancelled', params: { requestId: id, reason: 'changed my mind' } });
  while (!/lookup of key 'cancel-me' says it did not happen/.test(k.stderr)) await new Promise((r) => setTimeout(r, 20));

  const later = await k.request('tools/call', restart);
  assert.equal(later.result.isError, undefined, JSON.stringify(later));
  assert.equal(later.result._meta?.['dev.keel/replayed'], undefined, 'it ran, not replayed');
  const job = await k.request('tools/call', { name: 'get_job', arguments: { job_id: 'worker' } });
  assert.equal(job.result.structuredContent.restart_count, 1);
  assert.equal(job.result.structuredContent.last_restart.operation_id, later.result.structuredContent.operation_id);
  assert.ok(!k.messages.some((m) => m.id === id), 'the cancelled call is never answered');
  await k.close();
});
