// ReadResourceTemplates (surface_catalog.h): resources whose URIs follow an RFC 6570
// template, read by running a command or by filling in a literal text.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>

#include "protocol/uri_template.h"
#include "server/catalog/surface_catalog.h"

namespace keel {
namespace {

// The variable names of `text` in order of first appearance (protocol/uri_template.h: RFC
// 6570 levels 1 to 3), or *problem set.
std::vector<std::string> UriTemplateVariables(std::string_view text, std::string* problem) {
  std::optional<UriTemplate> parsed = UriTemplate::Parse(text, problem);
  if (!parsed) return {};
  return parsed->VariableNames();
}

// The scheme before the first expression: "deploy://{service}" -> "deploy:".
bool HasScheme(const std::string& uri_template) {
  const std::string head = uri_template.substr(0, uri_template.find('{'));
  return head.find(':') != std::string::npos && IsAbsoluteUri(head + "x");
}

// `uriTemplate`; returns its variables (empty on a problem).
std::vector<std::string> ReadUriTemplate(ObjectReader& reader, ResourceTemplateEntry& entry) {
  auto uri_template = reader.String("uriTemplate", true);
  if (!uri_template) return {};
  std::string problem;
  std::vector<std::string> variables = UriTemplateVariables(*uri_template, &problem);
  if (problem.empty() && !HasScheme(*uri_template)) {
    problem = "must start with a URI scheme, e.g. deploy://{service}/status";
  } else if (problem.empty() && variables.empty()) {
    problem = "names no variable (a fixed URI is a resource, not a template)";
  } else if (problem.empty() &&
             std::find(variables.begin(), variables.end(), "uri") != variables.end()) {
    problem = "a variable may not be named uri: {uri} is the whole URI read";
  }
  if (!problem.empty()) {
    reader.Problem("uriTemplate", Shown(Json(*uri_template)) + ": " + problem);
    return {};
  }
  entry.uri_template = std::move(*uri_template);
  return variables;
}

// `text`, a literal whose {references} name the template's variables or uri.
void ReadTemplateText(ObjectReader& reader, ResourceTemplateEntry& entry,
                      const std::vector<std::string>& references) {
  auto text = reader.String("text", false);
  if (!text) return;
  const TemplateParse parse = ParseTemplate(*text);
  if (!parse.problem.empty()) reader.Problem("text", parse.problem);
  for (const std::string& ref : parse.refs) {
    if (std::find(references.begin(), references.end(), ref) == references.end()) {
      reader.Problem("text", "{" + ref + "} is not a variable of uriTemplate nor {uri}");
    }
  }
  entry.text = std::move(*text);
}

// `complete`: {"<variable>": completion}.
void ReadTemplateCompletions(ObjectReader& reader, ResourceTemplateEntry& entry,
                             const std::vector<std::string>& variables) {
  const Json* object = reader.Object("complete");
  if (object == nullptr) return;
  ObjectReader complete = reader.Nested(*object, "complete");
  for (const auto& item : object->items()) {
    if (std::find(variables.begin(), variables.end(), item.key()) == variables.end()) {
      complete.Problem(item.key(), "is not a variable of uriTemplate");
      continue;
    }
    if (auto completion = ReadCompletion(complete, item.key())) {
      entry.completions.emplace_back(item.key(), std::move(*completion));
    }
  }
}

std::optional<ResourceTemplateEntry> ReadTemplate(const Json& item, const std::string& label,
                                                  std::vector<std::string>* problems) {
  ObjectReader reader(item, label, problems);
  const size_t before = reader.problem_count();
  reader.OnlyFields({"name", "title", "description", "uriTemplate", "mimeType", "annotations",
                     "run", "text", "complete"});
  ResourceTemplateEntry entry;
  ReadDescribedFields(reader, entry);
  const std::vector<std::string> variables = ReadUriTemplate(reader, entry);
  if ((reader.Find("run") != nullptr) == (reader.Find("text") != nullptr)) {
    problems->push_back(label + ": needs exactly one of run, text");
  }
  if (!entry.uri_template.empty()) {  // references can be checked only against variables
    std::vector<std::string> references = variables;
    references.emplace_back("uri");
    entry.run = ReadCommandSpec(reader, "run", references, "a variable of uriTemplate nor {uri}");
    ReadTemplateText(reader, entry, references);
    ReadTemplateCompletions(reader, entry, variables);
  }
  if (reader.problem_count() != before) return std::nullopt;
  return entry;
}

}  // namespace

std::vector<ResourceTemplateEntry> ReadResourceTemplates(const Json& list,
                                                         std::vector<std::string>* problems) {
  std::vector<ResourceTemplateEntry> templates;
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& item = list[i];
    const std::string label = SurfaceLabel("resourceTemplates", item, i);
    if (!item.is_object()) {
      problems->push_back(label + ": must be an object, got " + std::string(item.type_name()));
      continue;
    }
    auto entry = ReadTemplate(item, label, problems);
    if (!entry) continue;
    if (!seen.insert(entry->uri_template).second) {
      problems->push_back(label + ".uriTemplate: " + Shown(Json(entry->uri_template)) +
                          " appears twice (a URI has one owner)");
      continue;
    }
    templates.push_back(std::move(*entry));
  }
  return templates;
}

}  // namespace keel
