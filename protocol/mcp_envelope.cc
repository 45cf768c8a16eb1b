#include "protocol/mcp_envelope.h"

#include "protocol/mcp_version.h"

namespace keel {
namespace {

// params._meta when it is an object, else nullptr.
const Json* MetaOf(const Json& params) {
  if (!params.is_object()) return nullptr;
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  return &*meta;
}

const Json* Key(const Json& meta, std::string_view key) {
  const auto it = meta.find(key);
  return it == meta.end() ? nullptr : &*it;
}

RpcError MissingKey(std::string_view key, std::string_view kind) {
  return InvalidParams("_meta[\"" + std::string(key) + "\"] (" + std::string(kind) +
                       ") is required in MCP " + std::string(kModernProtocolVersion));
}

}  // namespace

bool HasModernEnvelope(const Json& params) {
  const Json* meta = MetaOf(params);
  return meta != nullptr &&
         (meta->contains(kMetaProtocolVersion) || meta->contains(kMetaClientCapabilities));
}

RpcError UnsupportedProtocolVersion(std::string_view requested) {
  Json supported = Json::array();
  for (std::string_view version : kAllProtocolVersions) supported.push_back(version);
  return RpcError{kUnsupportedProtocolVersion, "Unsupported protocol version",
                  Json{{"supported", std::move(supported)}, {"requested", requested}}};
}

Decoded<ModernEnvelope> DecodeModernEnvelope(const Json& params) {
  static const Json kNoMeta = Json::object();
  const Json* found = MetaOf(params);
  const Json& meta = found != nullptr ? *found : kNoMeta;
  const Json* version = Key(meta, kMetaProtocolVersion);
  if (version == nullptr || !version->is_string() ||
      version->get_ref<const std::string&>().empty()) {
    return MissingKey(kMetaProtocolVersion, "a string");
  }
  const Json* capabilities = Key(meta, kMetaClientCapabilities);
  if (capabilities == nullptr || !capabilities->is_object()) {
    return MissingKey(kMetaClientCapabilities, "an object");
  }
  const std::string& requested = version->get_ref<const std::string&>();
  if (requested != kModernProtocolVersion) return UnsupportedProtocolVersion(requested);
  ModernEnvelope envelope;
  envelope.protocol_version = requested;
  if (!capabilities->empty()) envelope.client_capabilities = *capabilities;
  if (const Json* level = Key(meta, kMetaLogLevel)) {
    if (level->is_string()) {
      envelope.log_level = ParseLoggingLevel(level->get_ref<const std::string&>());
    }
    if (!envelope.log_level) {
      return InvalidParams("_meta[\"" + std::string(kMetaLogLevel) +
                           "\"] must be one of debug, info, notice, warning, error, critical, "
                           "alert, emergency");
    }
  }
  return envelope;
}

bool DeclaresTasksExtension(const Json& client_capabilities) {
  if (!client_capabilities.is_object()) return false;
  const auto extensions = client_capabilities.find("extensions");
  if (extensions == client_capabilities.end() || !extensions->is_object()) return false;
  const auto tasks = extensions->find(std::string(kTasksExtension));
  return tasks != extensions->end() && tasks->is_object();
}

}  // namespace keel
