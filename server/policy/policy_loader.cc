#include "server/policy/policy_loader.h"

#include <optional>

#include "protocol/text_file.h"
#include "server/policy/policy_json.h"

namespace keel {

LoadedPolicy LoadPolicyFile(const std::string& path) {
  LoadedPolicy loaded;
  std::string error;
  const std::optional<std::string> text = ReadTextFile(path, &error);
  if (!text) {
    loaded.unreadable = true;
    loaded.problems.push_back(path + ": cannot read the policy file (" + error + ")");
    return loaded;
  }
  PolicyParseResult parsed = ParsePolicy(*text);
  if (!parsed.policy) {
    loaded.problems = std::move(parsed.problems);
    return loaded;
  }
  loaded.policy = std::make_shared<const Policy>(std::move(*parsed.policy));
  return loaded;
}

}  // namespace keel
