#include "protocol/cursor.h"

#include <charconv>

namespace keel {
namespace {

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

std::string EncodeCursor(std::string_view list, size_t offset) {
  const std::string plain = std::string(list) + ":" + std::to_string(offset);
  std::string out;
  out.reserve(plain.size() * 2);
  for (unsigned char c : plain) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

std::optional<size_t> DecodeCursor(std::string_view list, std::string_view cursor) {
  if (cursor.empty() || cursor.size() % 2 != 0 || cursor.size() > 256) return std::nullopt;
  std::string plain;
  for (size_t i = 0; i < cursor.size(); i += 2) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(cursor.data() + i, cursor.data() + i + 2, value, 16);
    if (ec != std::errc() || end != cursor.data() + i + 2) return std::nullopt;
    plain += static_cast<char>(value);
  }
  const std::string prefix = std::string(list) + ":";
  if (plain.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  size_t offset = 0;
  const char* first = plain.data() + prefix.size();
  const char* last = plain.data() + plain.size();
  const auto [end, ec] = std::from_chars(first, last, offset);
  if (ec != std::errc() || end != last || first == last) return std::nullopt;
  return offset;
}

}  // namespace keel
