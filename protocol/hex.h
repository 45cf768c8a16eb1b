// Hex: bytes as lowercase hex digits and back, for the opaque tokens keel hands to clients
// (list cursors, the state of multi round-trip requests). Pure functions; never throw.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace keel {

// Two lowercase hex digits per byte.
std::string HexEncode(std::string_view bytes);
// The bytes `hex` encodes (digits in either case); nullopt for an odd length or a character
// that is not a hex digit.
std::optional<std::string> HexDecode(std::string_view hex);

}  // namespace keel
