#include "server/surface/resource_set.h"

#include <utility>

#include "server/surface/file_source.h"
#include "server/surface/resource_readers.h"

namespace keel {

void AddDescriptionMembers(Json& item, const std::string& title, const std::string& description,
                           const std::string& mime_type, const Json& annotations) {
  if (!title.empty()) item["title"] = title;
  if (!description.empty()) item["description"] = description;
  if (!mime_type.empty()) item["mimeType"] = mime_type;
  if (annotations.is_object()) item["annotations"] = annotations;
}

ResourceSet::ResourceSet(std::vector<ResourceEntry> resources,
                         std::vector<ResourceTemplateEntry> templates,
                         std::shared_ptr<LedgerService> ledger)
    : resources_(std::move(resources)) {
  for (size_t i = 0; i < resources_.size(); ++i) {
    const ResourceEntry& entry = resources_[i];
    if (entry.is_mount()) {
      readers_.push_back(MakeMountReader(entry));
      mounts_.push_back(Mount{i, {}});
    } else {
      readers_.push_back(MakeStaticReader(entry));
    }
  }
  for (ResourceTemplateEntry& entry : templates) {
    Template t;
    std::string error;
    t.uri_template = UriTemplate::Parse(entry.uri_template, &error);
    const std::vector<std::string> variables =
        t.uri_template ? t.uri_template->VariableNames() : std::vector<std::string>();
    t.reader = MakeTemplateReader(entry, variables, ledger);
    t.entry = std::move(entry);
    Json item = {{"uriTemplate", t.entry.uri_template}, {"name", t.entry.name}};
    AddDescriptionMembers(item, t.entry.title, t.entry.description, t.entry.mime_type,
                          t.entry.annotations);
    template_items_.push_back(std::move(item));
    templates_.push_back(std::move(t));
  }
  RefreshMounts();
}

bool ResourceSet::RefreshMounts() {
  for (Mount& mount : mounts_) {
    const ResourceEntry& entry = resources_[mount.resource];
    std::vector<Json> files;
    for (const ListedFile& file : ListMountedFiles(entry.directory)) {
      Json item = {{"uri", entry.uri_prefix + PercentEncodePath(file.path)}, {"name", file.path}};
      AddDescriptionMembers(item, "", "",
                            entry.mime_type.empty() ? MimeTypeOfName(file.path) : entry.mime_type,
                            entry.annotations);
      item["size"] = file.size;
      files.push_back(std::move(item));
    }
    mount.files = std::move(files);
  }
  const std::vector<Json> before = std::move(items_);
  RebuildItems();
  return before != items_;
}

void ResourceSet::RebuildItems() {
  items_.clear();
  size_t next_mount = 0;
  for (size_t i = 0; i < resources_.size(); ++i) {
    const ResourceEntry& entry = resources_[i];
    if (entry.is_mount()) {
      const Mount& mount = mounts_[next_mount++];
      items_.insert(items_.end(), mount.files.begin(), mount.files.end());
      continue;
    }
    Json item = {{"uri", entry.uri}, {"name", entry.name}};
    std::string mime = entry.mime_type;
    if (mime.empty()) {
      mime = entry.text ? "text/plain" : entry.file.empty() ? "" : MimeTypeOfName(entry.file);
    }
    AddDescriptionMembers(item, entry.title, entry.description, mime, entry.annotations);
    if (entry.text) item["size"] = entry.text->size();
    items_.push_back(std::move(item));
  }
}

std::optional<ResourceSet::Read> ResourceSet::Resolve(const std::string& uri) const {
  for (size_t i = 0; i < resources_.size(); ++i) {
    const ResourceEntry& entry = resources_[i];
    if (!entry.is_mount() && entry.uri == uri) {
      return Read{readers_[i].get(), Json{{"uri", uri}}, entry.mime_type};
    }
  }
  for (size_t i = 0; i < resources_.size(); ++i) {
    const ResourceEntry& entry = resources_[i];
    if (!entry.is_mount() || uri.size() <= entry.uri_prefix.size() ||
        uri.compare(0, entry.uri_prefix.size(), entry.uri_prefix) != 0) {
      continue;
    }
    const std::optional<std::string> path = PercentDecode(uri.substr(entry.uri_prefix.size()));
    if (!path) return std::nullopt;
    return Read{readers_[i].get(), Json{{"uri", uri}, {"path", *path}}, entry.mime_type};
  }
  for (const Template& t : templates_) {
    if (!t.uri_template) continue;
    const std::optional<UriTemplate::Values> values = t.uri_template->Match(uri);
    if (!values) continue;
    Json arguments = {{"uri", uri}};
    for (const std::string& name : t.uri_template->VariableNames()) {
      const auto it = values->find(name);
      arguments[name] = it != values->end() ? it->second : std::string();
    }
    return Read{t.reader.get(), std::move(arguments), t.entry.mime_type};
  }
  return std::nullopt;
}

const CompletionSpec* ResourceSet::CompletionOf(std::string_view ref,
                                                std::string_view variable) const {
  for (const Template& t : templates_) {
    if (t.entry.uri_template != ref) continue;
    for (const auto& [name, spec] : t.entry.completions) {
      if (name == variable) return &spec;
    }
  }
  return nullptr;
}

bool ResourceSet::HasVariable(std::string_view ref, std::string_view variable) const {
  for (const Template& t : templates_) {
    if (t.entry.uri_template != ref || !t.uri_template) continue;
    for (const std::string& name : t.uri_template->VariableNames()) {
      if (name == variable) return true;
    }
  }
  return false;
}

bool ResourceSet::completes() const {
  for (const Template& t : templates_) {
    if (!t.entry.completions.empty()) return true;
  }
  return false;
}

std::vector<std::pair<std::string, const CompletionSpec*>> ResourceSet::Completions() const {
  std::vector<std::pair<std::string, const CompletionSpec*>> all;
  for (const Template& t : templates_) {
    for (const auto& [name, spec] : t.entry.completions) {
      all.emplace_back(t.entry.uri_template + " " + name, &spec);
    }
  }
  return all;
}

std::vector<std::string> ResourceSet::WatchedPaths() const {
  std::vector<std::string> paths;
  for (const ResourceEntry& entry : resources_) {
    if (entry.is_mount()) {
      paths.push_back(entry.directory);
    } else if (!entry.file.empty()) {
      paths.push_back(entry.file);
    }
  }
  return paths;
}

std::vector<std::string> ResourceSet::UrisOfPath(const std::string& path) const {
  std::vector<std::string> uris;
  for (const ResourceEntry& entry : resources_) {
    if (!entry.is_mount()) {
      if (!entry.file.empty() && entry.file == path) uris.push_back(entry.uri);
      continue;
    }
    const std::string& root = entry.directory;
    if (path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0 &&
        path[root.size()] == '/') {
      uris.push_back(entry.uri_prefix + PercentEncodePath(path.substr(root.size() + 1)));
    }
  }
  return uris;
}

}  // namespace keel
