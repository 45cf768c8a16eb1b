#include "protocol/cursor.h"

#include <charconv>

#include "protocol/hex.h"

namespace keel {

std::string EncodeCursor(std::string_view list, size_t offset) {
  return HexEncode(std::string(list) + ":" + std::to_string(offset));
}

std::optional<size_t> DecodeCursor(std::string_view list, std::string_view cursor) {
  if (cursor.empty() || cursor.size() > 256) return std::nullopt;
  const std::optional<std::string> decoded = HexDecode(cursor);
  if (!decoded) return std::nullopt;
  const std::string& plain = *decoded;
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
