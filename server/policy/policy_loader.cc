#include "server/policy/policy_loader.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/policy/policy_json.h"

namespace keel {

LoadedPolicy LoadPolicyFile(const std::string& path) {
  LoadedPolicy loaded;
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  std::error_code error;
  if (!in || in.bad() || std::filesystem::is_directory(path, error)) {
    const int error_number = in && !in.bad() ? EISDIR : errno;
    loaded.unreadable = true;
    loaded.problems.push_back(
        path + ": cannot read the policy file" +
        (error_number != 0 ? " (" + std::string(std::strerror(error_number)) + ")" : ""));
    return loaded;
  }
  PolicyParseResult parsed = ParsePolicy(text.str());
  if (!parsed.policy) {
    loaded.problems = std::move(parsed.problems);
    return loaded;
  }
  loaded.policy = std::make_shared<const Policy>(std::move(*parsed.policy));
  return loaded;
}

}  // namespace keel
