// ForwardedSurface: the resources, resource templates, prompts and completions of a server
// keel wraps (`keel wrap`; WRAP-1), as the session serves them: the lists as the upstream
// last gave them (listed by keel, in pages of keel's size), and one internal tool that
// forwards resources/read, prompts/get and completion/complete to the upstream
// (UpstreamSurfaceTool, server/upstream/upstream_tool.h), run as a call like keel's own
// readers (surface_answer.h). The upstream decides what exists: a URI or prompt name it
// does not list is still asked of it.
//
// Thread: built on the main thread or a worker, then read-only on the loop thread;
// subscribe may be called from the loop (it must not block).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/catalog/tool.h"

namespace keel {

struct ForwardedSurface {
  std::vector<nlohmann::json> resources;  // resources/list items
  std::vector<nlohmann::json> templates;  // resources/templates/list items
  std::vector<nlohmann::json> prompts;    // prompts/list items
  bool serves_resources = false;          // the upstream declared resources
  bool serves_prompts = false;
  bool completes = false;      // the upstream declared completions
  std::shared_ptr<Tool> tool;  // forwards {method, params}
  // Asks the upstream to tell keel when `uri` changes (resources/subscribe; its answer is
  // not awaited); null when the upstream has no subscriptions.
  std::function<void(const std::string& uri)> subscribe;
};

}  // namespace keel
