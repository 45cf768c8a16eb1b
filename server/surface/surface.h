// Surface: everything keel serves besides tools — its resources (resource_set.h), prompts
// (prompt_set.h) and the commands that complete their arguments — built from one catalog
// (plus the conformance fixtures'), and what the server declares for them (capabilities).
// The session holds the surface in force; a catalog reload builds a new one, and the old
// one stays alive while calls may still use its readers (Session::SetSurface).
//
// Thread: built on the main or loop thread; read-only afterwards, except
// resources.RefreshMounts() (loop thread).
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "server/catalog/surface_entries.h"
#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"
#include "server/surface/forwarded_surface.h"
#include "server/surface/prompt_set.h"
#include "server/surface/resource_set.h"

namespace keel {

class Surface {
 public:
  Surface(std::vector<ResourceEntry> resources, std::vector<ResourceTemplateEntry> templates,
          std::vector<PromptEntry> prompts, std::shared_ptr<LedgerService> ledger);
  // A wrapped server's (keel wrap): its lists, and everything asked of it.
  explicit Surface(ForwardedSurface forwarded);
  Surface(const Surface&) = delete;
  Surface& operator=(const Surface&) = delete;

  ResourceSet& resources() { return resources_; }
  const ResourceSet& resources() const { return resources_; }
  PromptSet& prompts() { return prompts_; }
  const PromptSet& prompts() const { return prompts_; }

  // completion/complete is offered: some argument or variable has a completion.
  bool completes() const { return resources_.completes() || prompts_.completes(); }
  // The command tool of a completion with a command; null for a static list.
  Tool* CompletionTool(const CompletionSpec* spec) const;
  // Set for a wrapped server's surface: the session forwards instead of resolving.
  const ForwardedSurface* forwarded() const { return forwarded_.get(); }

 private:
  ResourceSet resources_;
  PromptSet prompts_;
  std::map<const CompletionSpec*, std::unique_ptr<Tool>> completion_tools_;
  std::unique_ptr<ForwardedSurface> forwarded_;
};

}  // namespace keel
