// Base64Encode: bytes as standard Base64 (RFC 4648 §4: A-Z a-z 0-9 + /, with "=" padding),
// the encoding of an MCP resource's binary `blob`. Pure function; reentrant; never throws.
// (The decoder, DecodeBase64, lives with its only user in protocol/http_headers.h.)
#pragma once

#include <string>
#include <string_view>

namespace keel {

// 4 characters for every 3 bytes, the last group padded with "=".
std::string Base64Encode(std::string_view bytes);

}  // namespace keel
