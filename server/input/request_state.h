// RequestState: the requestState keel hands a client with an InputRequiredResult (MCP
// 2026-07-28 multi round-trip requests, MRTR-1), and reads back when the client retries.
// The client holds it, so it is attacker-controlled: keel seals it with HMAC-SHA-256
// (ledger/sha256.h) and refuses any state it did not seal, or sealed for another request.
// Pure functions; reentrant; never throw.
//
// Token: "v1." + hex(claims as compact JSON) + "." + hex(HMAC(key, "v1." + hex(claims))).
// Invariants:
//  1. Sealed with the current key; opened with the current key, then the previous one, so a
//     key rotation (server/durable/state_keys.h) does not break a round in flight.
//  2. The claims bind the state to one request: the method, the tool (or prompt, resource)
//     name and a digest of its arguments; OpenState checks the MAC and the expiry, the
//     caller checks the binding (StateMatches).
//  3. Every round's state is new (a fresh nonce), so round 2's differs from round 1's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace keel {

// The secret keys, raw bytes (32 each). `previous` is empty when there is none.
struct StateKeys {
  std::string current;
  std::string previous;
};

struct StateClaims {
  std::string method;       // "tools/call"
  std::string name;         // the tool
  std::string args_digest;  // ArgumentsDigest of the request's arguments
  int64_t round = 1;        // 1 for the first InputRequiredResult of an intent
  int64_t expires_ms = 0;   // wall clock, ms since the epoch
  std::string nonce;        // random hex; names this round
  // A tool's own questions (input_round.h): every answer of the earlier rounds (an object;
  // null: none), and the requestState the tool itself gave last round (empty: none).
  nlohmann::json answers;
  std::string tool_state;
  bool operator==(const StateClaims&) const = default;
};

std::string SealState(const StateClaims& claims, const StateKeys& keys);

// The claims of `token`, or why it is refused ("malformed", "not sealed by this server",
// "expired"). `now_ms`: the wall clock.
std::variant<StateClaims, std::string> OpenState(std::string_view token, const StateKeys& keys,
                                                 int64_t now_ms);

// The digest a state binds arguments by: SHA-256 of their canonical JSON, hex.
std::string ArgumentsDigest(const nlohmann::json& arguments);

// Whether `claims` were sealed for this request (invariant 2).
bool StateMatches(const StateClaims& claims, std::string_view method, std::string_view name,
                  std::string_view args_digest);

}  // namespace keel
