// ReadResources (surface_catalog.h): the catalog's static resources and directory mounts.
#include <string>
#include <utility>

#include "server/catalog/surface_catalog.h"

namespace keel {
namespace {

// A path field (file, directory): non-empty, no NUL (a path cannot hold one).
std::optional<std::string> ReadPathField(ObjectReader& reader, std::string_view field) {
  auto path = reader.String(field, false);
  if (path && (path->empty() || path->find('\0') != std::string::npos)) {
    reader.Problem(field, "must be a non-empty path without NUL characters");
    return std::nullopt;
  }
  return path;
}

// The URI fields: `uri` for file, text and blob; `uriPrefix` for a mount; never both.
void ReadResourceUri(ObjectReader& reader, ResourceEntry& entry, bool mount) {
  const std::string_view wanted = mount ? "uriPrefix" : "uri";
  const std::string_view other = mount ? "uri" : "uriPrefix";
  if (reader.Find(other) != nullptr) {
    reader.Problem(other, mount ? "a directory mount has uriPrefix instead (each file's URI is "
                                  "uriPrefix + its path)"
                                : "only a directory mount has uriPrefix");
  }
  auto uri = reader.String(wanted, true);
  if (!uri) return;
  if (!IsAbsoluteUri(*uri)) {
    reader.Problem(wanted, Shown(Json(*uri)) +
                               " is not an absolute URI (a scheme, then ':', e.g. "
                               "file:///srv/notes.md or runbook://restart), without spaces");
  } else if (mount && uri->back() != '/') {
    reader.Problem(wanted, Shown(Json(*uri)) + " must end with '/'");
  }
  (mount ? entry.uri_prefix : entry.uri) = std::move(*uri);
}

// Exactly one source (surface_entries.h invariant 2).
void ReadResourceSource(ObjectReader& reader, ResourceEntry& entry,
                        std::vector<std::string>* problems) {
  int sources = 0;
  for (std::string_view field : {"file", "text", "blob", "directory"}) {
    sources += reader.Find(field) != nullptr ? 1 : 0;
  }
  if (sources != 1) {
    problems->push_back(reader.path() + ": needs exactly one of file, text, blob, directory (has " +
                        std::to_string(sources) + ")");
  }
  if (auto file = ReadPathField(reader, "file")) entry.file = std::move(*file);
  if (auto directory = ReadPathField(reader, "directory")) entry.directory = std::move(*directory);
  entry.text = reader.String("text", false);
  if (auto blob = reader.String("blob", false)) {
    if (!IsBase64(*blob)) reader.Problem("blob", "must be standard base64 (RFC 4648), padded");
    entry.blob = std::move(*blob);
  }
  const bool mount = reader.Find("directory") != nullptr;
  ReadResourceUri(reader, entry, mount);
  if (auto max = reader.Integer("maxBytes", 1, kMaxResourceBytes, false)) {
    if (reader.Find("file") == nullptr && !mount) {
      reader.Problem("maxBytes", "applies to file and directory resources only");
    }
    entry.max_bytes = *max;
  }
}

std::optional<ResourceEntry> ReadResource(const Json& item, const std::string& label,
                                          std::vector<std::string>* problems) {
  ObjectReader reader(item, label, problems);
  const size_t before = reader.problem_count();
  reader.OnlyFields({"name", "title", "description", "mimeType", "annotations", "uri", "file",
                     "text", "blob", "directory", "uriPrefix", "maxBytes"});
  ResourceEntry entry;
  ReadDescribedFields(reader, entry);
  ReadResourceSource(reader, entry, problems);
  if (reader.problem_count() != before) return std::nullopt;
  return entry;
}

// Invariant 1: one owner per URI. Static URIs and mount prefixes are unique; no static URI
// and no other mount lies under a mount's prefix.
void CheckResourceOwners(const std::vector<ResourceEntry>& resources,
                         const std::vector<std::string>& labels,
                         std::vector<std::string>* problems) {
  for (size_t i = 0; i < resources.size(); ++i) {
    const ResourceEntry& entry = resources[i];
    const std::string& mine = entry.is_mount() ? entry.uri_prefix : entry.uri;
    const std::string field = entry.is_mount() ? ".uriPrefix: " : ".uri: ";
    for (size_t j = 0; j < i; ++j) {
      const ResourceEntry& earlier = resources[j];
      const std::string& theirs = earlier.is_mount() ? earlier.uri_prefix : earlier.uri;
      std::string what;
      if (mine == theirs) {
        what = "is already the URI of " + labels[j];
      } else if (earlier.is_mount() && mine.rfind(theirs, 0) == 0) {
        what = "lies under the uriPrefix of " + labels[j] + " (a URI has one owner)";
      } else if (entry.is_mount() && theirs.rfind(mine, 0) == 0) {
        what = "would contain the URI of " + labels[j] + " (a URI has one owner)";
      }
      if (!what.empty()) problems->push_back(labels[i] + field + Shown(Json(mine)) + " " + what);
    }
  }
}

}  // namespace

std::vector<ResourceEntry> ReadResources(const Json& list, std::vector<std::string>* problems) {
  std::vector<ResourceEntry> resources;
  std::vector<std::string> labels;  // of the entries in `resources`
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& item = list[i];
    const std::string label = SurfaceLabel("resources", item, i);
    if (!item.is_object()) {
      problems->push_back(label + ": must be an object, got " + std::string(item.type_name()));
      continue;
    }
    if (auto entry = ReadResource(item, label, problems)) {
      resources.push_back(std::move(*entry));
      labels.push_back(label);
    }
  }
  CheckResourceOwners(resources, labels, problems);
  return resources;
}

}  // namespace keel
