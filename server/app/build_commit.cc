#include "server/app/build_commit.h"

#include "keel_commit.h"  // generated in the build directory (cmake/keel_commit.cmake)

namespace keel {

const char* KeelCommit() { return KEEL_COMMIT; }

std::string KeelVersionText() {
  return std::string("keel ") + KEEL_VERSION + " (commit " + KeelCommit() + ")";
}

}  // namespace keel
