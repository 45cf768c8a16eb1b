#pragma once
// Schema regexes: JSON Schema's `pattern` and `patternProperties` (ECMA-262 regular expressions)
// matched with RE2.
//
// Why RE2 and not std::regex or a backtracking engine: RE2 matches in time linear in the text
// (an automaton, no backtracking), so a catalog's or an upstream server's regex cannot hang a
// worker — `^(a+)+$` against 30 a's and a "!" takes microseconds instead of minutes — and its
// memory per regex is bounded (kRegexMaxMem). std::regex also recurses per character and can
// overflow the stack on a long string.
//
// Dialect: the ECMA-262 syntax JSON Schema names is translated to RE2's where the two differ
// only in spelling: \uXXXX and \u{X...} become \x{...}, (?<name>...) becomes (?P<name>...),
// \s means ECMA's whitespace (with \v, U+00A0, U+FEFF and Unicode's spaces and line separators).
// Constructs RE2 cannot run in linear time — backreferences (\1, \k<name>), lookahead and
// lookbehind ((?=, (?!, (?<=, (?<!) — repetition counts over 1000, and regexes whose automaton
// would exceed kRegexMaxMem (a Unicode class repeated {1,1000}) make RegexProblem report
// the regex, so such a schema is malformed rather than silently unchecked. Matching is a search
// (unanchored, as JSON Schema says: "^" and "$" anchor), over UTF-8 text by code point; "." is
// ECMA's (any code point but \n, \r, U+2028, U+2029). Known remaining differences: \w, \d and
// \b are RE2's, the same ASCII classes as ECMA's; \S inside a class is RE2's (outside one it
// is ECMA's); Unicode properties: general categories by
// short or long name (\p{L}, \p{Letter}, \p{gc=Lu}) and scripts (\p{Greek}, \p{Script=Greek},
// \p{sc=Greek}) are translated; binary properties and Script_Extensions (\p{Alphabetic},
// \p{scx=Greek}) and Cased_Letter are not in RE2 and are refused.
//
// Caching: ValidateCheckedSchema runs on every tools/call, and compiling a regex costs far more
// than matching a short argument, so compiled regexes are kept in one process-wide cache keyed
// by the pattern text, bounded at kMaxCachedRegexes entries (past that, an arbitrary entry is
// evicted; a catalog with more distinct patterns recompiles some, which is slower but correct).
// Memory: at most kMaxCachedRegexes x kRegexMaxMem (512 MiB) in the worst case of many huge
// patterns, each matched against text that fills its automaton; a typical pattern takes a few KiB.
// One cache rather than one per thread: workers share every tool's patterns, so per-thread
// caches would compile and hold each regex once per worker; the lock is held only for a hash
// lookup (compiling happens outside it) and a compiled RE2 is safe to match concurrently.
//
// Thread-safety: all functions may be called from any thread concurrently (a mutex guards the
// cache). Never throw but std::bad_alloc.
#include <cstddef>
#include <optional>
#include <string>

namespace keel::schema {

constexpr std::size_t kMaxCachedRegexes = 128;  // a bound on memory: at most this many compiled
constexpr long long kRegexMaxMem = 4 << 20;     // bytes of automaton per regex (RE2 max_mem)

// nullopt when RE2 can check `pattern` (an ECMA-262 regex); otherwise why not, e.g.
// "RE2 cannot check this regular expression (invalid perl operator: (?=)".
std::optional<std::string> RegexProblem(const std::string& pattern);

// Whether `pattern` matches somewhere in UTF-8 `text`; nullopt when the pattern has a problem.
std::optional<bool> RegexSearch(const std::string& pattern, const std::string& text);

// The number of compiled regexes in the cache (for tests of the bound).
std::size_t CachedRegexCount();

}  // namespace keel::schema
