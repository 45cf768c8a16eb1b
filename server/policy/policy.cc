#include "server/policy/policy.h"

namespace keel {

ToolPolicy Policy::For(std::string_view tool) const {
  const auto it = tools.find(tool);
  return it == tools.end() ? defaults : it->second;
}

RetryBudgetSettings Policy::RetryBudgetFor(std::string_view backend) const {
  const auto it = backend_retry_budgets.find(backend);
  return it == backend_retry_budgets.end() ? retry_budget : it->second;
}

Policy DefaultPolicy() {
  Policy policy;
  policy.version = std::string(kBuiltinPolicyVersion);
  return policy;
}

}  // namespace keel
