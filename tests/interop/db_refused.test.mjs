// A --db file keel cannot use safely is refused at start-up: exit 73 (EX_CANTCREAT) with the
// reason on stderr and nothing on stdout, instead of serving calls that all fail or, worse,
// run twice (IDEM-1, IDEM-5): a second hard link to the file, a file keel can read
// but not write, a file whose pages are damaged. A symlink to the file keeps working.
// Run: node --test tests/interop/db_refused.test.mjs   (scripts/test runs it too)
//
// Each test uses its own temporary directory; waits are for conditions (an answer, an exit)
// with generous bounds. CI runs as root, for whom a 0444 file is writable: there the
// read-only test runs keel under setpriv without CAP_DAC_OVERRIDE (skipped if it cannot).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, linkSync, openSync, readSync, statSync, symlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { KEEL, freshDir, startRawKeel, withTimeout } from './raw_keel.mjs';

const TEST_TIMEOUT_MS = 60000;
const WAIT_MS = 20000;
const KEY_META = 'dev.keel/idempotency-key';

function startKeel(t, db, { binary = KEEL, prefix = [] } = {}) {
  return startRawKeel(t, { binary, args: [...prefix, '--db', db], clientName: 'db-refused', waitMs: WAIT_MS });
}

// keel must exit 73 before serving anything, naming the file and the reason.
async function assertRefused(k, db, reason) {
  const exit = await withTimeout(k.exited, 'keel to refuse the database', WAIT_MS);
  assert.equal(exit.code, 73, `exit ${JSON.stringify(exit)}; stderr: ${k.stderr}`);
  assert.equal(k.stdout, '', 'nothing on stdout');
  assert.ok(k.stderr.includes(db), `stderr names ${db}: ${k.stderr}`);
  assert.match(k.stderr, reason);
}

// A real keel database with some keyed charges in it, closed (its WAL checkpointed away).
async function makeDatabase(t, db, charges = 1) {
  const k = startKeel(t, db);
  await k.initialize();
  for (let i = 0; i < charges; i++) {
    const r = await k.request('tools/call', {
      name: 'charge_account', arguments: { account: `acct-${i % 7}`, cents: 100 }, _meta: { [KEY_META]: `key-${i}` },
    });
    assert.notEqual(r.result?.isError, true, JSON.stringify(r));
  }
  assert.equal((await k.close()).code, 0);
  assert.ok(!existsSync(`${db}-wal`), 'the WAL was checkpointed at exit');
}

test('a --db path that is a second hard link to the database is refused with exit 73', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const dir = freshDir(t, 'keel-db-');
  const db = join(dir, 'keel.db');
  await makeDatabase(t, db);
  const other = join(dir, 'other-name.db');
  linkSync(db, other);
  // Both names: each keel would keep its own WAL and run every key once more.
  await assertRefused(startKeel(t, other), other, /hard link/);
  await assertRefused(startKeel(t, db), db, /hard link/);
});

test('two keels on a database and a symlink to it share one ledger: a key runs once', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const dir = freshDir(t, 'keel-db-');
  const db = join(dir, 'keel.db');
  const link = join(dir, 'link.db');
  await makeDatabase(t, db);
  symlinkSync(db, link);
  const a = startKeel(t, db);
  const b = startKeel(t, link);
  await Promise.all([a.initialize(), b.initialize()]);
  const args = { name: 'charge_account', arguments: { account: 'acct-s', cents: 250 }, _meta: { [KEY_META]: 'shared-key' } };
  const first = await a.request('tools/call', args);
  const second = await b.request('tools/call', args);
  assert.notEqual(first.result.isError, true, JSON.stringify(first));
  assert.equal(second.result._meta?.['dev.keel/replayed'], true, JSON.stringify(second));
  assert.equal(second.result.structuredContent.charge_id, first.result.structuredContent.charge_id);
  await Promise.all([a.close(), b.close()]);
});

test('a --db whose pages are damaged in the middle is refused with exit 73', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const dir = freshDir(t, 'keel-db-');
  const db = join(dir, 'keel.db');
  await makeDatabase(t, db, 30);
  // The page size is the big-endian 16-bit number at offset 16 (1 means 65536).
  const fd = openSync(db, 'r+');
  const header = Buffer.alloc(18);
  readSync(fd, header, 0, 18, 0);
  const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16);
  const pages = Math.floor(statSync(db).size / pageSize);
  assert.ok(pages >= 6, `a database of ${pages} pages`);
  const garbage = Buffer.alloc(pageSize, 0xa5);
  for (let page = Math.floor(pages / 3); page < Math.floor((2 * pages) / 3); page++) {
    writeSync(fd, garbage, 0, pageSize, page * pageSize);
  }
  closeSync(fd);
  await assertRefused(startKeel(t, db), db, /damaged/);
});

test('a --db keel can read but not write is refused with exit 73', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  // Root writes a 0444 file anyway: without CAP_DAC_OVERRIDE (setpriv) it cannot.
  const asRoot = process.getuid() === 0;
  const dropCaps = ['--bounding-set=-dac_override,-dac_read_search', '--'];
  if (asRoot && spawnSync('setpriv', [...dropCaps, 'true']).status !== 0) {
    t.skip('running as root and setpriv cannot drop CAP_DAC_OVERRIDE here');
    return;
  }
  const dir = freshDir(t, 'keel-db-');
  const db = join(dir, 'keel.db');
  await makeDatabase(t, db);
  chmodSync(db, 0o444);
  const k = asRoot ? startKeel(t, db, { binary: 'setpriv', prefix: [...dropCaps, KEEL] }) : startKeel(t, db);
  await assertRefused(k, db, /cannot write/);
});
