#include "server/app/process_identity.h"

#include <unistd.h>

#include <cstdio>
#include <random>

namespace keel {

std::string CorrelationPrefix() {
  std::random_device random;
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "k%08x", static_cast<unsigned>(random()));
  return prefix;
}

std::string ProcessOwner() {
  return "keel-" + std::to_string(getpid()) + "-" + CorrelationPrefix();
}

}  // namespace keel
