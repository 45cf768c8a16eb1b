// The idempotency ledger across keel processes (IDEM-3, IDEM-4, IDEM-5) and with the
// official SDK client (IDEM-2).
// Run: node --test tests/interop/ledger_processes.test.mjs   (scripts/test runs it too)
// The binary is $KEEL_BINARY, else <repo>/build/keel. Most tests speak raw JSON-RPC lines
// over pipes, so they decide exactly when each line is written (two processes racing one
// key) and can watch a process die; the last one uses the SDK client.
//
// Every test uses a database file in its own fresh temporary directory. Waits are for
// conditions only (an answer, an exit), with generous bounds: the machine is slow and
// shared. Nothing here asserts timing.
//
// When the sqlite3 CLI is installed, the tests also read the database file directly after
// keel exited (the charges table, PRAGMA integrity_check); without it those checks are
// skipped and the schema-version test patches the SQLite header instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { HAVE_SQLITE3, KEEL, freshDir as makeDir, sql, startRawKeel, withTimeout } from './raw_keel.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

const TEST_TIMEOUT_MS = 120000;
const WAIT_TIMEOUT_MS = 30000;
const REPLAYED = 'dev.keel/replayed';
const KEY_META = 'dev.keel/idempotency-key';
const OPENING_BALANCE = 100000;

function freshDir(t) {
  return makeDir(t, 'keel-ledger-');
}

// keel as a child process speaking raw JSON-RPC lines (see raw_keel.mjs).
function startKeel(t, { db, args = [], env = {} }) {
  const k = startRawKeel(t, {
    binary: KEEL, args, env: { KEEL_DB: db, ...env }, cwd: dirname(db),
    clientName: 'ledger-processes', waitMs: WAIT_TIMEOUT_MS,
  });
  k.call = (name, args, meta) => k.request('tools/call', meta ? { name, arguments: args, _meta: meta } : { name, arguments: args });
  return k;
}

function waitFor(promise, what) {
  return withTimeout(promise, what, WAIT_TIMEOUT_MS);
}

// The tool result of a tools/call response (fails on a JSON-RPC error or a tool error).
function ok(response, what) {
  assert.ok(response.result, `${what}: JSON-RPC error ${JSON.stringify(response.error)}`);
  assert.notEqual(response.result.isError, true, `${what}: tool error ${JSON.stringify(response.result)}`);
  return response.result;
}
const replayed = (result) => result._meta?.[REPLAYED] === true;

// keel's stderr is appended to a failure's message.
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

test('IDEM-3: two keel processes on one database race the same keyed charge: one execution, both see it',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    const a = startKeel(t, { db });
    const b = startKeel(t, { db });
    await withStderr(() => ({ a, b }), async () => {
      await Promise.all([a.initialize(), b.initialize()]);
      const ROUNDS = 10;
      const executedBy = { a: 0, b: 0 };
      for (let i = 0; i < ROUNDS; ++i) {
        const key = `idem3-race-${i}`;
        const args = { account: `race-${i}`, cents: 1200 };
        // Both lines are written in the same tick: the two processes race for the key.
        const pa = a.call('charge_account', args, { [KEY_META]: key });
        const pb = b.call('charge_account', args, { [KEY_META]: key });
        const [ra, rb] = (await Promise.all([pa, pb])).map((r, j) => ok(r, `round ${i} keel ${'ab'[j]}`));
        assert.equal(ra.structuredContent.charge_id, rb.structuredContent.charge_id, `round ${i}: two charge_ids`);
        assert.equal(ra.structuredContent.balance_cents, OPENING_BALANCE - 1200, `round ${i}`);
        assert.equal(rb.structuredContent.balance_cents, OPENING_BALANCE - 1200, `round ${i}`);
        assert.equal([ra, rb].filter(replayed).length, 1, `round ${i}: exactly one answer replayed: ` +
          `${JSON.stringify(ra._meta)} / ${JSON.stringify(rb._meta)}`);
        executedBy[replayed(ra) ? 'b' : 'a'] += 1;
        // A third look, from either process: one execution, the balance fell once.
        const lookup = ok(await a.call('ledger_lookup', { tool: 'charge_account', key }), 'lookup').structuredContent;
        assert.equal(lookup.state, 'committed');
        assert.equal(lookup.executions, 1, `round ${i}: executions`);
        assert.equal(lookup.result.structuredContent.charge_id, ra.structuredContent.charge_id);
        const third = ok(await b.call('charge_account', args, { [KEY_META]: key }), 'third call');
        assert.ok(replayed(third));
        assert.equal(third.structuredContent.balance_cents, OPENING_BALANCE - 1200);
        const unkeyed = ok(await a.call('charge_account', { account: args.account, cents: 1 }), 'unkeyed charge');
        assert.equal(unkeyed.structuredContent.balance_cents, OPENING_BALANCE - 1201, `round ${i}: balance`);
      }
      // Which process won is up to the race; it is shown, not asserted.
      t.diagnostic(`executed by keel a: ${executedBy.a}, by keel b: ${executedBy.b}`);
      assert.equal((await a.close()).code, 0);
      assert.equal((await b.close()).code, 0);
      if (HAVE_SQLITE3) {
        assert.equal(sql(db, "SELECT count(*) FROM charges WHERE idempotency_key LIKE 'idem3-race-%'"), String(ROUNDS));
        assert.equal(sql(db, "SELECT count(DISTINCT idempotency_key) FROM charges WHERE idempotency_key LIKE 'idem3-race-%'"), String(ROUNDS));
        assert.equal(sql(db, 'PRAGMA integrity_check'), 'ok');
      }
    });
  });

