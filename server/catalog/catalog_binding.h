// Catalog binding: the tools keel serves are the catalog's entries (--catalog FILE, or the
// built-in demo catalog), each bound by name to one of keel's implementations. The entry
// decides everything a client and the pipeline see — name, title, description, schemas,
// effect class and derived annotations, backend, timeouts, retry, key components, approval,
// taskSupport, result TTL; the implementation only runs the call.
//
// Rules (BindCatalog reports every violation, each naming the tool):
//  1. Every entry names an implementation keel has, or has a `run` command, which
//     `make_command` turns into a tool; other implementations are not served.
//  2. An implementation that writes (its own spec's effect is a write class) may not be
//     declared a read: the kill switch and the retry rules would then treat a write as safe.
//  3. The implementation's own spec is not consulted otherwise (the catalog is the authority
//     on the effect, RET-3), except runs_on_loop, which is a property of the code (kept for
//     reads only: a write goes through the worker path, where the kill switch is checked).
// Thread-safety: BindCatalog runs once at start-up. The tools it returns are like any Tool.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/catalog/catalog.h"
#include "server/catalog/tool.h"

namespace keel {

// Reads and loads `path` (a file that cannot be read is one problem); an empty path is the
// built-in demo catalog. Relative paths (a command's cwd, which defaults to the catalog
// file's directory; resource files and directories; prompt images) are made absolute
// against the catalog file's directory, and commands are checked (catalog_paths.h).
// With CatalogMode::kOverlay (`keel wrap`) the file is an overlay (catalog.h), and an empty
// path is no overlay: an empty Catalog, every upstream tool as the upstream lists it.
CatalogLoad LoadCatalogFile(const std::string& path, CatalogMode mode = CatalogMode::kServe);

struct BoundCatalog {
  std::vector<std::unique_ptr<Tool>> tools;    // in catalog order; empty when problems
  std::vector<std::unique_ptr<Tool>> unbound;  // implementations the catalog does not name
  std::vector<std::string> problems;
};

// Makes the tool of an entry with `run` (its spec is SpecFor(entry)); null: keel cannot
// serve command tools here (each such entry is a problem).
using CommandToolFactory =
    std::function<std::unique_ptr<Tool>(ToolSpec spec, const CommandSpec& command)>;

// `implementations` are consumed: each ends in `tools` (wrapped) or in `unbound`.
BoundCatalog BindCatalog(const Catalog& catalog, std::vector<std::unique_ptr<Tool>> implementations,
                         const CommandToolFactory& make_command = nullptr);

}  // namespace keel
