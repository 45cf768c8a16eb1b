// Sha256: the SHA-256 digest of FIPS 180-4, written for keel so the ledger needs no crypto
// library (libcrypto cost every start-up about 3.5 ms of loading and relocation, for one
// hash). Used for idempotency fingerprints (ledger/fingerprint.h): integrity, not secrecy.
// HmacSha256 (RFC 2104) on top of it seals the state of multi round-trip requests
// (server/input/request_state.h), where a client must not forge what keel asked.
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace keel {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view data);
// Lowercase hex of Sha256(data), 64 characters.
std::string Sha256Hex(std::string_view data);
// HMAC-SHA-256 of `message` under `key` (any length; a key longer than 64 bytes is hashed
// first, RFC 2104).
Sha256Digest HmacSha256(std::string_view key, std::string_view message);

}  // namespace keel
