// The kill switch for writes (OPS-2) from a shell: `keel admin block-writes on|off --db PATH`
// while keel runs on that file. The running keel sees each change on its next write call;
// reads never stop; the switch survives a restart; a blocked call leaves no ledger row.
// Run: node --test tests/interop/kill_switch.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { KEEL, freshDir, startRawKeel } from './raw_keel.mjs';

const admin = (db, state) => {
  const r = spawnSync(KEEL, ['admin', 'block-writes', state, '--db', db], { encoding: 'utf8' });
  assert.equal(r.status, 0, `keel admin block-writes ${state}: ${r.stderr}`);
  return r.stdout.trim();
};

async function start(t, db, args = []) {
  const k = startRawKeel(t, { binary: KEEL, args: ['--db', db, ...args], clientName: 'kill-switch' });
  await k.initialize();
  return k;
}

const charge = (k, key) => k.request('tools/call', {
  name: 'charge_account', arguments: { account: 'acct-ks', cents: 100, idempotencyKey: key },
});
const errorType = (r) => r.result?.structuredContent?.error?.type;

test('keel admin block-writes flips the switch for a running keel; reads keep working; it survives a restart', async (t) => {
  const db = join(freshDir(t, 'keel-kill-switch-'), 'keel.db');
  const k = await start(t, db);
  const first = await charge(k, 'ks-1');
  assert.equal(first.result?.isError, undefined, `a charge before the switch: ${JSON.stringify(first)}`);

  assert.match(admin(db, 'on'), /^writes blocked in /);
  const blocked = await charge(k, 'ks-2');
  assert.equal(errorType(blocked), 'kill_switch', JSON.stringify(blocked));
  const echo = await k.request('tools/call', { name: 'echo', arguments: { text: 'still here' } });
  assert.equal(echo.result?.content?.[0]?.text, 'still here');
  const lookup = await k.request('tools/call', { name: 'ledger_lookup', arguments: { tool: 'charge_account', key: 'ks-2' } });
  assert.equal(lookup.result?.structuredContent?.found, false, 'a blocked call leaves no ledger row');
  await k.close();

  // A restart keeps it on.
  const again = await start(t, db);
  assert.equal(errorType(await charge(again, 'ks-2')), 'kill_switch', 'still blocked after a restart');
  assert.match(admin(db, 'status'), /^writes blocked in .* by keel admin block-writes on/);
  assert.match(admin(db, 'off'), /^writes allowed in /);
  const allowed = await charge(again, 'ks-2');
  assert.ok(allowed.result?.structuredContent?.charge_id, `the same key runs once allowed: ${JSON.stringify(allowed)}`);
  await again.close();
});

test('--block-writes at start-up turns the persisted switch on', async (t) => {
  const db = join(freshDir(t, 'keel-kill-switch-'), 'keel.db');
  const k = await start(t, db, ['--block-writes']);
  assert.equal(errorType(await charge(k, 'ks-3')), 'kill_switch');
  await k.close();
  assert.match(admin(db, 'status'), /^writes blocked in .* by --block-writes at start-up/);
});