// Where the test-only crash switch kills keel, and what a retry after a restart must see.
const CRASHES = [
  // Inside the ledger's transaction, before COMMIT: nothing happened, the retry executes.
  { step: 'before_effect', retryReplays: false },
  { step: 'after_effect', retryReplays: false },
  // After COMMIT, before the answer: the charge happened once, the retry is its replay.
  { step: 'before_result', retryReplays: true },
];

for (const { step, retryReplays } of CRASHES) {
  test(`IDEM-3 IDEM-4 IDEM-5: keel killed at ${step} during a keyed charge; after a restart the retry ` +
    `${retryReplays ? 'replays the committed charge' : 'executes'}: the effect happened at most once`,
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    const key = `idem3-crash-${step}`;
    const args = { account: 'crash-acct', cents: 1200, idempotencyKey: key };
    let first = null, second = null;
    await withStderr(() => ({ first, second }), async () => {
      first = startKeel(t, { db, args: ['--test-tools'], env: { KEEL_TEST_CRASH_AT: step } });
      await first.initialize();
      const answer = first.call('charge_account', args);
      await assert.rejects(answer, /exited/, 'the crashing call must not be answered');
      const exit = await waitFor(first.exited, 'keel to die');
      assert.equal(exit.signal, 'SIGKILL', `keel must die by SIGKILL, got ${JSON.stringify(exit)}`);
      assert.equal(first.messages.filter((m) => m.id !== 1).length, 0, 'no answer after initialize');
      assert.match(first.stderr, new RegExp(`KEEL_TEST_CRASH_AT=${step}`));

      second = startKeel(t, { db });
      await second.initialize();
      const retry = ok(await second.call('charge_account', args), 'retry');
      assert.equal(replayed(retry), retryReplays, `retry replayed: ${JSON.stringify(retry._meta)}`);
      assert.equal(retry.structuredContent.balance_cents, OPENING_BALANCE - 1200);
      const lookup = ok(await second.call('ledger_lookup', { tool: 'charge_account', key }), 'lookup').structuredContent;
      assert.equal(lookup.state, 'committed');
      assert.equal(lookup.executions, 1);
      assert.equal(lookup.result.structuredContent.charge_id, retry.structuredContent.charge_id);
      const again = ok(await second.call('charge_account', args), 'second retry');
      assert.ok(replayed(again));
      assert.equal(again.structuredContent.charge_id, retry.structuredContent.charge_id);
      const unkeyed = ok(await second.call('charge_account', { account: 'crash-acct', cents: 1 }), 'unkeyed');
      assert.equal(unkeyed.structuredContent.balance_cents, OPENING_BALANCE - 1201, 'the balance fell once');
      assert.equal((await second.close()).code, 0);
      if (HAVE_SQLITE3) {
        assert.equal(sql(db, 'PRAGMA integrity_check'), 'ok');
        assert.equal(sql(db, `SELECT count(*) FROM charges WHERE idempotency_key = '${key}'`), '1');
      } else {
        t.diagnostic('sqlite3 CLI not installed: integrity_check skipped');
      }
    });
  });
}

