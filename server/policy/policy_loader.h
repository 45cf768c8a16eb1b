// Loading the resilience policy file (--policy FILE; BUD-1). Keeping it in the database is
// server/durable/policy_store.h.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/policy/policy.h"

namespace keel {

struct LoadedPolicy {
  PolicyHandle policy;                // set exactly when problems is empty
  std::vector<std::string> problems;  // every one, each naming the field (or the file)
  // The file itself could not be read (missing, a directory, no permission), as opposed to
  // read and refused: keel exits 66 (EX_NOINPUT) for the one, 78 for the other.
  bool unreadable = false;
};
// Reads and validates `path` completely (a file that cannot be read is one problem).
LoadedPolicy LoadPolicyFile(const std::string& path);

}  // namespace keel
