// Attempt ids (RET-2): every attempt of a call gets its own id under the call's one intent
// id, "<intent id>/<attempt number>" with attempts numbered from 1. Pure.
#pragma once

#include <string>
#include <string_view>

namespace keel {

inline std::string AttemptId(std::string_view intent_id, int attempt) {
  std::string id(intent_id);
  id += '/';
  id += std::to_string(attempt);
  return id;
}

}  // namespace keel
