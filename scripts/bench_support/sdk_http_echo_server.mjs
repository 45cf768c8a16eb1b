// Reference server for scripts/bench --http: the official TypeScript MCP SDK v2
// (@modelcontextprotocol/server) serving one `echo` tool over Streamable HTTP, stateless,
// the way the SDK documents it: createMcpHandler(factory) — a fresh McpServer per request
// from the factory; MCP 2026-07-28 requests on its modern path, 2025-era ones on its
// stateless legacy fallback — with the Host/Origin checks its docs put in front, mounted on
// node:http. The SDK's own Node adapter (toNodeHandler from @modelcontextprotocol/node) is
// not installed here, so nodeHandler below does what it does: the Node request becomes a
// web Request (body read as text, an AbortSignal fired when the response closes early),
// handler.fetch answers it, and the Response is written back chunk by chunk. Nothing is tuned.
//   node sdk_http_echo_server.mjs [HOST:PORT [NODE_MODULES]]   (default 127.0.0.1:0 and the
//   repository's node_modules: where @modelcontextprotocol/server and zod are imported from)
// Prints "sdk: listening on http://HOST:PORT/mcp" on stderr (as keel does); exits on
// SIGTERM/SIGINT.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// A package's ESM entry point ("exports" ".": import) under a node_modules directory.
function entry(modules, name) {
  const dir = join(modules, ...name.split('/'));
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const e = pkg.exports?.['.'];
  const file = typeof e === 'string' ? e : (e?.import?.default ?? e?.import ?? e?.default ?? pkg.module ?? pkg.main);
  return pathToFileURL(join(dir, typeof file === 'string' ? file : 'index.js')).href;
}
const modules = resolve(process.argv[3] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules'));
const {
  McpServer, createMcpHandler, hostHeaderValidationResponse, originValidationResponse,
  localhostAllowedHostnames, localhostAllowedOrigins,
} = await import(entry(modules, '@modelcontextprotocol/server'));
const { z } = await import(entry(modules, 'zod'));

const factory = () => {
  const server = new McpServer({ name: 'sdk-http-echo', version: '0.0.0' });
  server.registerTool(
    'echo',
    { description: 'Returns the text it is given.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
};

const handler = createMcpHandler(factory, { onerror: (e) => process.stderr.write(`sdk: ${e.message}\n`) });

async function toWebRequest(req, signal) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const method = (req.method ?? 'GET').toUpperCase();
  let body;
  if (method !== 'GET' && method !== 'HEAD') {
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of req) text += decoder.decode(chunk, { stream: true });
    text += decoder.decode();
    if (text.length > 0) body = text;
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`,
    { method, headers, signal, ...(body !== undefined && { body }) });
}

async function nodeHandler(req, res) {
  let finished = false;
  const abort = new AbortController();
  res.on('close', () => { if (!finished) abort.abort(); });
  let response;
  try {
    const request = await toWebRequest(req, abort.signal);
    response = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
      originValidationResponse(request, localhostAllowedOrigins()) ??
      await handler.fetch(request);
  } catch (e) {
    process.stderr.write(`sdk: ${e?.message ?? e}\n`);
    response = Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }, { status: 500 });
  }
  const headers = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  if (response.body === null) { finished = true; res.end(); return; }
  let drained = null;
  res.on('drain', () => { drained?.(); drained = null; });
  const closed = new Promise((r) => abort.signal.addEventListener('abort', () => r(), { once: true }));
  try {
    for await (const chunk of response.body) {
      if (abort.signal.aborted) break;
      if (res.write(chunk) === false) await Promise.race([new Promise((r) => { drained = r; }), closed]);
    }
  } catch { /* the exchange was aborted */ }
  finished = true;
  res.end();
}

const where = process.argv[2] ?? '127.0.0.1:0';
const colon = where.lastIndexOf(':');
const host = where.slice(0, colon).replace(/^\[|\]$/g, '');
const port = Number(where.slice(colon + 1));
const http = createServer((req, res) => {
  if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') { res.writeHead(404).end(); return; }
  void nodeHandler(req, res);
});
http.listen(port, host, () => {
  const a = http.address();
  process.stderr.write(`sdk: listening on http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/mcp\n`);
});
const stop = () => { http.close(); handler.close().finally(() => process.exit(0)); setTimeout(() => process.exit(0), 1000).unref(); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
