// keel serving MCP over Streamable HTTP on loopback, for the HTTP interop tests (the clients
// are the official SDKs' StreamableHTTPClientTransport). Not a test file itself.
//
// startHttpKeel({args, env}) starts $KEEL_BINARY (else build/keel) as
//   keel --test-tools --http 127.0.0.1:0 --no-stdio --db <dir>/keel.db ...args
// in a fresh temporary directory <dir> (also its cwd; `args` may be a function of <dir>, to
// write files there first, e.g. a catalog), waits for the line
// "keel: listening on http://127.0.0.1:PORT/mcp" on its stderr (port 0: an ephemeral port)
// and returns k with:
//   k.url (a URL: the MCP endpoint), k.port, k.dir, k.db, k.child, k.pid,
//   k.stderr() (the tail of keel's stderr), k.exit ({code, signal, at} once exited, else
//   null), k.exited (its promise), k.stop() (SIGTERM, SIGKILL after 3 s if still running,
//   then the directory removed; returns the exit; safe to call twice).
// The start fails (with keel's stderr) if keel exits first or prints no listening line
// within startMs.
// httpKeelTest(name, {args, env, timeoutMs, todo, skip}, fn) runs fn(k, t) with its own
// keel: keel's stderr is appended to any failure, and no keel process or directory outlives
// it (k.track(closeable) registers a client to be closed before keel is stopped, whatever
// happens; the client helpers below do it).
// Also:
//   modernClient(k, opts) / legacyClient(k, opts): the official SDK v2 client pinned to
//     2026-07-28 / v1 client on 2025-11-25, over their StreamableHTTPClientTransport to k,
//     connected, with a fetch tap: {client, transport, tap, errors};
//   tapFetch(): that tap (every HTTP exchange: request headers and JSON body, response
//     status, headers, JSON-RPC messages, whether keel ended the body);
//   waitUntil(check, what, {ms, everyMs}): polls a condition with a deadline;
//   readTrace(file), traceOf(records, tool, id): keel's --trace-file records.
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { KEEL, withTimeout } from './raw_keel.mjs';

export { KEEL, withTimeout };

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';

const LISTENING = /keel: listening on (http:\/\/\S+)/;
const STDERR_TAIL = 16000;

export async function startHttpKeel({ args = [], env = {}, startMs = 20000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-http-'));
  const db = join(dir, 'keel.db');
  let stderr = '';
  let child;
  try {
    const extra = typeof args === 'function' ? args(dir) : args;
    child = spawn(KEEL, ['--test-tools', '--http', '127.0.0.1:0', '--no-stdio', '--db', db, ...extra], {
      cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const k = {
    dir, db, child, pid: child.pid, url: null, port: null, exit: null, closers: [],
    stderr: () => stderr,
  };
  k.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => { k.exit = { code, signal, at: performance.now() }; resolve(k.exit); });
  });
  child.once('error', (err) => { stderr += `\n[spawn error: ${err.message}]`; });
  let announced;
  const listening = new Promise((resolve, reject) => {
    announced = resolve;
    k.exited.then((e) => reject(new Error(`keel exited before listening: ${JSON.stringify(e)}`)));
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-STDERR_TAIL);
    const m = LISTENING.exec(stderr);
    if (m && !k.url) {
      k.url = new URL(m[1]);
      k.port = Number(k.url.port);
      announced();
    }
  });
  let stopping = null;
  k.stop = () => {
    stopping ??= (async () => {
      for (const close of k.closers.splice(0).reverse()) {
        try { await withTimeout(Promise.resolve().then(close), 'closing a client', 3000); } catch {}
      }
      if (k.exit === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => { if (k.exit === null) child.kill('SIGKILL'); }, 3000);
        await k.exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
      return k.exit;
    })();
    return stopping;
  };
  // Registers something to close before keel is stopped (a client, a transport).
  k.track = (closeable) => {
    k.closers.push(typeof closeable === 'function' ? closeable : () => closeable.close());
    return closeable;
  };
  try {
    await withTimeout(listening, 'keel\'s "listening on" line', startMs);
  } catch (err) {
    await k.stop();
    if (err instanceof Error && stderr.trim()) err.message += `\n--- keel stderr (tail) ---\n${stderr}`;
    throw err;
  }
  return k;
}

