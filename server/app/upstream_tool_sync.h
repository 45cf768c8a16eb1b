// UpstreamToolSync: keel wrap follows the upstream's tool list (WRAP-1). When the upstream's
// lists change (it sent notifications/tools/list_changed and UpstreamLink read them again,
// or a restarted instance lists other tools), Refresh builds its tools again, with the
// same overlay, and puts them in the registry: a tool whose description and effect class
// did not change stays the same Tool (its breaker and policy state are by name anyway); a
// new one is served; one the upstream no longer lists leaves tools/list (a call already
// running it finishes). The caller then tells clients (notifications/tools/list_changed).
//
// At start-up an overlay entry that names no tool of the upstream, or does not fit its
// tool, stops keel (exit 78); here it is logged and the tool is served by its annotations,
// since keel is serving already.
//
// Thread: the loop thread (the registry's).
#pragma once

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/catalog/catalog.h"
#include "server/catalog/tool_registry.h"
#include "server/durable/ledger_service.h"
#include "server/upstream/upstream_link.h"

namespace keel {

class UpstreamToolSync {
 public:
  // `registry` holds the upstream's tools as served at start-up; `overlay` (null: none)
  // and `registry` outlive this.
  UpstreamToolSync(ToolRegistry& registry, std::shared_ptr<UpstreamLink> link,
                   const Catalog* overlay, std::shared_ptr<LedgerService> ledger);

  // True when what tools/list answers changed.
  bool Refresh();

 private:
  ToolRegistry& registry_;
  std::shared_ptr<UpstreamLink> link_;
  const Catalog* overlay_;
  std::shared_ptr<LedgerService> ledger_;
  std::vector<nlohmann::json> served_;  // the upstream's tools/list behind the registry's
};

}  // namespace keel
