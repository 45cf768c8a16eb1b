#include "server/surface/completion.h"

#include <algorithm>
#include <cctype>

#include "server/catalog/surface_entries.h"

namespace keel {
namespace {

bool StartsWithIgnoringCase(std::string_view value, std::string_view prefix) {
  if (prefix.size() > value.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), value.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

}  // namespace

CompleteResult CappedCompletion(std::vector<std::string> values) {
  CompleteResult result;
  result.total = values.size();
  result.has_more = values.size() > kMaxCompletionValues;
  if (result.has_more) values.resize(kMaxCompletionValues);
  result.values = std::move(values);
  return result;
}

CompleteResult CompleteFromList(const std::vector<std::string>& values, std::string_view typed) {
  std::vector<std::string> matching;
  for (const std::string& value : values) {
    if (StartsWithIgnoringCase(value, typed)) matching.push_back(value);
  }
  return CappedCompletion(std::move(matching));
}

}  // namespace keel
