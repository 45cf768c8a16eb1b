// The MCP tool name rule, ^[a-zA-Z0-9_-]{1,64}$ (hosts reject anything else); keel applies it
// to backend names too. Pure.
#pragma once

#include <string_view>

namespace keel {

bool IsValidToolName(std::string_view name);

}  // namespace keel
