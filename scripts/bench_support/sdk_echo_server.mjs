// Reference server for scripts/bench: the official TypeScript MCP SDK serving one
// `echo` tool over stdio, written the way the SDK's own examples write it
// (McpServer + StdioServerTransport + a zod input schema). Nothing is tuned. Also the
// upstream of `scripts/bench --wrap`.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'sdk-echo', version: '0.0.0' });

server.registerTool(
  'echo',
  {
    description: 'Returns the text it is given.',
    inputSchema: { text: z.string() },
    // A read: what keel wrap classes it as (scripts/bench --wrap); no other bench reads it.
    annotations: { readOnlyHint: true },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

const transport = new StdioServerTransport();
// Exit once the client closes stdin, like keel does.
process.stdin.on('end', () => {
  server.close().finally(() => process.exit(0));
});
await server.connect(transport);
