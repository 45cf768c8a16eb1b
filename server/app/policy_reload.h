// What SIGHUP does to the resilience policy (BUD-1): the --policy file is read and validated
// again, and only a valid one replaces the version in force, which then becomes the previous
// one in the database (`keel policy show --previous`). An invalid file changes nothing: the
// running version stays, and every problem is logged.
//
// Thread: ReloadPolicyFile on the loop thread (it reads one small file); RecordReloadedPolicy
// on a worker (a write transaction must never block the loop).
#pragma once

#include <string>

#include "server/durable/ledger_service.h"
#include "server/policy/policy.h"

namespace keel {

// The policy to put in force after a SIGHUP, or null to keep `running` (no --policy file, or
// an invalid one; logged either way). `policy_file` is --policy.
PolicyHandle ReloadPolicyFile(const std::string& policy_file, const Policy& running);

// Records `next` as the current policy in the database; a failure is logged.
void RecordReloadedPolicy(LedgerService& ledger, const Policy& next);

}  // namespace keel
