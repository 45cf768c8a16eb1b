#include "server/catalog/object_reader.h"

namespace keel {

std::string Shown(const Json& value) {
  constexpr size_t kMaxShown = 60;
  std::string text = value.dump();
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

std::string Joined(std::initializer_list<std::string_view> words) {
  std::string out;
  for (std::string_view word : words) {
    if (!out.empty()) out += ", ";
    out += word;
  }
  return out;
}

void ObjectReader::OnlyFields(std::initializer_list<std::string_view> known) {
  for (const auto& item : object_.items()) {
    bool is_known = false;
    for (std::string_view name : known) is_known = is_known || item.key() == name;
    if (!is_known) Problem(item.key(), "unknown field (known: " + Joined(known) + ")");
  }
}

const Json* ObjectReader::Find(std::string_view field) const {
  auto it = object_.find(field);
  return it == object_.end() ? nullptr : &*it;
}

std::optional<std::string> ObjectReader::String(std::string_view field, bool required) {
  const Json* value = Find(field);
  if (value == nullptr) {
    if (required) Problem(field, "is required");
    return std::nullopt;
  }
  if (!value->is_string()) {
    Problem(field, "must be a string, got " + std::string(value->type_name()));
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<size_t> ObjectReader::Choice(std::string_view field,
                                           std::initializer_list<std::string_view> choices,
                                           bool required) {
  const Json* value = Find(field);
  if (value == nullptr) {
    if (required) Problem(field, "is required (one of " + Joined(choices) + ")");
    return std::nullopt;
  }
  if (value->is_string()) {
    size_t index = 0;
    for (std::string_view choice : choices) {
      if (value->get_ref<const std::string&>() == choice) return index;
      ++index;
    }
  }
  Problem(field, Shown(*value) + " is not one of " + Joined(choices));
  return std::nullopt;
}

std::optional<int64_t> ObjectReader::Integer(std::string_view field, int64_t min, int64_t max,
                                             bool required) {
  const Json* value = Find(field);
  if (value == nullptr) {
    if (required) Problem(field, "is required");
    return std::nullopt;
  }
  const bool fits =
      value->is_number_integer() &&
      (value->is_number_unsigned() ? value->get<uint64_t>() <= static_cast<uint64_t>(max)
                                   : value->get<int64_t>() <= max);
  if (fits && value->get<int64_t>() >= min) return value->get<int64_t>();
  Problem(field, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                     ", got " + Shown(*value));
  return std::nullopt;
}

const Json* ObjectReader::Object(std::string_view field) {
  const Json* value = Find(field);
  if (value != nullptr && !value->is_object()) {
    Problem(field, "must be an object, got " + std::string(value->type_name()));
    return nullptr;
  }
  return value;
}

}  // namespace keel
