// Completion: completion/complete's values from a catalog completion (surface_entries.h
// CompletionSpec): a static list filtered by what the user typed, or a command's lines. Pure.
//
//  1. A static list keeps the values that start with `typed`, compared case-insensitively
//     in ASCII (a user typing "ap" wants "API"), in the catalog's order.
//  2. Every answer holds at most kMaxCompletionValues values; `total` is how many matched and
//     hasMore says whether some were cut.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/mcp_surface_types.h"

namespace keel {

CompleteResult CompleteFromList(const std::vector<std::string>& values, std::string_view typed);
// A command's values (it filtered them itself), capped (rule 2).
CompleteResult CappedCompletion(std::vector<std::string> values);

}  // namespace keel
