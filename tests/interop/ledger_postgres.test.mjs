// The ledger on PostgreSQL (`--db postgresql://...`, issue 23) through the real binary:
// two keel processes on one PostgreSQL database racing the same keys (IDEM-3), a keel killed
// mid-write whose client retries on another keel (IDEM-3, IDEM-5), a database written by a
// newer keel (exit 78), a server that cannot be reached (exit 69).
// Run: KEEL_TEST_POSTGRES_URL=... node --test tests/interop/ledger_postgres.test.mjs
// scripts/test starts a throwaway PostgreSQL (scripts/pg_test_server) and sets the URL; without
// it every test here is skipped. Each test works in a schema of its own (the URL's
// search_path), dropped at the end; the server listens on a Unix socket only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';

import { KEEL, startRawKeel, withTimeout } from './raw_keel.mjs';

const BASE = process.env.KEEL_TEST_POSTGRES_URL ?? '';
const SKIP = BASE ? false : 'KEEL_TEST_POSTGRES_URL is not set (scripts/test starts a PostgreSQL)';
const TEST_TIMEOUT_MS = 120000;
const WAIT_TIMEOUT_MS = 30000;
const REPLAYED = 'dev.keel/replayed';
const KEY_META = 'dev.keel/idempotency-key';
const OPENING_BALANCE = 100000;

function psql(url, query) {
  const r = spawnSync('psql', [url, '-tAqc', query], { encoding: 'utf8' });
  assert.equal(r.status, 0, `psql ${query}: ${r.stderr}`);
  return r.stdout.trim();
}

// A schema of its own for test `t`, dropped after it; returns keel's --db URL for it.
function freshSchema(t) {
  const schema = `it_${randomBytes(6).toString('hex')}`;
  psql(BASE, `CREATE SCHEMA ${schema}`);
  t.after(() => psql(BASE, `DROP SCHEMA ${schema} CASCADE`));
  return `${BASE}${BASE.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
}

function startKeel(t, { db, args = [], env = {} }) {
  const k = startRawKeel(t, {
    binary: KEEL, args: ['--db', db, ...args], env, cwd: tmpdir(),
    clientName: 'ledger-postgres', waitMs: WAIT_TIMEOUT_MS,
  });
  k.call = (name, a, meta) => k.request('tools/call', meta ? { name, arguments: a, _meta: meta } : { name, arguments: a });
  return k;
}

function ok(response, what) {
  assert.ok(response.result, `${what}: JSON-RPC error ${JSON.stringify(response.error)}`);
  assert.notEqual(response.result.isError, true, `${what}: tool error ${JSON.stringify(response.result)}`);
  return response.result;
}
const replayed = (result) => result._meta?.[REPLAYED] === true;

async function withStderr(keels, fn) {
  try {
    await fn();
  } catch (err) {
    if (err instanceof Error) {
      for (const [name, k] of Object.entries(keels())) {
        if (k?.stderr.trim()) err.message += `\n--- ${name} stderr (tail) ---\n${k.stderr.slice(-4000)}`;
      }
    }
    throw err;
  }
}

test('DIST-1 IDEM-3: two keel processes on one PostgreSQL race the same keyed charges: one execution per key',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const a = startKeel(t, { db });
    const b = startKeel(t, { db });
    await withStderr(() => ({ a, b }), async () => {
      await Promise.all([a.initialize(), b.initialize()]);
      const ROUNDS = 10;
      for (let i = 0; i < ROUNDS; ++i) {
        const key = `pg-race-${i}`;
        const args = { account: `race-${i}`, cents: 1200 };
        const [ra, rb] = (await Promise.all([
          a.call('charge_account', args, { [KEY_META]: key }),
          b.call('charge_account', args, { [KEY_META]: key }),
        ])).map((r, j) => ok(r, `round ${i} keel ${'ab'[j]}`));
        assert.equal(ra.structuredContent.charge_id, rb.structuredContent.charge_id, `round ${i}: two charge_ids`);
        assert.equal([ra, rb].filter(replayed).length, 1, `round ${i}: exactly one answer replayed`);
        assert.equal(ra.structuredContent.balance_cents, OPENING_BALANCE - 1200);
      }
      assert.equal((await a.close()).code, 0);
      assert.equal((await b.close()).code, 0);
      assert.equal(psql(db, "SELECT count(*) FROM charges WHERE idempotency_key LIKE 'pg-race-%'"), String(ROUNDS));
      assert.equal(psql(db, "SELECT count(*) FROM ledger WHERE tool = 'charge_account' AND executions = 1"),
        String(ROUNDS));
    });
  });

test('DIST-3 IDEM-3: a keel with --db-connections 2 and 8 workers serves 48 concurrent keyed charges (16 keys, each sent three times) once per key, on at most 2 + 3 connections',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    // The URL names the keel, so its connections can be told from every other client's.
    const app = `keel_pool_${randomBytes(4).toString('hex')}`;
    const k = startKeel(t, { db: `${db}&application_name=${app}`, args: ['--db-connections', '2', '--workers', '8'] });
    await withStderr(() => ({ k }), async () => {
      await k.initialize();
      const KEYS = 16;
      const calls = [];
      for (let copy = 0; copy < 3; ++copy) {
        for (let i = 0; i < KEYS; ++i) {
          calls.push(k.call('charge_account', { account: `pool-${i}`, cents: 700 }, { [KEY_META]: `pg-pool-${i}` }));
        }
      }
      const results = (await Promise.all(calls)).map((r, j) => ok(r, `call ${j}`));
      for (let i = 0; i < KEYS; ++i) {
        const same = [results[i], results[KEYS + i], results[2 * KEYS + i]];
        assert.equal(new Set(same.map((r) => r.structuredContent.charge_id)).size, 1, `key ${i}: more than one charge_id`);
        assert.equal(same.filter(replayed).length, 2, `key ${i}: not exactly two answers replayed`);
      }
      // The pool keeps what it opened until exit: this is every connection the keel made.
      const open = Number(psql(BASE, `SELECT count(*) FROM pg_stat_activity WHERE application_name = '${app}'`));
      assert.ok(open >= 3 && open <= 5, `${open} connections open, expected 2 for calls + 3 of keel's own at most`);
      assert.equal((await k.close()).code, 0);
      assert.equal(psql(db, "SELECT count(*) FROM charges WHERE idempotency_key LIKE 'pg-pool-%'"), String(KEYS));
      assert.equal(psql(db, "SELECT count(*) FROM ledger WHERE tool = 'charge_account' AND executions = 1"), String(KEYS));
    });
  });

