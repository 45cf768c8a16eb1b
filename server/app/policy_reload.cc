#include "server/app/policy_reload.h"

#include <exception>
#include <string>

#include <spdlog/spdlog.h>

#include "server/durable/policy_store.h"
#include "server/policy/policy_loader.h"
#include "server/runtime/clock.h"

namespace keel {

PolicyHandle ReloadPolicyFile(const std::string& policy_file, const Policy& running) {
  if (policy_file.empty()) {
    spdlog::info("SIGHUP: no --policy file to reload");
    return nullptr;
  }
  LoadedPolicy loaded = LoadPolicyFile(policy_file);
  if (!loaded.policy) {
    spdlog::error("SIGHUP: {} is invalid; keeping policy version {}", policy_file, running.version);
    for (const std::string& problem : loaded.problems) spdlog::error("policy: {}", problem);
    return nullptr;
  }
  spdlog::info("SIGHUP: policy version {} replaces {}", loaded.policy->version, running.version);
  return loaded.policy;
}

void RecordReloadedPolicy(LedgerService& ledger, const Policy& next) {
  try {
    RecordPolicy(ledger.Borrow().db(), next, WallClockMs(), "SIGHUP reload");
  } catch (const std::exception& e) {
    spdlog::warn("could not record the reloaded policy: {}", e.what());
  }
}

}  // namespace keel
