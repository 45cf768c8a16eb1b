// Serve: keel as an MCP server on stdio, from parsed flags to its exit code. The start-up
// steps run in this order, and the first that fails ends keel with its exit code (its reason
// on stderr): the configuration (ServeConfig: policy, catalog; 78), the process log (73),
// the protocol fds and the signal pipe (70), the database (DurableState; 73 or 78), the tools
// (ToolSet; 78 or 70), the --trace-file (73) and the task store thread (73). Then it serves
// (StdioServer) and exits 0.
//
// Thread: the main thread; it becomes the loop thread.
#pragma once

#include "server/app/cli_options.h"

namespace keel {

int Serve(const CliOptions& flags);

}  // namespace keel
