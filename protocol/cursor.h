// Opaque pagination cursors for list methods. Pure functions.
// A cursor encodes a list name and an offset ("tools:40" as hex) so a cursor minted for
// one list is refused by another; anything that does not decode is invalid (-32602).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace keel {

std::string EncodeCursor(std::string_view list, size_t offset);

// The offset, or nullopt when `cursor` was not minted by EncodeCursor for `list`.
std::optional<size_t> DecodeCursor(std::string_view list, std::string_view cursor);

}  // namespace keel
