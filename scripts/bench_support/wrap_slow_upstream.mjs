// The upstream of `scripts/bench --wrap`'s cancel phase: a stdio MCP server (MCP 2025-11-25,
// newline-delimited JSON-RPC, no SDK so that it costs as little as it can) that
//   - answers initialize, ping and tools/list (two tools, both readOnlyHint: true);
//   - answers `echo` at once with its text;
//   - NEVER answers `slow`: it only sends one notifications/progress (progress 0) for the
//     call's progressToken, if the call has one, so that its caller knows the call reached
//     the upstream (through keel: that a keel worker is now waiting on it);
//   - ignores notifications/cancelled (and every other notification), only counting them;
//   - answers any other request with -32601 (so keel's server/discover probe falls back to
//     initialize).
// It exits on stdin EOF. With WRAP_SLOW_STATS=<file>, it writes its counts there as JSON at
// exit: requests by method, `slow` calls received, cancels received (and how many of those
// named a `slow` call it had seen), so the bench can say that keel forwarded every cancel.
import { writeFileSync } from 'node:fs';

const stats = { requests: {}, slow_calls: 0, echo_calls: 0, cancels: 0, cancels_for_slow: 0, other_notifications: 0 };
const slowIds = new Set();
const out = [];
let scheduled = false;
const send = (m) => {
  out.push(JSON.stringify(m));
  if (!scheduled) {
    scheduled = true;
    // One write per turn of the event loop: the answers to one chunk of input go together.
    queueMicrotask(() => {
      scheduled = false;
      process.stdout.write(out.join('\n') + '\n');
      out.length = 0;
    });
  }
};
const TOOLS = [
  {
    name: 'echo', description: 'Returns the text it is given.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'slow', description: 'Never answers; ignores cancels.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
];

function onMessage(m) {
  if (m.id === undefined) {
    if (m.method === 'notifications/cancelled') {
      stats.cancels++;
      if (slowIds.has(m.params?.requestId)) stats.cancels_for_slow++;
    } else {
      stats.other_notifications++;
    }
    return;
  }
  if (!m.method) return; // a response (keel asks nothing of this server)
  stats.requests[m.method] = (stats.requests[m.method] ?? 0) + 1;
  switch (m.method) {
    case 'initialize':
      send({
        jsonrpc: '2.0', id: m.id,
        result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'wrap-slow-upstream', version: '0' } },
      });
      return;
    case 'ping':
      send({ jsonrpc: '2.0', id: m.id, result: {} });
      return;
    case 'tools/list':
      send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } });
      return;
    case 'tools/call': {
      const name = m.params?.name;
      if (name === 'echo') {
        stats.echo_calls++;
        send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: String(m.params.arguments?.text ?? '') }] } });
      } else if (name === 'slow') {
        stats.slow_calls++;
        slowIds.add(m.id);
        const token = m.params?._meta?.progressToken;
        if (token !== undefined) {
          send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 0 } });
        }
      } else {
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `unknown tool ${name}` } });
      }
      return;
    }
    default:
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `method not found: ${m.method}` } });
  }
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  let start = 0;
  let nl = chunk.indexOf('\n');
  if (nl < 0) { pending += chunk; return; }
  let line = pending + chunk.slice(0, nl);
  pending = '';
  for (;;) {
    if (line.trim()) {
      let m = null;
      try { m = JSON.parse(line); } catch { /* not JSON: ignored */ }
      if (m && typeof m === 'object') onMessage(m);
    }
    start = nl + 1;
    nl = chunk.indexOf('\n', start);
    if (nl < 0) break;
    line = chunk.slice(start, nl);
  }
  pending = chunk.slice(start);
});
process.stdin.on('end', () => {
  if (process.env.WRAP_SLOW_STATS) {
    try { writeFileSync(process.env.WRAP_SLOW_STATS, JSON.stringify(stats)); } catch { /* best effort */ }
  }
  process.exit(0);
});
