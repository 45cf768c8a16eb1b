// keel driven by the official MCP TypeScript SDK v2 client (@modelcontextprotocol/client),
// for the interop tests. Not a test file itself. The v1 counterpart is sdk_keel.mjs.
//
// startSdk2Keel({args, mode, inPlace, clientName, requestTimeoutMs, clientOptions, setup})
// starts $KEEL_BINARY (else build/keel) with --test-tools and `args`, in a fresh temporary
// directory with its own KEEL_DB, and connects with versionNegotiation `mode`:
//   undefined (the client's default, legacy: initialize), 'auto' (server/discover probe,
//   initialize fallback) or {pin: '2026-07-28'} (modern only).
// On the SDK's own StdioClientTransport the probe of 'auto' and {pin} runs on a disposable
// sibling keel (same command, cwd and env; its stderr discarded), which the SDK reaps before
// it starts the session's keel. With inPlace, the transport is a trivial subclass, which the
// SDK probes on the session itself, so the probe shows in k.sent/k.seen.
// clientOptions are further Client options (e.g. capabilities: {elicitation: {}}, which the
// modern envelope then declares); setup(client, k) runs before connect (e.g. to register an
// elicitation/create handler, which the SDK accepts only for a declared capability).
// It returns k with:
//   k.client, k.transport, k.cwd, k.pid, k.stderr (tail of the session keel's stderr),
//   k.child / k.exit ({code, signal, at} once exited), k.errors (the client's onerror),
//   k.sent (every message the client wrote to the session keel, from the first one) and
//   k.seen (every message the session keel wrote, from the first one).
// sdk2KeelTest(name, {args, mode, inPlace, timeoutMs, clientName, clientOptions, setup}, fn)
// runs fn(k, t) with its own keel: keel's stderr is appended to any failure, and no keel
// process or directory outlives it.
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';

import { KEEL } from './raw_keel.mjs';

export const MODERN = '2026-07-28';

// The SDK probes in place on any stdio transport that is not exactly its base class.
class InPlaceStdioClientTransport extends StdioClientTransport {}

export async function startSdk2Keel({ args = [], mode, inPlace = false, clientName = 'keel-interop-v2-test', requestTimeoutMs = 5000, clientOptions, setup } = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'keel-interop2-'));
  const Transport = inPlace ? InPlaceStdioClientTransport : StdioClientTransport;
  const transport = new Transport({
    command: KEEL, args: ['--test-tools', ...args], cwd, stderr: 'pipe',
    env: { ...getDefaultEnvironment(), KEEL_DB: join(cwd, 'keel.db') },  // a fresh database per keel
  });
  const k = { transport, cwd, stderr: '', child: null, exit: null, pid: null, seen: [], sent: [], errors: [] };
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (d) => { k.stderr = (k.stderr + d).slice(-8000); });
  // Tap the wire before connect, so the first message either way is recorded. send is
  // wrapped on the instance; onmessage, which the SDK assigns (the in-place probe, then the
  // Protocol), becomes an accessor that records each message before handing it on (once,
  // should the SDK chain a handler it read back). The prototype is left alone: it is what
  // tells the SDK whether to probe on a sibling.
  const origSend = transport.send.bind(transport);
  transport.send = (m, options) => { k.sent.push(structuredClone(m)); return origSend(m, options); };
  let handler;
  const recorded = new WeakSet();
  Object.defineProperty(transport, 'onmessage', {
    configurable: true, enumerable: true,
    get: () => {
      const h = handler;
      return h && ((m, extra) => {
        if (!recorded.has(m)) { recorded.add(m); k.seen.push(m); }
        h(m, extra);
      });
    },
    set: (h) => { handler = h; },
  });
  const versionNegotiation = mode === undefined ? undefined : { mode };
  const options = versionNegotiation || clientOptions
    ? { ...clientOptions, ...(versionNegotiation && { versionNegotiation }) } : undefined;
  k.client = new Client({ name: clientName, version: '0.0.0' }, options);
  k.client.onerror = (e) => { k.errors.push(String(e?.message ?? e)); };
  setup?.(k.client, k);
  try {
    await k.client.connect(transport, { timeout: requestTimeoutMs });
  } catch (err) {
    await stopSdk2Keel(k);
    if (k.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr}`;
    throw err;
  }
  // The ChildProcess is private to the transport (it exists once the session keel has
  // started, after any probe); it is read, never changed, only to learn keel's exit.
  k.child = transport._process ?? null;
  k.child?.once('exit', (code, signal) => { k.exit = { code, signal, at: performance.now() }; });
  k.pid = transport.pid;
  return k;
}

// Closes the client (keel's stdin; the SDK escalates to signals), kills a keel still
// running, removes the directory.
export async function stopSdk2Keel(k) {
  const child = k.child ?? k.transport._process;  // close() forgets it
  try { await k.client.close(); } catch {}
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(k.cwd, { recursive: true, force: true });
}

export function sdk2KeelTest(name, { args = [], mode, inPlace, timeoutMs = 15000, clientName, clientOptions, setup } = {}, fn) {
  test(name, { timeout: timeoutMs }, async (t) => {
    let k = null;
    try {
      k = await startSdk2Keel({ args, mode, inPlace, clientName, clientOptions, setup });
      await fn(k, t);
    } catch (err) {
      if (k?.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr}`;
      throw err;
    } finally {
      if (k) await stopSdk2Keel(k);
    }
  });
}
