// Text substitution for prompt messages and resource template texts: "{name}" (name matching
// ^[A-Za-z_][A-Za-z0-9_]*$) is replaced by the string value of `name` in `values`, or by ""
// when it has none (an optional prompt argument not given); "{{" and "}}" are literal braces;
// any other brace is kept as it is. One pass: a value is never substituted again. Pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace keel {

std::string SubstituteArguments(const std::string& text, const nlohmann::json& values);

}  // namespace keel
