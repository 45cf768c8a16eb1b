// keel driven by the official MCP TypeScript SDK client, for the interop tests. Not a test
// file itself.
//
// startSdkKeel({args, clientName, requestTimeoutMs}) starts $KEEL_BINARY (else build/keel)
// with --test-tools and `args`, in a fresh temporary directory with its own KEEL_DB, and
// connects (initialize + notifications/initialized). It returns k with:
//   k.client, k.transport, k.cwd, k.pid, k.stderr (tail), k.negotiated (protocol version),
//   k.child / k.exit ({code, signal, at} once exited; read only to learn the exit),
//   k.seen (every message from keel) and k.sent (every message to keel), k.errors (the
//   client's onerror: e.g. progress for a request it gave up on).
// sdkKeelTest(name, {args, timeoutMs, clientName}, fn) runs fn(k, t) with its own keel:
// keel's stderr is appended to any failure, and no keel process or directory outlives it.
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

import { KEEL } from './raw_keel.mjs';

export async function startSdkKeel({ args = [], clientName = 'keel-interop-test', requestTimeoutMs = 5000 } = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'keel-interop-'));
  const transport = new StdioClientTransport({
    command: KEEL, args: ['--test-tools', ...args], cwd, stderr: 'pipe',
    env: { ...getDefaultEnvironment(), KEEL_DB: join(cwd, 'keel.db') },  // a fresh database per keel
  });
  const k = { transport, cwd, stderr: '', negotiated: null, child: null, exit: null, seen: [], sent: [], errors: [] };
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (d) => { k.stderr = (k.stderr + d).slice(-8000); });
  // The client calls transport.setProtocolVersion(v) with the negotiated version when the
  // transport has that method; the stdio transport has none, so this only records it.
  transport.setProtocolVersion = (v) => { k.negotiated = v; };
  k.client = new Client({ name: clientName, version: '0.0.0' });
  k.client.onerror = (e) => { k.errors.push(String(e?.message ?? e)); };
  const connecting = k.client.connect(transport, { timeout: requestTimeoutMs });
  // The ChildProcess is private to the transport; it is read (never changed) only to learn
  // keel's exit code and signal, which the transport does not expose.
  k.child = transport._process ?? null;
  k.child?.once('exit', (code, signal) => { k.exit = { code, signal, at: performance.now() }; });
  k.pid = transport.pid;
  await connecting;
  // Wrap after connect: the SDK's Protocol installed its onmessage during connect; the stdio
  // transport reads this.onmessage for every line, so the wrapper sees every message first.
  const orig = transport.onmessage;
  transport.onmessage = (m, extra) => { k.seen.push(m); orig?.(m, extra); };
  const origSend = transport.send.bind(transport);
  transport.send = (m, options) => { k.sent.push(structuredClone(m)); return origSend(m, options); };
  return k;
}

export function sdkKeelTest(name, { args = [], timeoutMs = 20000, clientName } = {}, fn) {
  test(name, { timeout: timeoutMs }, async (t) => {
    let k = null;
    try {
      k = await startSdkKeel({ args, clientName });
      await fn(k, t);
    } catch (err) {
      if (k?.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr}`;
      throw err;
    } finally {
      if (k) {
        try { await k.client.close(); } catch {}
        if (k.child && k.exit === null && k.child.exitCode === null) k.child.kill('SIGKILL');
        rmSync(k.cwd, { recursive: true, force: true });
      }
    }
  });
}
