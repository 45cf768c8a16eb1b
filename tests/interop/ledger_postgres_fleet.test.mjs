// Three keel processes serving MCP over Streamable HTTP on one PostgreSQL database (issue 23:
// "several machines"), through the real binary and raw 2026-07-28 HTTP requests:
//  - clients racing the same idempotency keys across the three instances: one execution per
//    key (DIST-1, IDEM-3);
//  - a task created on instance A is polled and cancelled on B, and its work on A stops
//    (DIST-2, TASK-1);
//  - instance A killed with SIGKILL in the middle of a keyed command write; the retry on B is
//    answered in progress while A counts as alive, then reconciled by lookup once A is gone
//    and its command has finished: one effect (DIST-2, IDEM-5);
//  - PostgreSQL crashed (pg_ctl stop -m immediate) in the middle of keyed writes and started
//    again: no key runs twice and no acknowledged write is lost, checked against every intent
//    the clients made (DIST-3, IDEM-3);
//  - the kill switch set with `keel admin` reaches every instance at its next write (OPS-2).
// Run: KEEL_TEST_POSTGRES_URL=... node --test tests/interop/ledger_postgres_fleet.test.mjs
// scripts/test starts a throwaway PostgreSQL (scripts/pg_test_server) and sets the URL; without
// it every test here is skipped. Each test works in a schema of its own, dropped at the end;
// the crash test starts a PostgreSQL of its own. Loopback and Unix sockets only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { KEEL, withTimeout } from './raw_keel.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..', '..');
const fixture = (name) => join(HERE, 'fixtures', 'commands', name);
const BASE = process.env.KEEL_TEST_POSTGRES_URL ?? '';
const SKIP = BASE ? false : 'KEEL_TEST_POSTGRES_URL is not set (scripts/test starts a PostgreSQL)';
const TEST_TIMEOUT_MS = 120000;
const WAIT_MS = 30000;
const MODERN = '2026-07-28';
const KEY_META = 'dev.keel/idempotency-key';
const REPLAYED = 'dev.keel/replayed';
const RECONCILED = 'dev.keel/reconciled';
const DECLARES = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'fleet-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

function psql(url, query) {
  const r = spawnSync('psql', [url, '-tAqc', query], { encoding: 'utf8' });
  assert.equal(r.status, 0, `psql ${query}: ${r.stderr}`);
  return r.stdout.trim();
}

function withSchema(base, schema) {
  return `${base}${base.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
}

// A schema of its own on `base` for test `t`, dropped after it; returns keel's --db URL.
function freshSchema(t, base = BASE) {
  const schema = `fleet_${randomBytes(6).toString('hex')}`;
  psql(base, `CREATE SCHEMA ${schema}`);
  t.after(() => { try { psql(base, `DROP SCHEMA ${schema} CASCADE`); } catch {} });
  return withSchema(base, schema);
}

const LISTENING = /keel: listening on (http:\/\/\S+)/;

// keel --test-tools --http 127.0.0.1:0 --no-stdio --db DB ...args; resolves once listening.
async function startKeel(t, name, db, args = []) {
  const child = spawn(KEEL, ['--test-tools', '--http', '127.0.0.1:0', '--no-stdio', '--db', db, ...args], {
    cwd: tmpdir(), stdio: ['ignore', 'ignore', 'pipe'],
  });
  const k = { name, child, pid: child.pid, url: null, log: '', exit: null };
  k.exited = new Promise((done) => child.once('exit', (code, signal) => { k.exit = { code, signal }; done(k.exit); }));
  t.after(async () => {
    if (k.exit === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => { if (k.exit === null) child.kill('SIGKILL'); }, 3000);
      await k.exited;
      clearTimeout(timer);
    }
  });
  child.stderr.setEncoding('utf8');
  const listening = new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      k.log = (k.log + d).slice(-20000);
      const m = LISTENING.exec(k.log);
      if (m && !k.url) { k.url = m[1]; resolve(); }
    });
    k.exited.then((e) => reject(new Error(`keel ${name} exited before listening: ${JSON.stringify(e)}\n${k.log}`)));
  });
  await withTimeout(listening, `keel ${name} to listen`, WAIT_MS);
  return k;
}

let nextId = 1;

// One 2026-07-28 request over HTTP (stateless: every request declares itself); resolves
// with the JSON-RPC response (from a JSON body or the event stream).
async function rpc(k, method, params = {}, { name, signal } = {}) {
  const id = nextId++;
  const headers = {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN, 'mcp-method': method,
  };
  const named = name ?? params.name ?? params.taskId;
  if (named !== undefined) headers['mcp-name'] = named;
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...DECLARES, ...(params._meta ?? {}) } } };
  const response = await fetch(k.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const message = JSON.parse(line.slice(5));
      if (message.id === id) return message;
    }
    throw new Error(`${method} on ${k.name}: no response in the stream: ${text.slice(0, 500)}`);
  }
  return JSON.parse(text);
}

const call = (k, tool, args, key, opts) =>
  rpc(k, 'tools/call', { name: tool, arguments: args, ...(key ? { _meta: { [KEY_META]: key } } : {}) }, opts);
const errorType = (r) => r.result?.structuredContent?.error?.type;
const show = (r) => JSON.stringify(r).slice(0, 600);

async function waitUntil(check, what, ms = WAIT_MS, everyMs = 50) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : show(last)})`);
    await sleep(everyMs);
  }
}

