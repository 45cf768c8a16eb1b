#include "protocol/client_capabilities.h"

#include <string>

namespace keel {
namespace {

bool Declares(const Json& capabilities, const char* name, const Json** declared = nullptr) {
  if (!capabilities.is_object()) return false;
  const auto it = capabilities.find(name);
  if (it == capabilities.end() || !it->is_object()) return false;
  if (declared != nullptr) *declared = &*it;
  return true;
}

// What one input request needs that is not declared: merged into `missing`.
void AddMissing(const Json& request, const Json& capabilities, Json& missing) {
  const std::string method = request.value("method", std::string());
  const Json params = request.value("params", Json::object());
  const Json* declared = nullptr;
  if (method == "elicitation/create") {
    const std::string mode = params.is_object() ? params.value("mode", "form") : "form";
    if (!Declares(capabilities, "elicitation", &declared)) {
      missing["elicitation"] = Json::object();
      if (mode == "url") missing["elicitation"]["url"] = Json::object();
    } else if (mode == "url" ? !declared->contains("url")
                             : !declared->empty() && !declared->contains("form")) {
      missing["elicitation"][mode] = Json::object();  // {} means form only
    }
  } else if (method == "sampling/createMessage") {
    const bool tools =
        params.is_object() && (params.contains("tools") || params.contains("toolChoice"));
    if (!Declares(capabilities, "sampling", &declared)) {
      missing["sampling"] = Json::object();
      if (tools) missing["sampling"]["tools"] = Json::object();
    } else if (tools && !declared->contains("tools")) {
      missing["sampling"]["tools"] = Json::object();
    }
  } else if (method == "roots/list") {
    if (!Declares(capabilities, "roots")) missing["roots"] = Json::object();
  }
}

}  // namespace

Json MissingCapabilities(const Json& input_requests, const Json& client_capabilities) {
  Json missing = Json::object();
  if (!input_requests.is_object()) return missing;
  for (const auto& [key, request] : input_requests.items()) {
    if (request.is_object()) AddMissing(request, client_capabilities, missing);
  }
  return missing;
}

}  // namespace keel
