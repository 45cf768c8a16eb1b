#include "server/surface/text_substitution.h"

#include <cctype>

namespace keel {
namespace {

bool IsReferenceName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::string SubstituteArguments(const std::string& text, const nlohmann::json& values) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out.push_back(c);
      ++i;
      continue;
    }
    if (c == '{') {
      const size_t close = text.find('}', i + 1);
      const std::string name =
          close == std::string::npos ? std::string() : text.substr(i + 1, close - i - 1);
      if (IsReferenceName(name)) {
        const auto it = values.is_object() ? values.find(name) : values.end();
        if (it != values.end() && it->is_string()) out += it->get<std::string>();
        i = close;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace keel
