// `keel call [serve flags] TOOL 'JSON'` runs one tool through the whole serving pipeline (a
// forked keel serving on pipes, driven as an MCP client) and prints its answer: the text on
// stdout, progress and failures on stderr; exit 0, 1 when the tool failed or is unknown (then
// the tools served are listed), 64 for arguments that are not a JSON object, the server's own
// code when it cannot start (66 a missing catalog), 130 when interrupted (the call is
// cancelled and the server stops). And the default config file: $XDG_CONFIG_HOME/keel/
// config.toml is read when present, `--config ''` reads none.
// proves: ADO-2
// Run: node --test tests/interop/keel_call.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { KEEL, freshDir } from './raw_keel.mjs';
import { REPO } from '../support/keel_process.mjs';

// A keel call in a fresh directory, with its own --db and no config file of the user's.
function call(t, args, { env = {}, dir } = {}) {
  const cwd = dir ?? freshDir(t, 'keel-call-');
  const r = spawnSync(KEEL, ['call', '--db', join(cwd, 'keel.db'), ...args], {
    encoding: 'utf8',
    timeout: 30000,
    cwd,
    env: { ...process.env, XDG_CONFIG_HOME: join(cwd, 'config'), ...env },
  });
  return { ...r, dir: cwd };
}

test('keel call prints the tool\'s text on stdout and exits 0', (t) => {
  const r = call(t, ['echo', '{"text":"hello from keel call"}']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'hello from keel call\n');
});

test('keel call --json prints the whole CallToolResult as one JSON line', (t) => {
  const r = call(t, ['echo', '{"text":"x"}', '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { content: [{ type: 'text', text: 'x' }] });
});

test('keel call shows progress on stderr while the answer goes to stdout', (t) => {
  const r = call(t, ['--test-tools', 'progress', '{"steps":3}']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'done 3 steps\n');
  assert.match(r.stderr, /keel call: progress 1\/3: step 1/);
});

test('an unknown tool: exit 1, the error and the names of the tools served on stderr', (t) => {
  const r = call(t, ['ecko', '{}']);
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /keel call: ecko: Unknown tool: ecko \(JSON-RPC -32602\)/);
  assert.match(r.stderr, /keel call: the tools served: echo, /);
});

test('invalid arguments and a tool error: exit 1 with the tool\'s error text on stderr', (t) => {
  const r = call(t, ['echo', '{"txt":"x"}']);
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /missing required property 'text'/);
});

test('arguments that are not one JSON object: exit 64 before anything starts', (t) => {
  for (const bad of ['[1]', '{"a":', 'null']) {
    const r = call(t, ['echo', bad]);
    assert.equal(r.status, 64, `${bad}: ${r.stderr}`);
    assert.match(r.stderr, /the arguments must be one JSON object/);
  }
});

test('a catalog command that fails: its stderr tail reaches the error text, exit 1', (t) => {
  const dir = freshDir(t, 'keel-call-');
  const script = join(dir, 'backup.sh');
  writeFileSync(script, '#!/bin/sh\necho "backup: disk full" >&2\nexit 3\n');
  chmodSync(script, 0o755);
  const catalog = join(dir, 'tools.json');
  writeFileSync(catalog, JSON.stringify({
    tools: [{
      name: 'backup', description: 'Back up', effect: 'read',
      inputSchema: { type: 'object' }, run: { command: [script], stderrTail: 200 },
    }],
  }));
  const r = call(t, ['--catalog', catalog, 'backup'], { dir });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /keel call: backup answered with an error/);
  assert.match(r.stderr, /backup: disk full/);
});

test('a catalog that cannot be read: the server\'s own exit code (66) and reason', (t) => {
  const r = call(t, ['--catalog', '/nonexistent/tools.json', 'echo']);
  assert.equal(r.status, 66, r.stderr);
  assert.match(r.stderr, /\/nonexistent\/tools\.json: cannot be read/);
});

test('SIGINT cancels the call and stops the server: exit 130 well before the tool would end', async (t) => {
  const dir = freshDir(t, 'keel-call-');
  const trace = join(dir, 'trace.jsonl');
  const child = spawn(KEEL, ['call', '--db', join(dir, 'keel.db'), '--trace-file', trace, '--test-tools', 'sleep', '{"ms":60000}'], {
    cwd: dir,
    env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config') },
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  // The call is in flight once the trace has its start record; then interrupt the parent
  // only (as a shell's kill would).
  while (!(existsSync(trace) && readFileSync(trace, 'utf8').includes('tool.call.start'))) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGINT');
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 130, stderr);
  assert.match(stderr, /interrupted; the call was cancelled/);
});

test('the default config file under $XDG_CONFIG_HOME is read, and --config \'\' reads none', (t) => {
  const dir = freshDir(t, 'keel-call-');
  mkdirSync(join(dir, 'config', 'keel'), { recursive: true });
  const catalog = join(dir, 'tools.json');
  writeFileSync(catalog, JSON.stringify({
    tools: [{ name: 'greet', description: 'Greets', effect: 'read', inputSchema: { type: 'object' }, run: { command: ['/bin/echo', 'hello from the config'] } }],
  }));
  writeFileSync(join(dir, 'config', 'keel', 'config.toml'), `catalog = ${JSON.stringify(catalog)}\n`);
  const r = call(t, ['greet'], { dir });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'hello from the config\n');
  const none = call(t, ['--config', '', 'greet'], { dir });
  assert.equal(none.status, 1, none.stderr);
  assert.match(none.stderr, /Unknown tool: greet/);
  writeFileSync(join(dir, 'config', 'keel', 'config.toml'), 'wokers = 4\n');
  const bad = call(t, ['echo', '{"text":"x"}'], { dir });
  assert.equal(bad.status, 78, bad.stderr);
  assert.match(bad.stderr, /config file .*config\/keel\/config\.toml: unknown setting 'wokers'/);
});

test('keel wrap call: one tool of an existing MCP server, through keel\'s pipeline', (t) => {
  const entry = join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  assert.ok(existsSync(entry), 'server-everything is missing: run scripts/setup');
  const dir = freshDir(t, 'keel-call-');
  const r = spawnSync(KEEL, ['wrap', '--db', join(dir, 'keel.db'), 'call', 'echo', '{"message":"through wrap"}', '--', process.execPath, entry, 'stdio'], {
    encoding: 'utf8', timeout: 60000, cwd: dir, env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config') },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /through wrap/);
});

test('a config file made for a keel service (http, no-stdio) does not stop keel call: it serves only its pipes', (t) => {
  const dir = freshDir(t, 'keel-call-');
  mkdirSync(join(dir, 'config', 'keel'), { recursive: true });
  writeFileSync(join(dir, 'config', 'keel', 'config.toml'), 'http = "127.0.0.1:1"\nno-stdio = true\n');
  const r = call(t, ['echo', '{"text":"still on pipes"}'], { dir });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'still on pipes\n');
});
