#include "server/app/durable_upkeep.h"

#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

namespace keel {

size_t ReapExpiredKeys(LedgerService& ledger) {
  try {
    const size_t n = ledger.Borrow().ledger().ReapExpired();
    if (n > 0) spdlog::info("ledger: forgot {} expired key(s)", n);
    return n;
  } catch (const std::exception& e) {
    spdlog::warn("ledger: reaping expired keys failed: {}", e.what());
    return 0;
  }
}

void ReconcileCommandTools(const std::vector<CommandTool*>& tools, const std::string& owner) {
  for (CommandTool* tool : tools) {
    try {
      const size_t settled = tool->ReconcileAtStartup(owner);
      if (settled > 0) {
        spdlog::info("{}: {} unsettled key(s) reconciled", tool->spec().name, settled);
      }
    } catch (const std::exception& e) {
      spdlog::warn("{}: start-up reconciliation failed: {}", tool->spec().name, e.what());
    }
  }
}

std::function<void(TaskStore&)> OrphanedTaskRecovery(const ToolRegistry& registry,
                                                     RecoveryOptions recovery) {
  return [&registry, recovery = std::move(recovery)](TaskStore& store) {
    try {
      RecoverOrphanedTasks(store, registry, recovery, WallClockMs());
    } catch (const std::exception& e) {
      spdlog::warn("tasks: recovering orphaned tasks failed: {}", e.what());
    }
  };
}

LedgerReaper::~LedgerReaper() {
  if (timer_ != 0) loop_.CancelTimer(timer_);
}

void LedgerReaper::Start() {
  ReapExpiredKeys(*ledger_);
  Arm();
}

void LedgerReaper::Arm() {
  timer_ = loop_.AddTimer(loop_.clock().Now() + kReapInterval, [this] {
    pool_.Submit([ledger = ledger_] { ReapExpiredKeys(*ledger); });
    Arm();
  });
}

}  // namespace keel
