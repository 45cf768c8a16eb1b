#include "protocol/request_meta.h"

#include <string_view>
#include <utility>

namespace keel {
namespace {

struct KeptMetaKey {
  std::string_view name;
  size_t max_bytes;
  // The values allowed, and how the problem names them; null: any value (the reader checks).
  bool (*allowed)(const Json& value);
  const char* allowed_text;
};

// MCP: a token "MUST be a string or integer", typed string | number in its schema: keel takes
// any number (echoed exactly as it came, 1.5 stays 1.5). null means none was asked for.
bool IsProgressToken(const Json& value) {
  return value.is_string() || value.is_number() || value.is_null();
}

// Every _meta key keel reads (see request_meta.h).
constexpr KeptMetaKey kKeptMetaKeys[] = {
    {"progressToken", kMaxMetaValueBytes, IsProgressToken, "a string or a number"},
    {"dev.keel/idempotency-key", kMaxMetaValueBytes, nullptr, nullptr},
    {"traceparent", kMaxMetaValueBytes, nullptr, nullptr},
};

}  // namespace

size_t EncodedSizeUpTo(const Json& value, size_t limit) {
  switch (value.type()) {
    case Json::value_t::string:
      return value.get_ref<const std::string&>().size() + 2;
    case Json::value_t::array:
    case Json::value_t::object: {
      size_t size = 2;  // the brackets
      for (auto it = value.begin(); it != value.end() && size <= limit; ++it) {
        if (it != value.begin()) ++size;                     // the comma
        if (value.is_object()) size += it.key().size() + 3;  // "key":
        if (size <= limit) size += EncodedSizeUpTo(*it, limit - size);
      }
      return size;
    }
    case Json::value_t::null:
      return 4;
    case Json::value_t::boolean:
      return value.get<bool>() ? 4 : 5;
    default:
      return 24;  // a number
  }
}

std::optional<std::string> KeepUsedMeta(Json& meta) {
  if (!meta.is_object()) {
    meta = nullptr;
    return std::nullopt;
  }
  for (const KeptMetaKey& key : kKeptMetaKeys) {
    const auto it = meta.find(key.name);
    if (it == meta.end()) continue;
    if (key.allowed != nullptr && !key.allowed(*it)) {
      return "_meta." + std::string(key.name) + " must be " + key.allowed_text + ", got " +
             it->type_name();
    }
    if (EncodedSizeUpTo(*it, key.max_bytes) > key.max_bytes) {
      return "_meta." + std::string(key.name) + " is larger than " + std::to_string(key.max_bytes) +
             " bytes";
    }
  }
  Json kept = Json::object();
  for (const KeptMetaKey& key : kKeptMetaKeys) {
    const auto it = meta.find(key.name);
    if (it != meta.end()) kept[std::string(key.name)] = std::move(*it);
  }
  meta = std::move(kept);
  return std::nullopt;
}

}  // namespace keel
