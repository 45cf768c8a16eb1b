// Operator commands: `keel admin block-writes on|off|status`, `keel catalog check FILE`
// (catalog_check.h), `keel policy check FILE`,
// `keel policy show [--previous]`, `keel trace summary FILE` and `keel trace report FILE
// [-o OUT]` (trace_report.h). They do not serve: run once
// from a shell, they answer on stdout (the protocol streams are never set up), report
// problems on stderr as "keel: ..." lines, and exit.
//
// Thread: the main thread, before (instead of) anything that serves.
// Exit codes: exit_codes.h (73 the --db file cannot be opened, 78 a newer schema or an
// invalid policy file; `trace report`: 66 the trace cannot be read, 73 the page cannot be
// written); `policy show` with no policy recorded exits 1.
#pragma once

#include <ostream>
#include <string>

#include "server/app/cli_options.h"

namespace keel {

// What an operator command did: its exit code, and its answer for stdout (empty when it
// failed; the reason went to stderr).
struct CommandOutcome {
  int exit_code = 0;
  std::string output;
};

// Whether `flags` name an operator command (instead of serving).
bool IsOperatorCommand(const CliOptions& flags);

// Runs the operator command `flags` name; problems are written to `err`.
CommandOutcome RunOperatorCommand(const CliOptions& flags, std::ostream& err);

// Writes the command's answer to stdout (flushed) and returns its exit code.
int PrintCommandOutcome(const CommandOutcome& outcome);

}  // namespace keel