export function httpKeelTest(name, { args = [], env, timeoutMs = 60000, todo, skip } = {}, fn) {
  test(name, { timeout: timeoutMs, todo, skip }, async (t) => {
    let k = null;
    try {
      k = await startHttpKeel({ args, env });
      await fn(k, t);
    } catch (err) {
      const tail = k?.stderr() ?? '';
      if (tail.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${tail}`;
      throw err;
    } finally {
      if (k) await k.stop();
    }
  });
}

// Polls `check` (sync or async; a truthy value ends the wait and is returned) every
// `everyMs` until `ms` pass; then fails naming `what` (and the last value or error).
export async function waitUntil(check, what, { ms = 20000, everyMs = 20 } = {}) {
  const deadline = performance.now() + ms;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) {
      throw new Error(`timed out after ${ms} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// A fetch for the SDK transports' `fetch` option that records the HTTP traffic it carries:
// tap.exchanges holds one entry per request, in order:
//   {n, method, url, requestHeaders (lower-case names), body (the parsed JSON body or null),
//    status, headers (response, lower-case), contentType, messages (the JSON-RPC messages of
//    the response, parsed as they arrive: the JSON body, or each SSE event's data),
//    comments (SSE comment lines, e.g. keep-alives), ended ('eof' when keel ended the body,
//    'error' when it broke off or the client aborted it, null while open), error (a fetch
//    failure), done (a promise settled when the body ends either way)}.
// The body is passed through to the SDK unchanged (a ReadableStream that reads it as the SDK
// pulls; the SDK reads every response to its end, so "ended" is keel's doing or an abort).
export function tapFetch(inner = globalThis.fetch) {
  const tap = { exchanges: [] };
  tap.fetch = async (url, init = {}) => {
    const requestHeaders = {};
    new Headers(init.headers ?? {}).forEach((v, name) => { requestHeaders[name] = v; });
    let body = null;
    if (typeof init.body === 'string') {
      try { body = JSON.parse(init.body); } catch { body = init.body; }
    }
    let settle;
    const x = {
      n: tap.exchanges.length, method: init.method ?? 'GET', url: String(url), requestHeaders, body,
      status: null, headers: {}, contentType: null, messages: [], comments: [], ended: null, error: null,
      done: new Promise((r) => { settle = r; }),
    };
    tap.exchanges.push(x);
    let response;
    try {
      response = await inner(url, init);
    } catch (err) {
      x.error = String(err?.message ?? err);
      x.ended = 'error';
      settle();
      throw err;
    }
    x.status = response.status;
    response.headers.forEach((v, name) => { x.headers[name] = v; });
    x.contentType = response.headers.get('content-type');
    if (!response.body || [101, 204, 205, 304].includes(response.status)) {
      x.ended = 'eof';
      settle();
      return response;
    }
    const sse = (x.contentType ?? '').includes('text/event-stream');
    const decoder = new TextDecoder();
    let text = '';
    const parseEvents = (final) => {
      if (!sse) return;
      for (;;) {
        const m = /\r?\n\r?\n/.exec(text);
        if (!m) break;
        const block = text.slice(0, m.index);
        text = text.slice(m.index + m[0].length);
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith(':')) x.comments.push(line);
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length) {
          try { x.messages.push(JSON.parse(data.join('\n'))); } catch { x.messages.push({ unparsed: data.join('\n') }); }
        }
      }
      if (final && text.trim()) x.messages.push({ unparsed: text });
    };
    const finish = (how, err) => {
      if (x.ended !== null) return;
      text += decoder.decode();
      if (sse) parseEvents(how === 'eof');
      else if (how === 'eof' && text.trim()) {
        try { x.messages.push(JSON.parse(text)); } catch { x.messages.push({ unparsed: text }); }
      }
      if (err !== undefined) x.error = String(err?.message ?? err);
      x.ended = how;
      x.endedAt = performance.now();
      settle();
    };
    const reader = response.body.getReader();
    const passed = new ReadableStream({
      async pull(controller) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (err) {
          finish('error', err);
          controller.error(err);
          return;
        }
        if (chunk.done) {
          finish('eof');
          controller.close();
          return;
        }
        text += decoder.decode(chunk.value, { stream: true });
        parseEvents(false);
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        finish('error', reason ?? 'cancelled by the reader');
        return reader.cancel(reason);
      },
    });
    return new Response(passed, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  // The exchanges that carried a JSON-RPC request of `method` (optionally matching `pred`).
  tap.posts = (method, pred = () => true) => tap.exchanges.filter((x) => x.method === 'POST' && x.body?.method === method && pred(x));
  // Every JSON-RPC message keel sent, in the order the tap read them.
  tap.received = () => tap.exchanges.flatMap((x) => x.messages);
  // The exchange whose request had JSON-RPC id `id` (the last such).
  tap.exchangeOf = (id) => tap.exchanges.filter((x) => x.body && x.body.id === id && 'method' in x.body).at(-1);
  return tap;
}


// A v2 client (@modelcontextprotocol/client) pinned to 2026-07-28 over Streamable HTTP to
// keel k, connected (the pin's server/discover probe runs on this transport), closed when the
// test ends. Returns {client, transport, tap, errors}. `capabilities` are the Client's (what
// every request's envelope declares); setup(client) runs before connect (request handlers);
// innerFetch (default: the global fetch) is what the tap calls, e.g. to hold a request back.
export async function modernClient(k, { name = 'keel-http-v2', capabilities, setup, timeoutMs = 10000, innerFetch } = {}) {
  const tap = tapFetch(innerFetch);
  const transport = new V2Transport(k.url, { fetch: tap.fetch });
  const client = new V2Client({ name, version: '0.0.0' }, {
    versionNegotiation: { mode: { pin: MODERN } },
    ...(capabilities && { capabilities }),
  });
  const errors = [];
  client.onerror = (e) => { errors.push(String(e?.message ?? e)); };
  setup?.(client);
  k.track(client);
  await client.connect(transport, { timeout: timeoutMs });
  return { client, transport, tap, errors };
}

// A v1 client (@modelcontextprotocol/sdk) on 2025-11-25 over Streamable HTTP to keel k,
// connected (initialize, notifications/initialized: a session), closed when the test ends.
// Returns {client, transport, tap, errors}. transportOptions go to the transport (e.g.
// sessionId: a session to resume, in which case the v1 client skips initialize).
export async function legacyClient(k, { name = 'keel-http-v1', capabilities, setup, timeoutMs = 10000, transportOptions, innerFetch } = {}) {
  const tap = tapFetch(innerFetch);
  const transport = new V1Transport(k.url, { fetch: tap.fetch, ...transportOptions });
  const client = new V1Client({ name, version: '0.0.0' }, capabilities ? { capabilities } : undefined);
  const errors = [];
  client.onerror = (e) => { errors.push(String(e?.message ?? e)); };
  setup?.(client);
  k.track(client);
  await client.connect(transport, { timeout: timeoutMs });
  return { client, transport, tap, errors };
}

// The trace records keel wrote so far to a --trace-file (complete lines only).
export function readTrace(file) {
  let text;
  try { text = readFileSync(file, 'utf8'); } catch (err) { if (err.code === 'ENOENT') return []; throw err; }
  const lines = text.split('\n');
  lines.pop();  // a partial last line, or the empty string after the last newline
  return lines.filter((l) => l.trim()).map((l) => JSON.parse(l));
}

// The trace records of tool `tool` whose JSON-RPC request id was `id` (trace ids are strings).
export const traceOf = (records, tool, id) => records.filter((r) => r.attributes?.['gen_ai.tool.name'] === tool &&
  (id === undefined || r.attributes?.['jsonrpc.request.id'] === String(id)));
