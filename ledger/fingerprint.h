// Fingerprint: what identifies a mutation's intent under an idempotency key (IDEM-2).
// SHA-256 (ledger/sha256.h) of the canonical JSON of {"tool": name, "arguments": args},
// where the arguments leave out the key itself ("idempotencyKey") and "_meta". Canonical:
// object keys sorted, no whitespace, numbers as nlohmann prints them (an integer stays an
// integer: 1 and 1.0 differ), strings as UTF-8.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace keel {

// Lowercase hex, 64 characters.
std::string Fingerprint(std::string_view tool, const nlohmann::json& arguments);
// The canonical text that is hashed (for tests and diagnostics).
std::string CanonicalJson(const nlohmann::json& value);

}  // namespace keel
