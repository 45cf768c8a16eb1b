// UriTemplate: an RFC 6570 URI Template — the `uriTemplate` of an MCP resource template —
// parsed once, then expanded with values or matched against a URI a client asked to read.
// Owner: whoever parsed it (a value type; copyable). Thread-safety: immutable after Parse,
// so const methods may run on any number of threads at once. Pure: no I/O; never throws.
//
// Supported: levels 1-3 of RFC 6570 — `{var}`, `{+var}`, `{#var}`, and with one or more
// variables `{x,y}`, `{.var}`, `{/var}`, `{;var}`, `{?q,lang}`, `{&var}`. Level 4 modifiers
// (`{var:3}`, `{list*}`) and the reserved operators `= , ! @ |` are a parse error, as are an
// unclosed `{`, a `}` outside an expression, an empty expression and a bad variable name
// (varname: ALPHA / DIGIT / "_" / pct-encoded, dots only between them). Literal text is kept
// as written, in Expand and in Match.
//
// Expansion (RFC 6570 §3.2): a variable absent from the values is undefined and expands to
// nothing; an expression whose variables are all undefined expands to nothing, prefix
// included. Values are strings (no lists or maps). `{var}` and the prefixed operators
// percent-encode everything but unreserved characters; `{+var}` and `{#var}` also keep
// reserved characters and existing %XX triplets.
//
// Matching — RFC 6570 defines none; this is keel's rule:
//  1. The whole URI must match the whole template; literals match byte for byte.
//  2. Each expression matches a run of characters its operator allows, and within it each
//     variable's raw value (before decoding) stops at the operator's separator:
//       {var}      1+ chars, none of / ? #          (multi-var: values split at ",")
//       {+var}     1+ chars, any                    (multi-var: values split at ",")
//       {#var}     "#" then any chars, or nothing   (multi-var: values split at ",")
//       {.var}     "." then chars without / ? # .   (values split at ".")
//       {/var}     "/" then chars without / ? #     (values split at "/")
//       {;var}     ";name=value" or ";name" pairs, chars without / ? #
//       {?var}     "?name=value" pairs joined by "&", any chars but #
//       {&var}     "&name=value" pairs joined by "&", any chars but #
//     So a `{var}` value never contains "/", "?" or "#": `test://t/{id}` does not match
//     `test://t/a/b`. A prefixed expression may match nothing (all its variables undefined).
//  3. Greedy with backtracking: each expression first tries its longest run, then shorter
//     ones, until the rest of the template matches; so the next literal disambiguates
//     (`{name}.json` matches `a.b.json` with name=`a.b`; `{a}-{b}` on `x-y-z` gives
//     a=`x-y`, b=`z`).
//  4. Multi-variable expressions: positional ones ({x,y}, {.x,y}, {/x,y}) fill variables in
//     order — fewer values than variables leaves the trailing ones out of the result, more
//     values is no match. Named ones ({;...}, {?...}, {&...}) accept their variables in any
//     order, each at most once; an unknown or repeated name is no match.
//  5. Values are percent-decoded (for every operator); a bad %XX triplet or a decoded value
//     that is not valid UTF-8 is no match, and so is a decoded "/" (from %2F) in a value of
//     {var}, {.var}, {/var} or {;var}: those are one path segment. Expand(*Match(u)) thus
//     equals u up to percent-encoding.
//  6. A variable named twice in a template must match the same decoded value both times.
//  7. A URI longer than kMaxMatchBytes never matches. Backtracking is memoised, so a match
//     costs at most (expressions x URI length^2) steps — except for a template that repeats
//     a variable, where rule 6 makes the memo unsound; such templates are rare and short.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel {
namespace uri_template_internal {

// One piece of a template: literal text, or an expression `{op names}`. Not part of the API.
struct Part {
  bool literal = false;
  std::string text;                // literal text
  char op = 0;                     // 0 for a simple {var}, or one of + # . / ; ? &
  std::vector<std::string> names;  // the expression's variables
};

}  // namespace uri_template_internal

class UriTemplate {
 public:
  // Longest URI Match considers, in bytes: beyond any real resource URI (PATH_MAX is 4096),
  // and it bounds the backtracking of rule 3 on adversarial templates.
  static constexpr size_t kMaxMatchBytes = 8192;

  using Values = std::map<std::string, std::string, std::less<>>;

  // The parsed template, or nullopt with `*error` saying what is wrong and at which byte
  // offset ("unclosed '{' at offset 7").
  static std::optional<UriTemplate> Parse(std::string_view text, std::string* error);

  // The template as given to Parse.
  const std::string& text() const { return text_; }

  // Variable names in order of first appearance, each once.
  std::vector<std::string> VariableNames() const;

  // The URI for `values` (variables absent from `values` are undefined).
  std::string Expand(const Values& values) const;

  // Variable -> decoded value when `uri` matches (rules 1-7); variables that matched
  // nothing (undefined) are absent. nullopt when it does not match.
  std::optional<Values> Match(std::string_view uri) const;

  using Part = uri_template_internal::Part;

 private:
  UriTemplate() = default;

  std::string text_;
  std::vector<Part> parts_;
  bool repeats_variable_ = false;  // a name appears twice: rule 6 (and no memo in Match)
};

}  // namespace keel
