#include "server/input/request_state.h"

#include <nlohmann/json.hpp>

#include "ledger/fingerprint.h"
#include "ledger/sha256.h"
#include "protocol/hex.h"
#include "protocol/json_rpc.h"

namespace keel {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kVersion = "v1.";
// A state is a few hundred bytes, more with the answers it carries (input_round.h bounds
// them); anything larger is not one of ours.
constexpr size_t kMaxTokenBytes = 256 * 1024;

std::string Mac(std::string_view key, std::string_view sealed_part) {
  const Sha256Digest mac = HmacSha256(key, sealed_part);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

// Compares without an early exit, so the time taken says nothing about where they differ.
bool SameMac(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool ReadClaims(const Json& json, StateClaims* claims) {
  if (!json.is_object()) return false;
  const auto text = [&](const char* key, std::string* out) {
    const auto it = json.find(key);
    if (it == json.end() || !it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  const auto number = [&](const char* key, int64_t* out) {
    const auto it = json.find(key);
    if (it == json.end() || !it->is_number_integer()) return false;
    *out = it->get<int64_t>();
    return true;
  };
  if (const auto answers = json.find("x"); answers != json.end()) claims->answers = *answers;
  if (const auto state = json.find("s"); state != json.end() && !text("s", &claims->tool_state)) {
    return false;
  }
  return text("m", &claims->method) && text("t", &claims->name) &&
         text("a", &claims->args_digest) && text("n", &claims->nonce) &&
         number("r", &claims->round) && number("e", &claims->expires_ms);
}

}  // namespace

std::string SealState(const StateClaims& claims, const StateKeys& keys) {
  Json json = {{"m", claims.method}, {"t", claims.name},       {"a", claims.args_digest},
               {"r", claims.round},  {"e", claims.expires_ms}, {"n", claims.nonce}};
  if (!claims.answers.is_null()) json["x"] = claims.answers;
  if (!claims.tool_state.empty()) json["s"] = claims.tool_state;
  const std::string sealed_part = std::string(kVersion) + HexEncode(DumpCompact(json));
  return sealed_part + "." + Mac(keys.current, sealed_part);
}

std::variant<StateClaims, std::string> OpenState(std::string_view token, const StateKeys& keys,
                                                 int64_t now_ms) {
  const size_t dot = token.rfind('.');
  if (token.size() > kMaxTokenBytes || token.substr(0, kVersion.size()) != kVersion ||
      dot == std::string_view::npos || dot < kVersion.size()) {
    return std::string("malformed");
  }
  const std::string_view sealed_part = token.substr(0, dot);
  const std::string_view mac = token.substr(dot + 1);
  const bool sealed = SameMac(mac, Mac(keys.current, sealed_part)) ||
                      (!keys.previous.empty() && SameMac(mac, Mac(keys.previous, sealed_part)));
  if (!sealed) return std::string("not sealed by this server");
  const std::optional<std::string> payload = HexDecode(sealed_part.substr(kVersion.size()));
  StateClaims claims;
  const Json json = payload ? Json::parse(*payload, nullptr, /*allow_exceptions=*/false) : Json();
  if (!ReadClaims(json, &claims)) return std::string("malformed");
  if (claims.expires_ms <= now_ms) return std::string("expired");
  return claims;
}

std::string ArgumentsDigest(const Json& arguments) { return Sha256Hex(CanonicalJson(arguments)); }

bool StateMatches(const StateClaims& claims, std::string_view method, std::string_view name,
                  std::string_view args_digest) {
  return claims.method == method && claims.name == name && claims.args_digest == args_digest;
}

}  // namespace keel