// Where the test-only crash switch kills the first keel, and what the retry on a second keel
// (another instance on the same database) must see.
const CRASHES = [
  { step: 'before_effect', retryReplays: false },
  { step: 'after_effect', retryReplays: false },
  { step: 'before_result', retryReplays: true },
];

for (const { step, retryReplays } of CRASHES) {
  test(`DIST-1 IDEM-3 IDEM-5: a keel on PostgreSQL killed at ${step} during a keyed charge; the retry on ` +
    `another keel ${retryReplays ? 'replays the committed charge' : 'executes'}: one effect`,
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const key = `pg-crash-${step}`;
    const args = { account: 'crash-acct', cents: 1200, idempotencyKey: key };
    let first = null, second = null;
    await withStderr(() => ({ first, second }), async () => {
      first = startKeel(t, { db, args: ['--test-tools'], env: { KEEL_TEST_CRASH_AT: step } });
      second = startKeel(t, { db });
      await Promise.all([first.initialize(), second.initialize()]);
      await assert.rejects(first.call('charge_account', args), /exited/, 'the crashing call must not be answered');
      const exit = await withTimeout(first.exited, 'keel to die', WAIT_TIMEOUT_MS);
      assert.equal(exit.signal, 'SIGKILL');

      const retry = ok(await second.call('charge_account', args), 'retry on the second keel');
      assert.equal(replayed(retry), retryReplays, `retry replayed: ${JSON.stringify(retry._meta)}`);
      assert.equal(retry.structuredContent.balance_cents, OPENING_BALANCE - 1200);
      const again = ok(await second.call('charge_account', args), 'second retry');
      assert.ok(replayed(again));
      assert.equal(again.structuredContent.charge_id, retry.structuredContent.charge_id);
      assert.equal((await second.close()).code, 0);
      assert.equal(psql(db, `SELECT count(*) FROM charges WHERE idempotency_key = '${key}'`), '1');
      assert.equal(psql(db, `SELECT executions FROM ledger WHERE key = '${key}'`), '1');
    });
  });
}

test('DIST-1 IDEM-4: a PostgreSQL database written by a newer keel (schema version 999) → exit 78, nothing on stdout',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const first = startKeel(t, { db });
    await first.initialize();
    assert.equal((await first.close()).code, 0);
    psql(db, 'UPDATE keel_schema SET version = 999');
    const r = spawnSync(KEEL, ['--db', db], { input: '', encoding: 'utf8', timeout: WAIT_TIMEOUT_MS });
    assert.equal(r.status, 78, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /newer keel/);
  });

test('DIST-1: a PostgreSQL server that cannot be reached at start-up → exit 69 and why, the password never shown',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async () => {
    const db = 'postgresql://keel:s3cret@/keel?host=/nonexistent-keel-socket-dir';
    const r = spawnSync(KEEL, ['--db', db], { input: '', encoding: 'utf8', timeout: WAIT_TIMEOUT_MS });
    assert.equal(r.status, 69, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /cannot open the database postgresql:\/\/keel:\*\*\*@/);
    assert.doesNotMatch(r.stderr, /s3cret/);
  });

test('DIST-2: a serving keel is listed live by `keel admin instances` while it runs and is gone from the list once it exits cleanly; a keel killed with SIGKILL stays listed until it is silent',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const instances = () => {
      const r = spawnSync(KEEL, ['admin', 'instances', '--db', db], { encoding: 'utf8', timeout: WAIT_TIMEOUT_MS });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    const a = startKeel(t, { db });
    const b = startKeel(t, { db });
    await withStderr(() => ({ a, b }), async () => {
      await Promise.all([a.initialize(), b.initialize()]);
      const both = instances();
      assert.match(both, /^2 live of 2 registered keel\(s\)/, both);
      assert.match(both, new RegExp(`live  keel-${a.pid}-\\S+  host \\S+  pid ${a.pid} `));
      assert.match(both, new RegExp(`live  keel-${b.pid}-\\S+  host \\S+  pid ${b.pid} `));
      assert.equal((await a.close()).code, 0);
      const one = instances();
      assert.match(one, /^1 live of 1 registered keel\(s\)/, one);
      assert.doesNotMatch(one, new RegExp(`pid ${a.pid} `));
      b.child.kill('SIGKILL');
      await b.exited;
      // Killed: no chance to deregister. It counts as live until 15 s of silence.
      assert.match(instances(), new RegExp(`keel-${b.pid}-\\S+  host \\S+  pid ${b.pid} `));
    });
  });
