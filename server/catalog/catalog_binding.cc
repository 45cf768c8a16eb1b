#include "server/catalog/catalog_binding.h"

#include <filesystem>
#include <map>
#include <optional>

#include "protocol/text_file.h"
#include "server/catalog/builtin_catalog.h"
#include "server/catalog/catalog_paths.h"
#include "server/catalog/catalog_spec.h"

namespace keel {
namespace {

// An implementation presented under its catalog entry's spec.
class CatalogTool final : public Tool {
 public:
  CatalogTool(ToolSpec spec, std::unique_ptr<Tool> impl)
      : spec_(std::move(spec)), impl_(std::move(impl)) {
    // Only a read runs on the loop: a write must pass the kill switch and the retry rules,
    // which live on the worker path.
    spec_.runs_on_loop = impl_->spec().runs_on_loop && !IsWrite(spec_.effect);
    spec_.kill_switch_in_transaction = impl_->spec().kill_switch_in_transaction;
  }
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override { return impl_->Call(ctx); }
  // The implementation fingerprints the intent arguments, as its calls did.
  Reconciled Reconcile(const Json& arguments, const Json& meta) override {
    return impl_->Reconcile(IntentArguments(arguments, spec_.key_components), meta);
  }

 private:
  ToolSpec spec_;
  std::unique_ptr<Tool> impl_;
};

std::string Where(size_t index, const std::string& name) {
  return "tools[" + std::to_string(index) + "] (" + name + ")";
}

}  // namespace

CatalogLoad LoadCatalogFile(const std::string& path, CatalogMode mode) {
  if (path.empty() && mode == CatalogMode::kOverlay) return CatalogLoad{Catalog{}, {}, {}};
  if (path.empty()) return LoadCatalog(BuiltinCatalogJson());
  std::error_code error;
  const std::filesystem::path base = std::filesystem::absolute(path, error).parent_path();
  std::string why;
  const std::optional<std::string> text = ReadTextFile(path, &why);
  if (!text) {
    CatalogLoad failed;
    failed.unreadable = true;
    failed.problems.push_back(path + ": cannot be read (" + why + ")");
    return failed;
  }
  CatalogLoad load = LoadCatalog(*text, mode);
  if (!load.catalog) return load;
  ResolveCatalogPaths(base, *load.catalog, &load.problems, &load.warnings);
  if (!load.problems.empty()) load.catalog.reset();
  return load;
}

BoundCatalog BindCatalog(const Catalog& catalog, std::vector<std::unique_ptr<Tool>> implementations,
                         const CommandToolFactory& make_command) {
  std::map<std::string, size_t> by_name;  // into implementations; sorted for the message
  for (size_t i = 0; i < implementations.size(); ++i) {
    by_name.emplace(implementations[i]->spec().name, i);
  }
  std::string known;
  for (const auto& [name, index] : by_name) known += (known.empty() ? "" : ", ") + name;

  BoundCatalog bound;
  for (size_t i = 0; i < catalog.tools.size(); ++i) {
    const CatalogEntry& entry = catalog.tools[i];
    if (entry.run) {
      std::unique_ptr<Tool> tool =
          make_command ? make_command(SpecFor(entry), *entry.run) : nullptr;
      if (tool) {
        bound.tools.push_back(std::move(tool));
      } else {
        bound.problems.push_back(Where(i, entry.name) +
                                 ".run: command tools are not available here");
      }
      continue;
    }
    const auto it = by_name.find(entry.name);
    std::unique_ptr<Tool>* impl = it == by_name.end() ? nullptr : &implementations[it->second];
    if (impl == nullptr || !*impl) {
      bound.problems.push_back(Where(i, entry.name) +
                               ": keel has no implementation of that name (it has: " + known + ")");
      continue;
    }
    if (IsWrite((*impl)->spec().effect) && !IsWrite(entry.effect)) {
      bound.problems.push_back(
          Where(i, entry.name) + ".effect: \"" + std::string(EffectClassName(entry.effect)) +
          "\" but the tool writes (" + std::string(EffectClassName((*impl)->spec().effect)) +
          "): declaring it a read would let the kill switch and retries treat it as safe");
      continue;
    }
    bound.tools.push_back(std::make_unique<CatalogTool>(SpecFor(entry), std::move(*impl)));
  }
  for (auto& impl : implementations) {
    if (impl) bound.unbound.push_back(std::move(impl));  // in the order given
  }
  if (!bound.problems.empty()) bound.tools.clear();
  return bound;
}

}  // namespace keel
