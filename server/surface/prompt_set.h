// PromptSet: the prompts keel serves (the catalog's, and the conformance fixtures'), what
// prompts/list shows, and the internal tool that renders each (surface_answer.h says why
// prompts/get is a call).
//
// A catalog prompt renders its messages (surface_entries.h PromptMessage): text with its
// {argument} references replaced by the request's values (an optional argument not given is
// ""); an image from its file (read when asked) or data; a resource either literal, or read
// from keel's own resources through their reader (a static, mounted or templated one) under
// the call's cancellation. The tool answers structuredContent {description?, messages}.
// prompts/get of an unknown prompt, or without a required argument, is -32602 before
// anything runs (MissingArgument).
//
// Thread: built once (or again on a catalog reload); read-only after. Tools are reentrant.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/catalog/surface_entries.h"
#include "server/catalog/tool.h"

namespace keel {

using Json = nlohmann::json;
class ResourceSet;

class PromptSet {
 public:
  PromptSet() = default;
  // `resources` (may be null) serves embedded keel resources; it must outlive the set.
  PromptSet(std::vector<PromptEntry> prompts, const ResourceSet* resources);

  // A prompt made in code (a conformance fixture): its prompts/list item ({name,
  // description, arguments?}) and the tool that renders it; listed after the catalog's.
  void Add(Json item, std::unique_ptr<Tool> tool);

  bool empty() const { return prompts_.empty(); }
  const std::vector<Json>& items() const { return items_; }
  // The tool rendering prompt `name`; null: no such prompt.
  Tool* Find(const std::string& name) const;
  // The first required argument of prompt `name` missing from `arguments`; nullopt: none.
  std::optional<std::string> MissingArgument(
      const std::string& name, const std::map<std::string, std::string>& arguments) const;
  // The completion of argument `argument` of prompt `name`; null when there is none.
  const CompletionSpec* CompletionOf(const std::string& name, const std::string& argument) const;
  bool completes() const;
  // Every completion: "<prompt> <argument>" and its spec.
  std::vector<std::pair<std::string, const CompletionSpec*>> Completions() const;
  // Whether prompt `name` has an argument `argument`.
  bool HasArgument(const std::string& name, const std::string& argument) const;

 private:
  struct Prompt {
    std::string name;
    std::vector<PromptArgument> arguments;  // of a catalog prompt; a fixture's from its item
    std::unique_ptr<Tool> tool;
  };
  std::vector<Prompt> prompts_;
  std::vector<Json> items_;
};

}  // namespace keel
