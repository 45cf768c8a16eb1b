// ParseJson: a strict RFC 8259 parser that builds the very value nlohmann::json::parse()
// would build — same acceptance, same value, same number types (unsigned, integer, float) —
// in about a third of the instructions. It exists for speed only: nlohmann's lexer was the
// largest single cost of a tools/call (an echo request took ~14k instructions to parse).
// Callers use it through ParseBoundedJson (bounded_json.h), which measures depth first.
// JsonNestingDepth: how deep a JSON text nests, measured before parsing it. Parsing with
// nlohmann does not recurse, but copying, dumping and comparing the value does; every loader
// of JSON text (ParseBoundedJson, the catalog, the policy file) refuses text nested deeper
// than it can handle before anything recursive touches it.
//
// Pure function, reentrant; never throws except std::bad_alloc.
// Equivalence with nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false,
// /*ignore_comments=*/false) is the contract, but for the two differences below; it is checked
// by a differential test (json_parser_test) and by fuzz_jsonrpc:
//  1. A leading UTF-8 byte order mark is skipped; whitespace is space, tab, LF and CR; nothing
//     but whitespace may follow the value — up to a NUL byte, which nlohmann takes for the end
//     of the input (so "1\0junk" is 1).
//  2. Strings must be well-formed UTF-8 without raw control characters; escapes are the
//     JSON ones; \u0000 yields a NUL byte; a surrogate pair (\ud83d\ude00) yields its one
//     character.
//  3. A number without fraction or exponent is an unsigned integer (no sign) or a signed
//     integer (leading '-') when it fits 64 bits, else a double; a double that overflows
//     is an error.
//  4. A repeated object key keeps the last value.
// Two deliberate differences:
//  - Arrays and objects nested deeper than `max_depth` fail (the parser recurses). Callers
//    measure the depth first (bounded_json.h).
//  - A lone surrogate escape — a high one (\ud800-\udbff) not followed by an escaped low
//    one, or a low one (\udc00-\udfff) not preceded by a high one — reads as U+FFFD, where
//    nlohmann fails. JSON.stringify writes one for a truncated emoji; failing would turn the
//    whole request into -32700 without its id, so it is replaced, as Go's encoding/json,
//    Python's 'replace' and WHATWG's TextDecoder do. Pairs are unchanged.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace keel {

// Returns false where nlohmann would report a parse error; `out` is then unspecified.
bool ParseJson(std::string_view text, int max_depth, nlohmann::json& out);

// The deepest nesting of [ and { outside strings, in one pass without allocating: never less
// than the depth of the value parsing `text` gives (a scalar is 0), exactly it for JSON text.
int JsonNestingDepth(std::string_view text);

}  // namespace keel