test('IDEM-4: a keyed charge survives close and reopen: a second keel on the file replays it',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    const key = 'idem4-reopen';
    const args = { account: 'reopen-acct', cents: 700 };
    let first = null, second = null;
    await withStderr(() => ({ first, second }), async () => {
      first = startKeel(t, { db });
      await first.initialize();
      const charged = ok(await first.call('charge_account', args, { [KEY_META]: key }), 'charge');
      assert.ok(!replayed(charged));
      assert.equal((await first.close()).code, 0);

      second = startKeel(t, { db: join(dir, 'unused.db'), args: ['--db', db] });  // --db wins over KEEL_DB
      await second.initialize();
      const lookup = ok(await second.call('ledger_lookup', { tool: 'charge_account', key }), 'lookup').structuredContent;
      assert.equal(lookup.found, true);
      assert.equal(lookup.state, 'committed');
      assert.equal(lookup.executions, 1);
      assert.deepEqual(lookup.result.structuredContent, charged.structuredContent);
      const replay = ok(await second.call('charge_account', args, { [KEY_META]: key }), 'replay');
      assert.ok(replayed(replay));
      assert.deepEqual(replay.structuredContent, charged.structuredContent);
      assert.equal((await second.close()).code, 0);
      assert.ok(!existsSync(join(dir, 'unused.db')), 'KEEL_DB was used although --db was given');
    });
  });

test('IDEM-4: a database written by a newer keel (user_version 999) → exit 78, a message on stderr, nothing on stdout',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const db = join(dir, 'keel.db');
    const first = startKeel(t, { db });
    await first.initialize();
    assert.equal((await first.close()).code, 0);
    if (HAVE_SQLITE3) {
      sql(db, 'PRAGMA user_version = 999');
      assert.equal(sql(db, 'PRAGMA user_version'), '999');
    } else {
      // user_version is the 4-byte big-endian integer at offset 60 of the SQLite header.
      assert.ok(!existsSync(`${db}-wal`) || spawnSync('test', ['-s', `${db}-wal`]).status !== 0,
        'a non-empty WAL file remains: patching the header would not be seen');
      const fd = openSync(db, 'r+');
      try {
        const v = Buffer.alloc(4);
        v.writeUInt32BE(999);
        writeSync(fd, v, 0, 4, 60);
      } finally { closeSync(fd); }
    }
    const newer = startKeel(t, { db });
    const exit = await waitFor(newer.exited, 'keel to refuse the database');
    assert.equal(exit.code, 78, `exit ${JSON.stringify(exit)}; stderr: ${newer.stderr}`);
    assert.equal(newer.stdout, '', 'nothing on stdout');
    assert.match(newer.stderr, /newer/, `stderr: ${newer.stderr}`);
    // The file is left as it was.
    const fd = openSync(db, 'r');
    try {
      const v = Buffer.alloc(4);
      readSync(fd, v, 0, 4, 60);
      assert.equal(v.readUInt32BE(0), 999);
    } finally { closeSync(fd); }
  });

test('IDEM-2: the official SDK client sends the key in params._meta; the retry is a replay with the same charge_id',
  { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const dir = freshDir(t);
    const transport = new StdioClientTransport({
      command: KEEL, args: [], cwd: dir, stderr: 'pipe',
      env: { ...getDefaultEnvironment(), KEEL_DB: join(dir, 'keel.db') },
    });
    let stderr = '';
    transport.stderr.setEncoding('utf8');
    transport.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
    // Records what the SDK writes, to check that _meta goes out in params.
    const sent = [];
    const send = transport.send.bind(transport);
    transport.send = (message, options) => { sent.push(structuredClone(message)); return send(message, options); };
    const client = new Client({ name: 'keel-ledger-sdk-test', version: '0.0.0' });
    t.after(() => client.close().catch(() => {}));
    try {
      await client.connect(transport, { timeout: WAIT_TIMEOUT_MS });
      const call = () => client.callTool({
        name: 'charge_account', arguments: { account: 'a', cents: 5 }, _meta: { [KEY_META]: 'sdk-1' },
      }, undefined, { timeout: WAIT_TIMEOUT_MS });
      const first = await call();
      const second = await call();
      const calls = sent.filter((m) => m.method === 'tools/call');
      assert.equal(calls.length, 2);
      for (const m of calls) assert.equal(m.params._meta?.[KEY_META], 'sdk-1', `sent: ${JSON.stringify(m)}`);
      assert.notEqual(first.isError, true, JSON.stringify(first));
      assert.notEqual(second.isError, true, JSON.stringify(second));
      assert.equal(first._meta?.[REPLAYED], undefined, `first: ${JSON.stringify(first._meta)}`);
      assert.equal(second._meta?.[REPLAYED], true, `second: ${JSON.stringify(second._meta)}`);
      assert.equal(second.structuredContent.charge_id, first.structuredContent.charge_id);
      assert.equal(second.structuredContent.balance_cents, OPENING_BALANCE - 5);
      const lookup = await client.callTool({ name: 'ledger_lookup', arguments: { tool: 'charge_account', key: 'sdk-1' } },
        undefined, { timeout: WAIT_TIMEOUT_MS });
      assert.equal(lookup.structuredContent.executions, 1);
    } catch (err) {
      if (stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${stderr}`;
      throw err;
    }
  });
