#include "server/runtime/random_hex.h"

#include <cerrno>
#include <stdexcept>

#include <sys/random.h>

namespace keel {

std::string RandomHex(size_t bytes) {
  unsigned char buffer[32];
  if (bytes > sizeof(buffer)) throw std::invalid_argument("RandomHex: at most 32 bytes");
  size_t filled = 0;
  while (filled < bytes) {
    const ssize_t n = getrandom(buffer + filled, bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed: no secure random bytes");
    }
    filled += static_cast<size_t>(n);
  }
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (size_t i = 0; i < bytes; ++i) {
    out += kHex[buffer[i] >> 4];
    out += kHex[buffer[i] & 0xF];
  }
  return out;
}

}  // namespace keel