// Appends every keel's stderr tail to a failure.
async function withLogs(keels, fn) {
  try {
    await fn();
  } catch (err) {
    if (err instanceof Error) {
      for (const k of keels()) if (k?.log.trim()) err.message += `\n--- keel ${k.name} stderr (tail) ---\n${k.log.slice(-3000)}`;
    }
    throw err;
  }
}

// A keyed charge until it is executed or replayed (an in-progress or busy answer is retried).
async function chargeUntilDone(k, args, key) {
  return waitUntil(async () => {
    const r = await call(k, 'charge_account', args, key);
    if (r.result && !r.result.isError) return r;
    const type = errorType(r);
    if (['idempotency_in_progress', 'ledger_busy'].includes(type)) return null;
    throw new Error(`charge ${key} on ${k.name}: ${show(r)}`);
  }, `charge ${key} on ${k.name}`);
}

test('DIST-1 DIST-2 IDEM-3: twelve clients race the same keys across three keels over HTTP on one PostgreSQL: one execution per key',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const keels = [];
    await withLogs(() => keels, async () => {
      for (const name of ['A', 'B', 'C']) keels.push(await startKeel(t, name, db));
      const KEYS = 8;
      const CLIENTS = 12;
      const answers = await Promise.all(Array.from({ length: KEYS }, (_, i) => i).flatMap((i) =>
        Array.from({ length: CLIENTS }, (_, c) => chargeUntilDone(keels[c % 3], { account: `fleet-${i}`, cents: 700 }, `fleet-key-${i}`)
          .then((r) => ({ i, r })))));
      for (let i = 0; i < KEYS; ++i) {
        const mine = answers.filter((a) => a.i === i).map((a) => a.r.result);
        const executed = mine.filter((r) => r._meta?.[REPLAYED] !== true);
        assert.equal(executed.length, 1, `key ${i}: executed ${executed.length} times: ${show(mine)}`);
        const ids = new Set(mine.map((r) => r.structuredContent.charge_id));
        assert.equal(ids.size, 1, `key ${i}: every answer carries the one charge: ${[...ids]}`);
      }
      assert.equal(psql(db, "SELECT count(*) FROM charges WHERE idempotency_key LIKE 'fleet-key-%'"), String(KEYS));
      assert.equal(psql(db, "SELECT count(*) FROM ledger WHERE key LIKE 'fleet-key-%' AND executions = 1 AND state = 'committed'"), String(KEYS));
      assert.equal(psql(db, "SELECT count(*) FROM keel_instances"), '3');
    });
  });

test('DIST-2 TASK-1: a task created on keel A is polled and cancelled on keel B, and its work on A stops',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const keels = [];
    await withLogs(() => keels, async () => {
      const a = await startKeel(t, 'A', db);
      const b = await startKeel(t, 'B', db);
      keels.push(a, b);
      const created = await call(a, 'task_sleep', { ms: 60000 });
      assert.equal(created.result?.resultType, 'task', show(created));
      const taskId = created.result.taskId;
      const get = async (k) => {
        const r = await rpc(k, 'tasks/get', { taskId });
        assert.ok(r.result, `tasks/get on ${k.name}: ${show(r)}`);
        return r.result;
      };
      assert.equal((await get(b)).status, 'working');
      const ack = await rpc(b, 'tasks/cancel', { taskId });
      assert.equal(ack.result?.resultType, 'complete', show(ack));
      assert.equal((await get(b)).status, 'cancelled');
      assert.equal((await get(a)).status, 'cancelled');
      // A finds the cancel in the store (every 250 ms) and stops the sleep at its checkpoint.
      const observed = await waitUntil(async () => {
        const task = await get(a);
        return /cancel_observed/.test(task.statusMessage ?? '') ? task : null;
      }, 'the work on A to stop', 10000);
      assert.equal(observed.status, 'cancelled');
      assert.equal(psql(db, `SELECT cancel_phase FROM tasks WHERE task_id = '${taskId}'`), 'observed');
    });
  });

