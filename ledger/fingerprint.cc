#include "ledger/fingerprint.h"

#include "ledger/sha256.h"

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
  return Sha256Hex(CanonicalJson(intent));
}

}  // namespace keel
