// The names a serving keel gives itself. Both carry a prefix random per process, so they
// stay unique across restarts and across keels sharing one --db file.
//
// Thread-safety: any thread (each call draws from its own std::random_device).
#pragma once

#include <string>

namespace keel {

// "k" and 8 hex digits, random per call. Correlation ids are "<prefix>-<n>", so one found
// in a host's log names one call.
std::string CorrelationPrefix();

// "keel-<pid>-<random prefix>": this process as the owner of ledger claims and durable
// tasks (another keel on the same file tells its own work from a dead keel's by it).
std::string ProcessOwner();

}  // namespace keel