test('DIST-2 IDEM-5: keel A killed with SIGKILL in the middle of a keyed command write; the retry on B waits while A counts as alive and while its command runs, then gets the looked-up result: one effect',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const dir = mkdtempSync(join(tmpdir(), 'keel-fleet-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({
      tools: [{
        name: 'restart', description: 'a slow keyed write whose command outlives keel',
        inputSchema: { type: 'object', properties: { job: { type: 'string' } }, required: ['job'] },
        effect: 'unsafe_write',
        timeouts: { idleMs: 0, maxMs: 60000, attemptMs: 60000 },
        retry: { maxAttempts: 1 },
        run: {
          command: [fixture('orphan_write.sh'), dir],
          killGraceMs: 200,
          lookup: { command: [fixture('lookup.sh'), dir, 'effects', '{idempotency_key}'], timeoutMs: 5000 },
        },
      }],
    }));
    const lines = (name) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean) : []);
    const key = 'fleet-orphan';
    const keels = [];
    await withLogs(() => keels, async () => {
      const a = await startKeel(t, 'A', db, ['--catalog', catalog]);
      const b = await startKeel(t, 'B', db, ['--catalog', catalog]);
      keels.push(a, b);
      const controller = new AbortController();
      const lost = call(a, 'restart', { job: 'web' }, key, { signal: controller.signal }).catch((e) => e);
      await waitUntil(() => existsSync(join(dir, 'child.pid')) && existsSync(join(dir, 'worker.pid')), 'the command to start');
      const group = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
      t.after(() => { try { process.kill(-group, 'SIGKILL'); } catch {} });
      a.child.kill('SIGKILL');
      await withTimeout(a.exited, 'keel A to die', 5000);
      controller.abort();
      await lost;

      // A is still registered and its heartbeat fresh: its claim is live, nothing is looked up.
      const early = await call(b, 'restart', { job: 'web' }, key);
      assert.equal(errorType(early), 'idempotency_in_progress', show(early));
      assert.deepEqual(lines('lookups'), []);
      // Once A is silent for 15 s (the server's clock), B adopts the claim and looks it up; the
      // lookup says "not yet", but A's command still runs: still in progress, nothing runs.
      await waitUntil(() => lines('lookups').length > 0 ? true : call(b, 'restart', { job: 'web' }, key).then(() => lines('lookups').length > 0),
        'B to adopt the claim of the silent keel A and look it up', 40000, 1000);
      const adopted = await call(b, 'restart', { job: 'web' }, key);
      assert.equal(errorType(adopted), 'idempotency_in_progress', show(adopted));
      assert.equal(lines('runs').length, 1, `the write ran again: ${lines('runs')}`);
      // The orphaned command finishes its write; the next retry on B gets the looked-up result.
      writeFileSync(join(dir, 'go'), '');
      await waitUntil(() => lines('effects').length === 1, 'the orphaned command to record its effect');
      const settled = await waitUntil(async () => {
        const r = await call(b, 'restart', { job: 'web' }, key);
        return r.result && !r.result.isError ? r : null;
      }, 'the retry on B to be reconciled', WAIT_MS, 500);
      assert.equal(settled.result._meta?.[RECONCILED], true, show(settled));
      assert.equal(settled.result.structuredContent?.by, 'lookup', show(settled));
      assert.equal(lines('runs').length, 1, 'one run of the command');
      assert.deepEqual(lines('effects'), [key]);
      assert.equal(psql(db, `SELECT state || ' ' || executions FROM ledger WHERE key = '${key}'`), 'committed 1');
    });
  });

