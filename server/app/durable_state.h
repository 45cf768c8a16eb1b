// DurableState: keel's database (--db, else DefaultDatabasePath()) opened for serving, before
// anything is served: a database keel cannot use is a clear start-up error (73 cannot
// create, 78 written by a newer keel), never a failing call. Opening it also turns the kill
// switch for writes on with --block-writes (OPS-2), records the policy in force for
// `keel policy show` (BUD-1), and warns when the kill switch is on.
//
// Thread: the main thread, at start-up. The LedgerService it holds may then be used from any
// thread (ledger_service.h).
// Invariant: without exit_code, db_path is the file's path and ledger is open on it. With
// it, the reason has been written to the error stream as one "keel: ..." line.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "server/app/cli_options.h"
#include "server/durable/ledger_service.h"
#include "server/policy/policy.h"

namespace keel {

struct DurableState {
  std::string db_path;
  std::shared_ptr<LedgerService> ledger;
  std::optional<int> exit_code;  // set when keel must exit now; the reason is written
};

// Opens the database for the process `owner` (ProcessOwner()); `policy` is the one in force.
// A policy that cannot be recorded is logged, not fatal.
DurableState OpenDurableState(const CliOptions& flags, const Policy& policy,
                              const std::string& owner, std::ostream& err);

}  // namespace keel
