// Bounded JSON: the one rule for JSON keel did not write itself — a client's line, a command's
// stdout, progress line or lookup answer, a catalog file, a stored ledger, task or policy row,
// a trace file, any tool's result (and, in wrap mode, an upstream server's answers).
//
// Parsing nests no deeper than the parser's limit, but copying, comparing, validating and
// dumping a json value recurse once per level: a command that printed {"a":[[[...]]]} 70,000
// levels deep crashed keel in the serializer. So nothing deeper than kMaxJsonDepth
// is let in: text is measured before it is parsed (ParseBoundedJson), and a value built by
// in-process code is measured, without recursion, before anything copies or encodes it
// (JsonTooDeep).
//
// Pure functions, reentrant; never throw except std::bad_alloc; never recurse beyond
// kMaxJsonDepth levels.
//
// Depth: a scalar is 0, [] and {} are 1, [[1]] is 2 — the depth of JsonNestingDepth.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace keel {

// The deepest nesting keel reads or re-serializes: far above any real message (MCP's own
// messages nest about 10 levels), far below what exhausts a thread's stack.
inline constexpr int kMaxJsonDepth = 128;

enum class JsonProblem {
  kNone,
  kNotJson,  // not one JSON value (json_parser.h: RFC 8259, UTF-8)
  kTooDeep,  // nests deeper than kMaxJsonDepth
};

struct BoundedJson {
  nlohmann::json value;  // the parsed value; null unless problem is kNone
  JsonProblem problem = JsonProblem::kNone;

  bool ok() const { return problem == JsonProblem::kNone; }
};

// `text` parsed by ParseJson (json_parser.h) when it is JSON nested at most kMaxJsonDepth
// levels; the depth is measured first, so a deep text costs one pass and no allocation.
BoundedJson ParseBoundedJson(std::string_view text);

// True when `value` nests deeper than kMaxJsonDepth. It recurses at most kMaxJsonDepth
// levels (it stops there), so it is safe on a value of any depth, and allocates nothing.
bool JsonTooDeep(const nlohmann::json& value);

// For messages: "not JSON", "nested deeper than 128 levels"; "" for kNone.
std::string JsonProblemText(JsonProblem problem);

}  // namespace keel
