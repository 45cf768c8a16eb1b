#include "server/catalog/catalog_paths.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace keel {
namespace {

namespace fs = std::filesystem;

// The PATH posix_spawnp searches: keel's own (glibc's default when it is unset).
std::string SearchPath() {
  const char* path = std::getenv("PATH");
  return path != nullptr ? path : "/bin:/usr/bin";
}

// True when `name` (no '/') names an executable file in a directory of `search` (an empty
// entry is the current directory, as for posix_spawnp).
bool OnPath(const std::string& name, const std::string& search) {
  size_t start = 0;
  while (start <= search.size()) {
    const size_t end = std::min(search.find(':', start), search.size());
    const std::string dir = end > start ? search.substr(start, end - start) : ".";
    const fs::path candidate = fs::path(dir) / name;
    std::error_code error;
    if (fs::is_regular_file(candidate, error) && access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// `path` against `base`; empty stays empty.
std::string Absolute(const fs::path& base, const std::string& path) {
  if (path.empty()) return path;
  const fs::path given(path);
  return (given.is_absolute() ? given : base / given).lexically_normal().string();
}

// A command's cwd made absolute (default: `base`), then what can be checked before the
// first run: the cwd is a directory and a program given as a path is executable.
void ResolveCommand(const fs::path& base, CommandSpec& run, const std::string& where,
                    std::vector<std::string>* problems) {
  run.cwd = run.cwd.empty() ? base.lexically_normal().string() : Absolute(base, run.cwd);
  std::error_code error;
  if (!fs::is_directory(run.cwd, error)) {
    problems->push_back(where + ".cwd: " + run.cwd + " is not a directory");
    return;
  }
  auto check_program = [&](const std::string& program, const std::string& field) {
    if (program.find('/') == std::string::npos) {
      // Looked up in keel's PATH when run: a name not found now would fail every call.
      const std::string search = SearchPath();
      if (!OnPath(program, search)) {
        problems->push_back(where + "." + field + "[0]: " + program +
                            " is not an executable file in any directory of keel's PATH (" +
                            search +
                            "); hosts start keel with a short PATH: give the program's "
                            "absolute path");
      }
      return;
    }
    fs::path full(program);
    if (full.is_relative()) full = fs::path(run.cwd) / full;
    if (access(full.c_str(), X_OK) != 0) {
      problems->push_back(where + "." + field + "[0]: " + full.lexically_normal().string() +
                          " is not an executable file (relative paths start from " +
                          (where.size() >= 4 && where.compare(where.size() - 4, 4, ".run") == 0
                               ? "run.cwd)"
                               : "its cwd)"));
    }
  };
  check_program(run.argv[0], "command");
  if (run.lookup) check_program(run.lookup->argv[0], "lookup.command");
}

void ResolveCompletion(const fs::path& base, std::optional<CompletionSpec>& completion,
                       const std::string& where, std::vector<std::string>* problems) {
  if (completion && completion->command) {
    ResolveCommand(base, *completion->command, where, problems);
  }
}

void ResolveResources(const fs::path& base, std::vector<ResourceEntry>& resources,
                      std::vector<std::string>* warnings) {
  for (size_t i = 0; i < resources.size(); ++i) {
    ResourceEntry& entry = resources[i];
    entry.file = Absolute(base, entry.file);
    entry.directory = Absolute(base, entry.directory);
    std::error_code error;
    if (entry.is_mount() && !fs::is_directory(entry.directory, error)) {
      warnings->push_back("resources[" + std::to_string(i) + "] (" + entry.name + ").directory: " +
                          entry.directory + " is not a directory (yet): reads under " +
                          entry.uri_prefix + " fail until it is");
    }
  }
}

void ResolveTemplates(const fs::path& base, std::vector<ResourceTemplateEntry>& templates,
                      std::vector<std::string>* problems) {
  for (size_t i = 0; i < templates.size(); ++i) {
    ResourceTemplateEntry& entry = templates[i];
    const std::string where = "resourceTemplates[" + std::to_string(i) + "] (" + entry.name + ")";
    if (entry.run) ResolveCommand(base, *entry.run, where + ".run", problems);
    for (auto& [variable, completion] : entry.completions) {
      if (completion.command) {
        ResolveCommand(base, *completion.command, where + ".complete." + variable, problems);
      }
    }
  }
}

void ResolvePrompts(const fs::path& base, std::vector<PromptEntry>& prompts,
                    std::vector<std::string>* problems) {
  for (size_t i = 0; i < prompts.size(); ++i) {
    PromptEntry& entry = prompts[i];
    const std::string where = "prompts[" + std::to_string(i) + "] (" + entry.name + ")";
    for (size_t a = 0; a < entry.arguments.size(); ++a) {
      PromptArgument& argument = entry.arguments[a];
      ResolveCompletion(
          base, argument.completion,
          where + ".arguments[" + std::to_string(a) + "] (" + argument.name + ").complete",
          problems);
    }
    for (PromptMessage& message : entry.messages) {
      message.image_file = Absolute(base, message.image_file);
    }
  }
}

}  // namespace

void ResolveCatalogPaths(const fs::path& base, Catalog& catalog, std::vector<std::string>* problems,
                         std::vector<std::string>* warnings) {
  for (size_t i = 0; i < catalog.tools.size(); ++i) {
    CatalogEntry& entry = catalog.tools[i];
    if (!entry.run) continue;
    ResolveCommand(base, *entry.run, "tools[" + std::to_string(i) + "] (" + entry.name + ").run",
                   problems);
  }
  ResolveResources(base, catalog.resources, warnings);
  ResolveTemplates(base, catalog.resource_templates, problems);
  ResolvePrompts(base, catalog.prompts, problems);
}

}  // namespace keel
