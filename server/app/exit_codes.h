// Exit codes: keel exits with the <sysexits.h> value that names why it stopped, the same
// number from every file (a host or a script can tell a bad flag from a bad --db).
#pragma once

namespace keel {

constexpr int kExitUsage = 64;        // EX_USAGE: a bad flag or argument
constexpr int kExitNoInput = 66;      // EX_NOINPUT: a named input file is missing
constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE: --http cannot listen (address in use)
constexpr int kExitSoftware = 70;     // EX_SOFTWARE: an internal error
constexpr int kExitCantCreate = 73;   // EX_CANTCREAT: the --db file cannot be created or opened
constexpr int kExitConfig = 78;       // EX_CONFIG: a catalog, policy or setting is invalid

}  // namespace keel
