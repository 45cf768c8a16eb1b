// What a new user copies from the README works as written, and the licence files stay true:
// - every ```json block of README.md parses;
// - every host snippet that starts keel (`"command"` ending in /keel, or wsl.exe with keel
//   after -e) passes only flags `keel --help` knows;
// - no `claude mcp add` line puts --env/-e before the server's name (Claude Code 2.1's --env
//   takes several values and swallows the name: "Invalid environment variable format");
// - --help lists the test-only flags apart, with examples that use flags keel knows;
// - LICENSE is the Apache License 2.0, and NOTICE names every library build/keel links
//   against (a new dependency without its licence line fails here).
// proves: ADO-1 (the licence and NOTICE)
// Run: node --test tests/interop/readme_snippets.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { KEEL } from './raw_keel.mjs';

const REPO = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

function jsonBlocks() {
  const blocks = [];
  for (const m of README.matchAll(/```json\n([\s\S]*?)```/g)) {
    blocks.push({ line: README.slice(0, m.index).split('\n').length, text: m[1] });
  }
  return blocks;
}

function knownFlags() {
  const help = spawnSync(KEEL, ['--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  return new Set([...help.stdout.matchAll(/^\s+(?:-\w,\s*)?(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]));
}

// The keel command lines of a host configuration: [args] for each server that runs keel.
function keelArgLists(config) {
  const lists = [];
  for (const servers of [config.mcpServers, config.servers]) {
    for (const server of Object.values(servers ?? {})) {
      const args = server.args ?? [];
      if (typeof server.command === 'string' && server.command.endsWith('/keel')) lists.push(args);
      if (server.command === 'wsl.exe' && args[0] === '-e' && String(args[1]).endsWith('/keel')) {
        lists.push(args.slice(2));
      }
    }
  }
  return lists;
}

test('every json block of the README parses', () => {
  const blocks = jsonBlocks();
  assert.ok(blocks.length >= 6, `found ${blocks.length} json blocks`);
  for (const b of blocks) {
    assert.doesNotThrow(() => JSON.parse(b.text), `README.md line ${b.line}`);
  }
});

test('the README host snippets pass keel only flags it knows', () => {
  const flags = knownFlags();
  assert.ok(flags.has('--log-level') && flags.has('--db'), 'flags read from --help');
  let checked = 0;
  for (const b of jsonBlocks()) {
    for (const args of keelArgLists(JSON.parse(b.text))) {
      for (const a of args.filter((x) => x.startsWith('--'))) {
        assert.ok(flags.has(a.split('=')[0]), `README.md line ${b.line}: keel has no flag ${a}`);
        checked++;
      }
    }
  }
  assert.ok(checked >= 3, `checked ${checked} flags`);
});

test('no claude mcp add line puts --env before the server name', () => {
  // Lines continued with a backslash are one command.
  const commands = README.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => /^\s*claude mcp add\b/.test(l));
  assert.ok(commands.length >= 2, `found ${commands.length} claude mcp add commands`);
  for (const c of commands) {
    if (/^\s*claude mcp add-json\b/.test(c)) continue;
    const words = c.trim().split(/\s+/).slice(3);
    const name = words.findIndex((w, i) => !w.startsWith('-') && !/^(-s|--scope|-t|--transport|-H|--header)$/.test(words[i - 1] ?? ''));
    const env = words.findIndex((w) => w === '--env' || w === '-e');
    assert.ok(env === -1 || env > name, `--env before the name: ${c}`);
  }
});

test('LICENSE is Apache 2.0 and NOTICE names every library keel links against', () => {
  const license = readFileSync(join(REPO, 'LICENSE'), 'utf8');
  assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
  const notice = readFileSync(join(REPO, 'NOTICE'), 'utf8');
  // Each library keel itself asks for, by the Debian package NOTICE names for it.
  const packages = {
    'libsqlite3.so': 'libsqlite3-0', 'libspdlog.so': 'libspdlog', 'libfmt.so': 'libfmt',
    'libmicrohttpd.so': 'libmicrohttpd12', 'libre2.so': 'libre2', 'libboost_context.so': 'libboost-context',
    'libpq.so': 'libpq5', 'libstdc++.so': 'libstdc++6', 'libc.so': 'libc6', 'libjemalloc.so': 'libjemalloc2',
  };
  const direct = spawnSync('objdump', ['-p', KEEL], { encoding: 'utf8' });
  assert.equal(direct.status, 0, direct.stderr);
  const needed = [...direct.stdout.matchAll(/NEEDED\s+(\S+)/g)].map((m) => m[1]);
  assert.ok(needed.length > 3, `NEEDED entries: ${needed}`);
  for (const lib of needed) {
    if (/^(libm|libgcc_s|ld-linux)/.test(lib)) continue;  // the C and C++ runtimes' parts
    const key = Object.keys(packages).find((k) => lib.startsWith(k));
    assert.ok(key, `build/keel needs ${lib}: add it to NOTICE and to this test's table`);
    assert.ok(notice.includes(packages[key]), `NOTICE names ${packages[key]} (for ${lib})`);
  }
  for (const loaded of ['libcurl4', 'libpq5', 'libmicrohttpd12']) {
    assert.ok(notice.includes(loaded), `NOTICE names ${loaded} (loaded at run time)`);
  }
});

test('--help lists the test-only flags apart from the user flags, and shows examples that use known flags', () => {
  const help = spawnSync(KEEL, ['--help'], { encoding: 'utf8' }).stdout;
  const testGroup = help.indexOf('Testing keel itself (not for production):');
  assert.ok(testGroup > 0, help);
  for (const flag of ['--test-tools', '--conformance-fixtures', '--fault']) {
    assert.ok(help.indexOf(`  ${flag} `) > testGroup, `${flag} is listed under the testing group`);
  }
  assert.ok(help.indexOf('  --catalog ') < testGroup, '--catalog is a user flag');
  const examples = help.slice(help.indexOf('Examples:'));
  assert.ok(help.includes('Examples:') && examples.includes('keel catalog check'), help);
  const flags = knownFlags();
  for (const line of examples.split('\n').slice(1).filter((l) => l.startsWith('  keel'))) {
    for (const flag of line.match(/--[a-z][a-z0-9-]*/g) ?? []) {
      if (flag === '--path') continue;  // keel catalog check's own
      assert.ok(flags.has(flag), `example "${line.trim()}" uses an unknown flag ${flag}`);
    }
  }
});
