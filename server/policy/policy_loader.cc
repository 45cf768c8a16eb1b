#include "server/policy/policy_loader.h"

#include <fstream>
#include <sstream>

#include "server/policy/policy_json.h"

namespace keel {

LoadedPolicy LoadPolicyFile(const std::string& path) {
  LoadedPolicy loaded;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    loaded.problems.push_back(path + ": cannot read the policy file");
    return loaded;
  }
  std::ostringstream text;
  text << in.rdbuf();
  PolicyParseResult parsed = ParsePolicy(text.str());
  if (!parsed.policy) {
    loaded.problems = std::move(parsed.problems);
    return loaded;
  }
  loaded.policy = std::make_shared<const Policy>(std::move(*parsed.policy));
  return loaded;
}

}  // namespace keel
