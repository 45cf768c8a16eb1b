#include "ledger/fingerprint.h"

#include <array>

#include <openssl/evp.h>

namespace keel {

std::string CanonicalJson(const nlohmann::json& value) {
  // nlohmann's object is a std::map: keys come out sorted by their UTF-8 bytes. Compact
  // (indent -1). Input parsed from the wire is valid UTF-8; `replace` only keeps a hand-made
  // invalid string from throwing.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Fingerprint(std::string_view tool, const nlohmann::json& arguments) {
  nlohmann::json args = arguments;
  if (args.is_object()) {
    args.erase("idempotencyKey");  // the key names the intent; it is not part of it
    args.erase("_meta");           // progress tokens and tracing differ between retries
  }
  const nlohmann::json intent = {{"tool", std::string(tool)}, {"arguments", std::move(args)}};
  const std::string text = CanonicalJson(intent);

  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    return {};  // libcrypto failed (out of memory); the ledger refuses an empty fingerprint
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace keel
