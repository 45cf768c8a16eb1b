// `keel catalog check FILE [--path PATH]`: validates a catalog the way a serving keel does at
// start-up, without serving: the file is read and parsed (every field, schemas, resources,
// prompts), its paths resolved (each command's cwd a directory, each program an executable
// file: a path, or a name found in a directory of the PATH), every tool bound to an
// implementation or a command, and the --policy (when given) validated with it. Every problem
// is listed on stderr as a "keel: catalog: ..." line; on success stdout says how many tools it
// serves and names them.
//
// --path PATH checks bare program names against PATH instead of this shell's: hosts start
// keel with a short PATH (often /usr/bin:/bin), so a program found here may be missing there.
//
// Thread: the main thread, instead of serving (it sets the process's PATH for the check).
// Exit codes: 0 valid; 66 the file (or the --policy file) cannot be read; 78 a problem.
#pragma once

#include <ostream>

#include "server/app/cli_options.h"
#include "server/app/operator_commands.h"

namespace keel {

CommandOutcome RunCatalogCheck(const CliOptions& flags, std::ostream& err);

}  // namespace keel
