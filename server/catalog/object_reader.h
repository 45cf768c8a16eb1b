// ObjectReader: reads the fields of one JSON object of a configuration file (the catalog),
// reporting every problem as "<path>.<field>: <what>" into a shared list instead of stopping
// at the first, so a person fixes a file in one pass.
//
// Thread-safety: none needed; a reader lives on one thread for one load. It refers to the
// object and the problem list it was given, which must outlive it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// A value as it appears in a message: its JSON text, shortened so that a huge value cannot
// drown the other problems.
std::string Shown(const Json& value);
// "a, b, c".
std::string Joined(std::initializer_list<std::string_view> words);

class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string path, std::vector<std::string>* problems)
      : object_(object), path_(std::move(path)), problems_(problems) {}

  const std::string& path() const { return path_; }
  std::string PathOf(std::string_view field) const { return path_ + "." + std::string(field); }
  void Problem(std::string_view field, const std::string& what) {
    problems_->push_back(PathOf(field) + ": " + what);
  }
  size_t problem_count() const { return problems_->size(); }

  // Every field not in `known` is a problem: a misspelt field must not be silently ignored.
  void OnlyFields(std::initializer_list<std::string_view> known);
  const Json* Find(std::string_view field) const;
  // A string; absent is fine (nullopt) unless required.
  std::optional<std::string> String(std::string_view field, bool required);
  // One of `choices`, returned as its index.
  std::optional<size_t> Choice(std::string_view field,
                               std::initializer_list<std::string_view> choices, bool required);
  // An integer in [min, max]; absent is fine (nullopt) unless required.
  std::optional<int64_t> Integer(std::string_view field, int64_t min, int64_t max, bool required);
  // A nested object; a problem if present and not an object.
  const Json* Object(std::string_view field);
  // A reader for a nested object, reporting into the same list.
  ObjectReader Nested(const Json& object, std::string_view field) const {
    return ObjectReader(object, PathOf(field), problems_);
  }

 private:
  const Json& object_;
  std::string path_;
  std::vector<std::string>* problems_;
};

}  // namespace keel
