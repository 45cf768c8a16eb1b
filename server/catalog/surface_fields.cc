// The fields resources, resource templates and prompts share (surface_catalog.h).
#include <algorithm>
#include <cctype>

#include "server/catalog/surface_catalog.h"

namespace keel {
namespace {

bool IsDigits(std::string_view text, size_t at, size_t count) {
  if (at + count > text.size()) return false;
  return std::all_of(text.begin() + at, text.begin() + at + count,
                     [](char c) { return c >= '0' && c <= '9'; });
}

int NumberAt(std::string_view text, size_t at, size_t count) {
  int value = 0;
  for (size_t i = at; i < at + count; ++i) value = value * 10 + (text[i] - '0');
  return value;
}

// "HH:MM" at `at` within 00:00..23:59.
bool IsClock(std::string_view text, size_t at) {
  return IsDigits(text, at, 2) && text.size() > at + 2 && text[at + 2] == ':' &&
         IsDigits(text, at + 3, 2) && NumberAt(text, at, 2) < 24 && NumberAt(text, at + 3, 2) < 60;
}

// ISO 8601 as MCP's lastModified uses it: a date ("2025-01-12") or a date-time with a zone
// ("2025-01-12T15:00:58Z", "...58.123+01:00"). A time without a zone is refused: clients
// would each read it in their own zone.
bool IsIsoTimestamp(std::string_view text) {
  if (!IsDigits(text, 0, 4) || text.size() < 10 || text[4] != '-' || !IsDigits(text, 5, 2) ||
      text[7] != '-' || !IsDigits(text, 8, 2)) {
    return false;
  }
  const int month = NumberAt(text, 5, 2);
  const int day = NumberAt(text, 8, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  if (text.size() == 10) return true;
  if (text[10] != 'T' || !IsClock(text, 11)) return false;
  size_t at = 16;
  if (at < text.size() && text[at] == ':') {
    if (!IsDigits(text, at + 1, 2) || NumberAt(text, at + 1, 2) > 60) return false;
    at += 3;
    if (at < text.size() && (text[at] == '.' || text[at] == ',')) {
      const size_t start = ++at;
      while (at < text.size() && IsDigits(text, at, 1)) ++at;
      if (at == start) return false;
    }
  }
  if (at < text.size() && text[at] == 'Z') return at + 1 == text.size();
  return at + 6 == text.size() && (text[at] == '+' || text[at] == '-') && IsClock(text, at + 1);
}

bool IsMimeToken(std::string_view token) {
  static constexpr std::string_view kPunctuation = "!#$&^_.+-";
  return !token.empty() && std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           kPunctuation.find(c) != std::string_view::npos;
  });
}

bool IsMimeType(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  size_t end = std::min(text.find(';'), text.size());
  if (std::any_of(text.begin(), text.end(),
                  [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); })) {
    return false;
  }
  while (end > slash + 1 && text[end - 1] == ' ') --end;
  return IsMimeToken(text.substr(0, slash)) && IsMimeToken(text.substr(slash + 1, end - slash - 1));
}

void CheckAudience(ObjectReader& reader) {
  const Json* audience = reader.Find("audience");
  if (audience == nullptr) return;
  if (!audience->is_array()) {
    reader.Problem("audience",
                   "must be an array of \"user\" and \"assistant\", got " + Shown(*audience));
    return;
  }
  for (size_t i = 0; i < audience->size(); ++i) {
    const Json& role = (*audience)[i];
    if (role != "user" && role != "assistant") {
      reader.Problem("audience[" + std::to_string(i) + "]",
                     Shown(role) + " is not one of user, assistant");
    }
  }
}

}  // namespace

std::string SurfaceLabel(std::string_view section, const Json& item, size_t index) {
  std::string label = std::string(section) + "[" + std::to_string(index) + "]";
  if (!item.is_object()) return label;
  const auto name = item.find("name");
  if (name == item.end() || !name->is_string()) return label;
  const std::string& text = name->get_ref<const std::string&>();
  // Long or control-laden names would make the message unreadable: index only.
  const bool usable =
      !text.empty() && text.size() <= 64 && std::none_of(text.begin(), text.end(), [](char c) {
        return std::iscntrl(static_cast<unsigned char>(c));
      });
  if (usable) label += " (" + text + ")";
  return label;
}

bool IsAbsoluteUri(std::string_view uri) {
  const size_t colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= uri.size()) return false;
  if (!std::isalpha(static_cast<unsigned char>(uri[0]))) return false;
  for (size_t i = 1; i < colon; ++i) {
    const char c = uri[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '.' && c != '-') {
      return false;
    }
  }
  return std::none_of(uri.begin(), uri.end(), [](char c) {
    return std::iscntrl(static_cast<unsigned char>(c)) || c == ' ';
  });
}

std::optional<std::string> ReadMimeType(ObjectReader& entry, std::string_view field) {
  auto mime = entry.String(field, false);
  if (mime && !IsMimeType(*mime)) {
    entry.Problem(
        field, Shown(Json(*mime)) + " is not a MIME type (type/subtype, e.g. " + "text/markdown)");
    return std::nullopt;
  }
  return mime;
}

Json ReadAnnotations(ObjectReader& entry) {
  const Json* object = entry.Object("annotations");
  if (object == nullptr) return nullptr;
  ObjectReader reader = entry.Nested(*object, "annotations");
  const size_t before = reader.problem_count();
  reader.OnlyFields({"audience", "priority", "lastModified"});
  CheckAudience(reader);
  if (const Json* priority = reader.Find("priority")) {
    if (!priority->is_number() || *priority < 0 || *priority > 1) {
      reader.Problem("priority", "must be a number from 0 to 1, got " + Shown(*priority));
    }
  }
  if (auto modified = reader.String("lastModified", false);
      modified && !IsIsoTimestamp(*modified)) {
    reader.Problem("lastModified", Shown(Json(*modified)) +
                                       " is not an ISO 8601 date or date-time with a zone (e.g. "
                                       "2025-01-12T15:00:58Z)");
  }
  if (reader.problem_count() != before) return nullptr;
  return *object;
}

std::optional<CompletionSpec> ReadCompletion(ObjectReader& owner, std::string_view field) {
  const Json* value = owner.Find(field);
  if (value == nullptr) return std::nullopt;
  CompletionSpec completion;
  if (value->is_object()) {
    completion.command = ReadCommandSpec(owner, field, {"argument", "value"}, "a completion input");
    if (!completion.command) return std::nullopt;
    return completion;
  }
  if (!value->is_array() || value->empty() || value->size() > kMaxCompletionValues) {
    owner.Problem(field, "must be a non-empty array of at most " +
                             std::to_string(kMaxCompletionValues) +
                             " strings or a {\"command\": [...]} object, got " + Shown(*value));
    return std::nullopt;
  }
  const size_t before = owner.problem_count();
  for (size_t i = 0; i < value->size(); ++i) {
    const Json& item = (*value)[i];
    if (!item.is_string()) {
      owner.Problem(std::string(field) + "[" + std::to_string(i) + "]",
                    "must be a string, got " + Shown(item));
      continue;
    }
    completion.values.push_back(item.get<std::string>());
  }
  if (owner.problem_count() != before) return std::nullopt;
  return completion;
}

bool IsBase64(std::string_view text) {
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  return std::all_of(text.begin(), text.end() - static_cast<std::ptrdiff_t>(padding), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/';
  });
}

}  // namespace keel
