// keel's entry point: parses the command line and dispatches, to an operator command
// (operator_commands.h) or to serving (serve.h). The rules live in the pieces wired there.
#include <exception>
#include <iostream>

#include <spdlog/spdlog.h>

#include "server/app/call_command.h"
#include "server/app/cli_options.h"
#include "server/app/exit_codes.h"
#include "server/app/operator_commands.h"
#include "server/app/process_log.h"
#include "server/app/serve.h"

int main(int argc, char** argv) {
  try {
    keel::InstallStderrLogger();  // spdlog's default logger writes to stdout: replace it first
    const keel::CliParse cli = keel::ParseCommandLine(argc, argv);
    if (cli.exit_code) return *cli.exit_code;
    if (cli.options.call) return keel::RunCallCommand(cli.options);
    if (keel::IsOperatorCommand(cli.options)) {
      return keel::PrintCommandOutcome(keel::RunOperatorCommand(cli.options, std::cerr));
    }
    return keel::Serve(cli.options);
  } catch (const std::exception& e) {
    // Only a broken invariant gets here: an exception no layer caught.
    spdlog::critical("internal error: {}", e.what());
    return keel::kExitSoftware;
  }
}
