// `keel catalog check FILE [--path PATH]` validates a catalog as a serving keel does at
// start-up, without serving: exit 0 naming the tools it would serve, 78 listing every problem
// (stderr, one "keel: catalog: ..." line each), 66 when the file cannot be read. A bare
// program name must be an executable file in a directory of the PATH: this shell's, or the one
// --path gives (hosts start keel with a short PATH).
// proves: ADO-2
// Run: node --test tests/interop/catalog_check.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { KEEL, freshDir } from './raw_keel.mjs';

function tool(name, fields) {
  return { name, description: `catalog check ${name}`, inputSchema: { type: 'object' }, effect: 'read', ...fields };
}

function check(t, tools, extra = []) {
  const dir = freshDir(t, 'keel-catalog-check-');
  const file = join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({ tools }));
  const r = spawnSync(KEEL, ['catalog', 'check', file, ...extra], { encoding: 'utf8', timeout: 20000, cwd: dir });
  return { ...r, file, dir };
}

test('a valid catalog: exit 0, stdout names every tool it would serve, nothing on stderr', (t) => {
  const r = check(t, [tool('say', { run: { command: ['/bin/echo', 'hi'] } }), tool('shell', { run: { command: ['sh', '-c', 'true'] } })]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `catalog ${r.file} is valid: 2 tools: say, shell\n`);
  assert.equal(r.stderr, '');
});

test('an invalid catalog: exit 78, every problem listed, nothing on stdout', (t) => {
  // The fields first (every problem of the file at once), then the programs and the binding.
  const r = check(t, [
    tool('bad name', { run: { command: ['/bin/echo'] } }),
    tool('typo', { effect: 'write', run: { command: ['/bin/echo'] } }),
  ]);
  assert.equal(r.status, 78, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /keel: catalog: tools\[0\]\.name: "bad name" must match/);
  assert.match(r.stderr, /keel: catalog: tools\[1\] \(typo\)\.effect: "write" is not one of/);
  const p = check(t, [
    tool('missing_program', { run: { command: ['/nonexistent/keel-prog'] } }),
    tool('missing_too', { run: { command: ['/nonexistent/keel-prog-2'] } }),
  ]);
  assert.equal(p.status, 78, p.stderr);
  assert.match(p.stderr, /tools\[0\] \(missing_program\)\.run\.command\[0\]: \/nonexistent\/keel-prog is not an executable file/);
  assert.match(p.stderr, /tools\[1\] \(missing_too\)\.run\.command\[0\]: \/nonexistent\/keel-prog-2 is not an executable file/);
  const u = check(t, [tool('unbound_tool', {})]);
  assert.equal(u.status, 78, u.stderr);
  assert.match(u.stderr, /unbound_tool/);
});

test('a catalog file that cannot be read: exit 66 naming the file and why', (t) => {
  const dir = freshDir(t, 'keel-catalog-check-');
  const r = spawnSync(KEEL, ['catalog', 'check', join(dir, 'absent.json')], { encoding: 'utf8', timeout: 20000 });
  assert.equal(r.status, 66, r.stderr);
  assert.match(r.stderr, /absent\.json: cannot be read \(No such file or directory\)/);
});

test('--path: a bare program found on this PATH but not on the host\'s is a problem naming that PATH', (t) => {
  const tools = [tool('shell', { run: { command: ['sh', '-c', 'true'] } })];
  assert.equal(check(t, tools).status, 0);
  const r = check(t, tools, ['--path', '/nonexistent-keel-dir']);
  assert.equal(r.status, 78, r.stderr);
  assert.ok(r.stderr.includes("tools[0] (shell).run.command[0]: sh is not an executable file in any directory of keel's PATH (/nonexistent-keel-dir)"), r.stderr);
  const bin = join(r.dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'keel-check-prog'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(join(bin, 'not-executable'), '#!/bin/sh\n', { mode: 0o644 });
  const ok = check(t, [tool('prog', { run: { command: ['keel-check-prog'] } })], ['--path', `/nonexistent-keel-dir:${bin}`]);
  assert.equal(ok.status, 0, ok.stderr);
  const notExec = check(t, [tool('prog', { run: { command: ['not-executable'] } })], ['--path', bin]);
  assert.equal(notExec.status, 78, notExec.stderr);
});
