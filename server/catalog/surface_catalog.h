// Surface catalog: reads a catalog file's `resources`, `resourceTemplates` and `prompts`
// arrays (docs/catalog.md "Resources", "Resource templates", "Prompts", "Completion") into
// surface_entries.h's values, reporting every problem with the entry and the field's path,
// e.g. `resources[1] (runbooks).uriPrefix: "docs" must end with '/'`. An entry is named by
// index only while its name is unusable. Unknown fields are problems at every level.
//
// The readers enforce surface_entries.h's invariants; they do no I/O (a file a resource
// names is neither read nor checked to exist here: see catalog_paths.h). A reader returns
// only the entries that loaded; the caller keeps the catalog only if no problem was added.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/catalog/object_reader.h"
#include "server/catalog/surface_entries.h"

namespace keel {

// Each takes the section's array (the caller checked that it is one).
std::vector<ResourceEntry> ReadResources(const Json& list, std::vector<std::string>* problems);
std::vector<ResourceTemplateEntry> ReadResourceTemplates(const Json& list,
                                                         std::vector<std::string>* problems);
// `resources` are the catalog's loaded resources: a message's resource must name one.
std::vector<PromptEntry> ReadPrompts(const Json& list, const std::vector<ResourceEntry>& resources,
                                     std::vector<std::string>* problems);

// Helpers the three readers share.

// "resources[1] (runbooks)" when the item's name is usable in a message, else "resources[1]".
std::string SurfaceLabel(std::string_view section, const Json& item, size_t index);
// An absolute URI: a scheme ([A-Za-z][A-Za-z0-9+.-]*), ':', then at least one character,
// with no whitespace or control character.
bool IsAbsoluteUri(std::string_view uri);
// `field`, a MIME type ("text/markdown", "text/plain; charset=utf-8"); nullopt when absent
// (or bad: a problem).
std::optional<std::string> ReadMimeType(ObjectReader& entry, std::string_view field);
// `annotations`: MCP Annotations ({audience, priority, lastModified}); null when absent or
// bad (a problem).
Json ReadAnnotations(ObjectReader& entry);

// The members a resource and a resource template share: name (required, non-empty),
// title, description, mimeType and annotations.
template <typename Entry>
void ReadDescribedFields(ObjectReader& reader, Entry& entry) {
  if (auto name = reader.String("name", true)) {
    if (name->empty()) reader.Problem("name", "must not be empty");
    entry.name = std::move(*name);
  }
  if (auto title = reader.String("title", false)) entry.title = std::move(*title);
  if (auto description = reader.String("description", false)) {
    entry.description = std::move(*description);
  }
  if (auto mime = ReadMimeType(reader, "mimeType")) entry.mime_type = std::move(*mime);
  entry.annotations = ReadAnnotations(reader);
}
// A completion at `field`: a non-empty array of at most kMaxCompletionValues strings, or a
// command object whose argv may reference {argument} and {value}. nullopt when absent or bad.
std::optional<CompletionSpec> ReadCompletion(ObjectReader& owner, std::string_view field);
// Standard base64 (RFC 4648 section 4, padded).
bool IsBase64(std::string_view text);

}  // namespace keel
