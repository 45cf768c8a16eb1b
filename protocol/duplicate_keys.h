// DuplicateKeyFinder: a parser callback for nlohmann::json::parse that reports every key
// written twice in one JSON object. JSON parsers settle a duplicate silently (nlohmann keeps
// the last value), so in a file a person writes — the catalog, the policy — the value that
// counts may not be the one they read: "effect": "unsafe_write", "effect": "read" would load
// a write as a retryable read. The loaders refuse such a file instead.
//
// Use: DuplicateKeyFinder finder; json::parse(text, std::ref(finder)); finder.TakeProblems().
// Each problem names the duplicate by its path: keys joined by ".", array elements by their
// index ("tools[2].effect: appears more than once in its object; write it once").
//
// Pure and single-threaded; one instance per parse. Memory: one frame (its path and keys) per
// open object or array, so callers bound the nesting depth before parsing (JsonNestingDepth).
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace keel {

class DuplicateKeyFinder {
 public:
  // The parser callback: never discards anything (always true).
  bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed);
  // The problems found so far, in the order the duplicates appear in the text.
  std::vector<std::string> TakeProblems() { return std::move(problems_); }

 private:
  struct Frame {
    std::string path;
    bool is_array = false;
    size_t next_index = 0;       // arrays: the index of the next element
    std::set<std::string> keys;  // objects: the keys seen so far
    std::string key;             // objects: the key whose value comes next
  };
  // The path of the value starting now: the open object's current key, or the open array's
  // next index (which it takes).
  std::string TakeChildPath();

  std::vector<Frame> frames_;
  std::vector<std::string> problems_;
};

}  // namespace keel
