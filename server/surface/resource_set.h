// ResourceSet: the resources and resource templates keel serves (the catalog's, and the
// conformance fixtures'), what resources/list and resources/templates/list show, and which
// reader (resource_readers.h) serves a URI.
//
// Listing: static resources in catalog order, each mount's files where the mount stands in
// that order (sorted by path), from the mount's last listing (RefreshMounts: at start-up,
// and when a watched directory changes — bounded by kMaxListedFiles per mount), so
// resources/list itself does no I/O.
// Resolving a URI, first match wins:
//  1. a static resource's URI, exactly;
//  2. a mount's prefix followed by a path (percent-decoded): the mount's reader with
//     {uri, path}, whether the file is listed or not (a file created since the last listing
//     is served; confinement is the reader's);
//  3. a template whose uriTemplate matches (protocol/uri_template.h), in catalog order:
//     its reader with {uri, <variables>} (an undefined variable is "").
//
// Thread: built once (or again on a catalog reload) on the main or loop thread; then
// read-only except RefreshMounts (loop thread). Readers are owned here and outlive every
// call that uses them as long as the set lives (the session keeps retired sets).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/uri_template.h"
#include "server/catalog/surface_entries.h"
#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"

namespace keel {

using Json = nlohmann::json;

class ResourceSet {
 public:
  ResourceSet() = default;
  // `ledger` serves command-backed templates (may be null: they are reads).
  ResourceSet(std::vector<ResourceEntry> resources, std::vector<ResourceTemplateEntry> templates,
              std::shared_ptr<LedgerService> ledger);

  bool empty() const { return resources_.empty() && templates_.empty(); }
  // The resources/list items ({uri, name, title?, description?, mimeType?, size?,
  // annotations?}), in order.
  const std::vector<Json>& items() const { return items_; }
  // The resources/templates/list items ({uriTemplate, name, title?, description?,
  // mimeType?, annotations?}).
  const std::vector<Json>& template_items() const { return template_items_; }

  struct Read {
    Tool* reader = nullptr;
    Json arguments;         // {uri, ...}
    std::string mime_type;  // of a template's content (surface_answer.h rule 2)
  };
  // Who reads `uri`; nullopt: nobody (resource not found).
  std::optional<Read> Resolve(const std::string& uri) const;

  // The completion of variable `variable` of the template whose uriTemplate is `ref`; null
  // when there is none.
  const CompletionSpec* CompletionOf(std::string_view ref, std::string_view variable) const;
  bool completes() const;
  // Whether a template's uriTemplate is `ref` and it has variable `variable`.
  bool HasVariable(std::string_view ref, std::string_view variable) const;
  // Every completion: "<uriTemplate> <variable>" and its spec.
  std::vector<std::pair<std::string, const CompletionSpec*>> Completions() const;

  // Lists every mount again; true when resources/list changed.
  bool RefreshMounts();
  // The paths whose changes matter (static files, mount roots), and the URIs a changed path
  // concerns (a static file's URI, or a mounted file's).
  std::vector<std::string> WatchedPaths() const;
  std::vector<std::string> UrisOfPath(const std::string& path) const;

 private:
  struct Mount {
    size_t resource = 0;      // index into resources_
    std::vector<Json> files;  // the last listing's items
  };
  struct Template {
    ResourceTemplateEntry entry;
    std::optional<UriTemplate> uri_template;
    std::unique_ptr<Tool> reader;
  };
  void RebuildItems();

  std::vector<ResourceEntry> resources_;
  std::vector<std::unique_ptr<Tool>> readers_;  // by index of resources_
  std::vector<Mount> mounts_;
  std::vector<Template> templates_;
  std::vector<Json> items_;
  std::vector<Json> template_items_;
};

// A resource's or template's MCP description members (title, description, mimeType,
// annotations) added to `item`.
void AddDescriptionMembers(Json& item, const std::string& title, const std::string& description,
                           const std::string& mime_type, const Json& annotations);

}  // namespace keel
