#include "protocol/schema_refs.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "protocol/schema_keywords.h"
#include "protocol/schema_values.h"

namespace keel::schema {
namespace {

using nlohmann::json;

void IndexSchema(const json& schema, int depth, SchemaIndex& index) {
  if (depth > kMaxSchemaDepth || !index.schemas.insert(&schema).second) return;
  if (!schema.is_object()) return;
  if (auto anchor = schema.find("$anchor"); anchor != schema.end() && anchor->is_string())
    index.anchors.emplace(anchor->get<std::string>(), &schema);
  ForEachSubschema(schema, [&](const json& sub, const std::string&, const std::string*, bool) {
    IndexSchema(sub, depth + 1, index);
  });
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes of a URI fragment decoded; nullopt for a malformed escape.
std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = HexValue(text[i + 1]);
    const int low = HexValue(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

// The value at JSON pointer `pointer` ("" or "/a/0") in `root`, or null.
const json* FollowPointer(const json& root, std::string_view pointer) {
  const json* at = &root;
  std::size_t pos = 0;
  while (pos < pointer.size()) {
    if (pointer[pos] != '/') return nullptr;
    const std::size_t end = std::min(pointer.find('/', pos + 1), pointer.size());
    std::string token;
    for (std::size_t i = pos + 1; i < end; ++i) {
      if (pointer[i] != '~') {
        token += pointer[i];
      } else if (i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[++i] == '0' ? '~' : '/';
      } else {
        return nullptr;
      }
    }
    if (at->is_object()) {
      auto it = at->find(token);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      // An index: digits, no leading zero, within the array.
      if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0') ||
          token.find_first_not_of("0123456789") != std::string::npos)
        return nullptr;
      const std::size_t i = std::stoul(token);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else {
      return nullptr;
    }
    pos = end;
  }
  return at;
}

// The root's own base URI (its $id without a fragment), or "".
std::string RootBase(const json& root) {
  if (!root.is_object()) return "";
  auto id = root.find("$id");
  if (id == root.end() || !id->is_string()) return "";
  const std::string& text = id->get_ref<const std::string&>();
  return text.substr(0, text.find('#'));
}

// The fragment of `ref` if it refers to this document ("#..." or "<root $id>#..."), else nullopt.
std::optional<std::string_view> LocalFragment(const json& root, const std::string& ref) {
  const std::size_t hash = ref.find('#');
  const std::string_view document = std::string_view(ref).substr(0, std::min(hash, ref.size()));
  if (!document.empty() && document != RootBase(root)) return std::nullopt;
  if (hash == std::string::npos) return std::string_view();
  return std::string_view(ref).substr(hash + 1);
}

}  // namespace

SchemaIndex SchemaIndex::Build(const json& root) {
  SchemaIndex index;
  IndexSchema(root, 0, index);
  return index;
}

bool IsAnchorRef(const json& root, const std::string& ref) {
  const auto fragment = LocalFragment(root, ref);
  return fragment && !fragment->empty() && fragment->front() != '/';
}

RefTarget ResolveRef(const json& root, const std::string& ref, const SchemaIndex* index) {
  const auto fragment = LocalFragment(root, ref);
  if (!fragment) {
    return {nullptr,
            "refers to another document: keel resolves references only inside the schema itself"};
  }
  const auto decoded = PercentDecode(*fragment);
  if (!decoded) return {nullptr, "is not a well-formed URI fragment"};
  if (decoded->empty() || decoded->front() == '/') {
    const json* target = FollowPointer(root, *decoded);
    if (target == nullptr) return {nullptr, "names no location in this schema"};
    return {target, ""};
  }
  if (index == nullptr) return {nullptr, "names an $anchor and no index was built"};
  auto it = index->anchors.find(*decoded);
  if (it == index->anchors.end()) return {nullptr, "names no $anchor in this schema"};
  return {it->second, ""};
}

}  // namespace keel::schema
