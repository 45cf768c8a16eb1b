// `keel call [serve flags] TOOL ['JSON']` (ADO-2): runs one tool through the whole serving
// pipeline — the same catalog, policy, ledger, timeouts, retries and breaker as `keel` would
// serve them — and prints what the tool answered. The fastest way to try a tool.
//
// How: keel forks; the child serves on a pair of pipes exactly as `keel [serve flags]` would
// on stdio (Serve, serve.h; never over HTTP: --http and no-stdio, say from a service's
// config file, are ignored), and the parent is its MCP client: initialize, then one
// tools/call with a progress token. Forking the real server, rather than calling the tool
// in-process, is what makes the answer the one an MCP host would get.
//
// Output: the result's text content on stdout, one item a line (other content and
// structuredContent as JSON); with --json the whole CallToolResult as one JSON line.
// Progress and log notifications go to stderr as "keel call: ..." lines, as does the reason
// for any failure.
// Exit codes: 0 the tool answered; 1 it answered with isError, or the server answered the
// call with a JSON-RPC error (unknown tool, invalid arguments, ...); 64 ARGUMENTS is not a
// JSON object; 130 interrupted (SIGINT/SIGTERM: the call is cancelled, the server stopped);
// the server's own exit code when it stopped before answering (66/78 for a bad catalog, ...).
//
// Thread: the main thread, instead of serving.
#pragma once

#include "server/app/cli_options.h"

namespace keel {

int RunCallCommand(const CliOptions& flags);

}  // namespace keel
