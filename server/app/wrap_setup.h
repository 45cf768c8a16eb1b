// WrapSetup: what `keel wrap [flags] -- COMMAND ...` serves (WRAP-1..4; docs/wrap.md): the
// upstream started and its handshake done (UpstreamLink), its tools as UpstreamTools in a
// ToolSet (the catalog overlay's entries, by name, decide effect class, backend, timeouts,
// retry, key components, approval and task support; without an entry the annotations
// decide the effect), and its resources, templates, prompts and completion as a forwarded
// Surface.
//
// Thread: the main thread, at start-up; MakeForwardedSurface also on the loop thread.
// Exit codes: 69 when the upstream cannot start (the reason on `err`), 78 when the overlay
// names a tool the upstream does not have or does not fit it.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "server/app/cli_options.h"
#include "server/app/tool_set.h"
#include "server/catalog/catalog.h"
#include "server/durable/ledger_service.h"
#include "server/surface/surface.h"
#include "server/upstream/upstream_link.h"

namespace keel {

struct WrapParts {
  std::shared_ptr<UpstreamLink> link;
  std::optional<int> exit_code;  // set: keel exits now (the reason is written)
};

// Starts the upstream (rule 1 of upstream_link.h).
WrapParts StartWrap(const CliOptions& flags, std::ostream& err);

// The tools of `listed` (the upstream's tools/list) as UpstreamTools, with the overlay
// (`overlay` null: none) applied by name.
struct UpstreamToolBuild {
  std::vector<std::unique_ptr<Tool>> tools;
  std::vector<std::string> problems;   // overlay entries that do not fit their tool
  std::vector<std::string> unmatched;  // overlay entries naming no tool of the upstream
};
UpstreamToolBuild BuildUpstreamTools(const std::vector<Json>& listed,
                                     const std::shared_ptr<UpstreamLink>& link,
                                     const Catalog* overlay,
                                     const std::shared_ptr<LedgerService>& ledger);

// The upstream's tools with the overlay, into `set`. False after writing why (an overlay
// entry that does not fit, or names no tool of the upstream: exit 78).
bool AddUpstreamTools(const std::shared_ptr<UpstreamLink>& link, const Catalog* overlay,
                      const std::shared_ptr<LedgerService>& ledger, ToolSet* set,
                      std::ostream& err);

// The upstream's current lists as the session's surface.
std::shared_ptr<Surface> MakeForwardedSurface(const std::shared_ptr<UpstreamLink>& link);

}  // namespace keel
