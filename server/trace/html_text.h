// HTML text for `keel trace report` (trace_report.h): everything a trace file says is
// untrusted (tool names, keys, error texts come from clients and tools), so every string
// from it passes HtmlEscape before it reaches the page, in text and in attribute values.
//
// Pure functions. Input is UTF-8 (the JSON parser checked it); output is too.
// Written here: five characters to replace; a library for that would cost more than it saves.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace keel {

// & < > " ' replaced by their character references; safe in element text and in a quoted
// attribute value. Control characters other than tab and newline become U+FFFD (HTML forbids
// them, and a browser would report a parse error).
std::string HtmlEscape(std::string_view text);

// `text` cut to at most `max_bytes` bytes at a UTF-8 character boundary, with "…" appended
// when it was cut (so a megabyte-long tool name cannot swamp the page).
std::string Clip(std::string_view text, size_t max_bytes);

}  // namespace keel
