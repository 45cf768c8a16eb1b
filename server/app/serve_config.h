// ServeConfig: what a serving keel is configured with beyond its flags, resolved and
// validated completely before anything starts (BUD-1): the resilience policy (--policy FILE,
// else the built-in policy with --idle-timeout and --max-timeout as its defaults) and the tool
// catalog (--catalog FILE, else the built-in demo catalog).
//
// Thread: the main thread, at start-up.
// Invariant: without exit_code, policy and catalog are both set. With it (kExitNoInput, 66,
// when a named file cannot be read at all; kExitConfig, 78, when one was read and refused),
// every problem found has been written to the error stream, one "keel: policy: ..." or
// "keel: catalog: ..." line each.
#pragma once

#include <optional>
#include <ostream>

#include "server/app/cli_options.h"
#include "server/catalog/catalog.h"
#include "server/policy/policy.h"

namespace keel {

struct ServeConfig {
  PolicyHandle policy;
  std::optional<Catalog> catalog;
  std::optional<int> exit_code;  // set when keel must exit now; the reason is written
};

// Reads and validates the policy, then the catalog; problems are written to `err`. The
// catalog is not read when the policy is invalid.
ServeConfig LoadServeConfig(const CliOptions& flags, std::ostream& err);

}  // namespace keel