test('DIST-3 IDEM-3: PostgreSQL crashed (pg_ctl stop -m immediate) in the middle of keyed charges on three keels and started again: no key runs twice, no acknowledged charge is lost',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const server = mkdtempSync(join(tmpdir(), 'keel-fleet-pg-'));
    const pg = (...args) => {
      const r = spawnSync(join(REPO, 'scripts', 'pg_test_server'), [...args], { encoding: 'utf8' });
      assert.equal(r.status, 0, `pg_test_server ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    const base = pg('start', server);
    t.after(() => pg('stop', server));
    const db = freshSchema(t, base);
    const keels = [];
    await withLogs(() => keels, async () => {
      for (const name of ['A', 'B', 'C']) keels.push(await startKeel(t, name, db));
      const CLIENTS = 6;
      const MAX_INTENTS = 3000;
      const intents = [];
      const outcomes = {};
      const note = (what) => { outcomes[what] = (outcomes[what] ?? 0) + 1; };
      let crashed = false;
      let restarted = false;
      let ackedAfterRestart = 0;
      // Each client makes new intents (a fresh key each) until well after the restart, and
      // retries each with its key, over the keels in turn, until it is acknowledged.
      const client = async () => {
        while (!(restarted && ackedAfterRestart >= 30) && intents.length < MAX_INTENTS) {
          const n = intents.length;
          const intent = { key: `crash-key-${n}`, account: `crash-${n % 10}`, acked: null };
          intents.push(intent);
          for (let tries = 0; !intent.acked; ++tries) {
            const k = keels[(n + tries) % 3];
            let r;
            try {
              r = await call(k, 'charge_account', { account: intent.account, cents: 100 }, intent.key);
            } catch (e) {
              note(`transport error: ${e.message}`);
              await sleep(50);
              continue;
            }
            if (r.result && !r.result.isError) {
              intent.acked = r.result.structuredContent.charge_id;
              note(r.result._meta?.[REPLAYED] ? 'replayed' : 'executed');
              if (restarted) ++ackedAfterRestart;
            } else {
              const reason = r.result?.structuredContent?.error?.reason;
              note(`${errorType(r) ?? `json-rpc ${r.error?.code}`}${reason ? `/${reason}` : ''}`);
              await sleep(50);
            }
          }
        }
      };
      const crasher = (async () => {
        await waitUntil(() => intents.filter((x) => x.acked).length >= 30, 'thirty charges to be acknowledged');
        pg('crash', server);
        crashed = true;
        await sleep(1000);  // calls meet a database that is down
        pg('restart', server);
        restarted = true;
      })();
      await withTimeout(Promise.all([...Array.from({ length: CLIENTS }, () => client()), crasher]), 'every intent acknowledged', 90000);
      assert.ok(crashed && restarted);
      // Against every intent: its one charge, the one every acknowledgement named.
      const rows = psql(db, "SELECT idempotency_key || ' ' || charge_id FROM charges WHERE idempotency_key LIKE 'crash-key-%'")
        .split('\n').filter(Boolean).map((l) => l.split(' '));
      const byKey = new Map();
      for (const [key, id] of rows) byKey.set(key, [...(byKey.get(key) ?? []), id]);
      for (const intent of intents) {
        assert.deepEqual(byKey.get(intent.key), [intent.acked], `${intent.key}: charges ${byKey.get(intent.key)} vs acknowledged ${intent.acked}`);
      }
      assert.equal(psql(db, "SELECT count(*) FROM ledger WHERE key LIKE 'crash-key-%' AND state = 'committed' AND executions = 1"), String(intents.length));
      // While it was down, writes were refused (the kill switch cannot be read: it fails
      // closed) or failed with nothing done; never anything else.
      assert.ok(Object.keys(outcomes).some((o) => o !== 'executed' && o !== 'replayed'),
        `some calls met the database down: ${JSON.stringify(outcomes)}`);
      for (const o of Object.keys(outcomes)) {
        assert.ok(['executed', 'replayed', 'kill_switch/unreadable', 'ledger_error', 'ledger_busy'].includes(o), `unexpected answer ${o}: ${JSON.stringify(outcomes)}`);
      }
      t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`);
    });
  });

test('OPS-2 DIST-2: the kill switch set with keel admin on one PostgreSQL reaches all three keels within one second, and turning it off too',
  { skip: SKIP, timeout: TEST_TIMEOUT_MS }, async (t) => {
    const db = freshSchema(t);
    const keels = [];
    await withLogs(() => keels, async () => {
      for (const name of ['A', 'B', 'C']) keels.push(await startKeel(t, name, db));
      const admin = (state) => {
        const r = spawnSync(KEEL, ['admin', 'block-writes', state, '--db', db], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
      };
      // Each keel reads the switch at most every 250 ms: a write may still go through just
      // after it is set (under one key per keel, so at most once each), never a second after.
      const blockedWithin = async (k, key, ms) => {
        const until = Date.now() + ms;
        for (;;) {
          const r = await call(k, 'charge_account', { account: 'ks', cents: 1 }, key);
          if (errorType(r) === 'kill_switch') return r;
          assert.ok(Date.now() < until, `${k.name} still writes ${ms} ms after the switch was set: ${show(r)}`);
          await sleep(20);
        }
      };
      admin('on');
      const set = Date.now();
      await Promise.all(keels.map((k, n) => blockedWithin(k, `ks-on-${n}`, 1000)));
      t.diagnostic(`every keel refused writes ${Date.now() - set} ms after the switch was set`);
      for (const k of keels) {
        assert.equal((await call(k, 'echo', { text: 'reads work' })).result?.content?.[0]?.text, 'reads work');
      }
      const before = Number(psql(db, "SELECT count(*) FROM charges WHERE account = 'ks'"));
      assert.ok(before <= 3, `${before} charges went through after the switch was set`);
      admin('off');
      await Promise.all(keels.map((k, n) => waitUntil(async () => {
        const r = await call(k, 'charge_account', { account: 'ks', cents: 1 }, `ks-off-${n}`);
        return r.result && !r.result.isError;
      }, `${k.name} to write again`, 1000, 20)));
      assert.equal(psql(db, "SELECT count(*) FROM charges WHERE account = 'ks'"), String(before + 3));
    });
  });
