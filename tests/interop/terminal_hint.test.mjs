// keel started by hand in a terminal says what it is waiting for, on stderr, instead of
// waiting in silence; started with a pipe (as every MCP host starts it) it says nothing of the
// kind. The terminal is a pseudo-terminal made by util-linux's `script` (Debian's bsdutils,
// an essential package); the test is skipped where it is missing.
// Run: node --test tests/interop/terminal_hint.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { KEEL, freshDir } from './raw_keel.mjs';

const HINT = 'reading MCP messages (JSON-RPC, one per line) from this terminal';

test('keel in a terminal says it reads MCP messages from it and how to end', (t) => {
  if (spawnSync('script', ['--version']).status !== 0) return t.skip('no util-linux script');
  const db = join(freshDir(t, 'terminal-hint'), 'keel.db');
  // script gives keel a terminal as stdin; its own stdin at EOF ends the session.
  const r = spawnSync('script', ['-qec', `${KEEL} --db ${db}`, '/dev/null'],
    { input: '', encoding: 'utf8', timeout: 20000 });
  // A container without /dev/pts cannot make a terminal: nothing to test there.
  if (r.status !== 0 && /pseudo-terminal|openpty|\bpty\b/i.test(`${r.stderr}${r.stdout}`)) {
    return t.skip(`script cannot make a terminal here: ${r.stderr.trim()}`);
  }
  assert.ok(r.stdout.includes(HINT), `terminal output: ${JSON.stringify(r.stdout)}`);
  assert.ok(r.stdout.includes('Ctrl-D ends'), r.stdout);
});

test('keel started with a pipe prints no terminal hint', (t) => {
  const db = join(freshDir(t, 'terminal-hint'), 'keel.db');
  const r = spawnSync(KEEL, ['--db', db], { input: '', encoding: 'utf8', timeout: 20000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '');
  assert.ok(!r.stderr.includes(HINT), r.stderr);
});
