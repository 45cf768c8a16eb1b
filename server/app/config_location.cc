#include "server/app/config_location.h"

#include <cstdlib>

#include <sys/stat.h>

namespace keel {

std::string DefaultConfigPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/keel/config.toml";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    return std::string(home) + "/.config/keel/config.toml";
  }
  return std::string();
}

std::string ExistingDefaultConfig() {
  std::string path = DefaultConfigPath();
  struct stat info {};
  if (path.empty() || stat(path.c_str(), &info) != 0) return std::string();
  return path;
}

}  // namespace keel
