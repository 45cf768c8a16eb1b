#include "server/app/durable_state.h"

#include <unistd.h>

#include <exception>
#include <string>

#include <spdlog/spdlog.h>

#include "ledger/database.h"
#include "ledger/kill_switch.h"
#include "server/app/exit_codes.h"
#include "server/durable/policy_store.h"
#include "server/runtime/clock.h"

namespace keel {
namespace {

// Opens and migrates the file; on failure sets exit_code after writing why.
void OpenLedger(const CliOptions& flags, const std::string& owner, std::ostream& err,
                DurableState* state) {
  std::string error;
  state->db_path = flags.db_path.empty() ? DefaultDatabasePath(&error) : flags.db_path;
  int exit_code = kExitCantCreate;
  if (!state->db_path.empty()) {
    LedgerService::Options options;
    options.path = state->db_path;
    options.ttl_ms = flags.idempotency_ttl_ms;
    options.owner = owner;
    options.connections = flags.db_connections;
    state->ledger = LedgerService::Open(options, &error, &exit_code);
    if (state->ledger) {
      if (std::string why = state->ledger->JoinInstances(); !why.empty()) {
        error =
            "cannot join the keel instances of " + Database::Describe(state->db_path) + ": " + why;
        exit_code = kExitUnavailable;
        state->ledger.reset();
      }
    }
  }
  if (!state->ledger) {
    err << "keel: " << error << "\n";
    state->exit_code = exit_code;
  }
}

// What the database is told at start-up, after it opened: --block-writes, the policy.
void RecordStartup(const CliOptions& flags, const Policy& policy, std::ostream& err,
                   DurableState* state) {
  // The pool's first connection, idle since Open(): lent at once.
  const LedgerService::Lease lease = state->ledger->Borrow();
  Database& db = lease.db();
  if (flags.block_writes) {
    try {
      SetWritesBlocked(db, true, WallClockMs(),
                       "--block-writes at start-up (pid " + std::to_string(getpid()) + ")");
    } catch (const std::exception& e) {
      err << "keel: cannot turn the kill switch on in " << Database::Describe(state->db_path)
          << ": " << e.what() << "\n";
      state->exit_code = kExitCantCreate;
      return;
    }
  }
  try {
    RecordPolicy(db, policy, WallClockMs(), "keel start-up (pid " + std::to_string(getpid()) + ")");
  } catch (const std::exception& e) {
    spdlog::warn("could not record the policy in {}: {}", Database::Describe(state->db_path),
                 e.what());
  }
  if (WritesBlocked(db)) {
    spdlog::warn(
        "the kill switch is on: write tools answer 'kill_switch' until `keel admin "
        "block-writes off`");
  }
}

}  // namespace

DurableState OpenDurableState(const CliOptions& flags, const Policy& policy,
                              const std::string& owner, std::ostream& err) {
  DurableState state;
  OpenLedger(flags, owner, err, &state);
  if (!state.exit_code) RecordStartup(flags, policy, err, &state);
  return state;
}

}  // namespace keel
