#include "protocol/base64.h"

#include <cstdint>

namespace keel {

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = bytes.size() - i < 3 ? bytes.size() - i : 3;
    uint32_t bits = 0;
    for (size_t k = 0; k < 3; ++k) {
      const uint32_t byte = k < n ? static_cast<unsigned char>(bytes[i + k]) : 0;
      bits = (bits << 8) | byte;
    }
    out += kAlphabet[(bits >> 18) & 0x3F];
    out += kAlphabet[(bits >> 12) & 0x3F];
    out += n > 1 ? kAlphabet[(bits >> 6) & 0x3F] : '=';
    out += n > 2 ? kAlphabet[bits & 0x3F] : '=';
  }
  return out;
}

}  // namespace keel
