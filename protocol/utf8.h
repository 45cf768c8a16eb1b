// UTF-8 validation for incoming lines. Pure function, reentrant.
// JSON-RPC messages must be UTF-8; a line that is not gets -32700 before any parsing.
#pragma once

#include <string_view>

namespace keel {

// True when `text` is well-formed UTF-8 (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace keel
