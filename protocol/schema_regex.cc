#include "protocol/schema_regex.h"

#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <re2/re2.h>

namespace keel::schema {
namespace {

// ECMA-262's \s: WhiteSpace and LineTerminator.
constexpr std::string_view kEcmaSpaces =
    R"(\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF})";

// ECMA-262's long names of Unicode general categories, which RE2 knows only by their short ones
// (\p{Letter} is \p{L}); scripts are spelled \p{Script=Greek} or \p{sc=Greek} in ECMA and
// \p{Greek} in RE2.
constexpr std::pair<std::string_view, std::string_view> kCategoryNames[] = {
    {"Letter", "L"},
    {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"},
    {"Titlecase_Letter", "Lt"},
    {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"},
    {"Mark", "M"},
    {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"},
    {"Enclosing_Mark", "Me"},
    {"Number", "N"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Letter_Number", "Nl"},
    {"Other_Number", "No"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Symbol", "S"},
    {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"},
    {"Separator", "Z"},
    {"Space_Separator", "Zs"},
    {"Other", "C"},
    {"Control", "Cc"},
    {"Format", "Cf"},
    {"Private_Use", "Co"},
};

// The RE2 name of an ECMA \p{...} property, or the name unchanged.
std::string PropertyName(std::string_view name) {
  for (std::string_view prefix : {"General_Category=", "gc=", "Script=", "sc="}) {
    if (name.rfind(prefix, 0) == 0) name.remove_prefix(prefix.size());
  }
  for (const auto& [ecma, re2] : kCategoryNames) {
    if (name == ecma) return std::string(re2);
  }
  return std::string(name);
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Rewrites the escape starting at pattern[i] ('\\'); returns the index of its last character.
std::size_t TranslateEscape(const std::string& pattern, std::size_t i, bool in_class,
                            std::string& out) {
  const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
  if (next == 'u' && i + 2 < pattern.size() && pattern[i + 2] == '{') {
    const std::size_t close = pattern.find('}', i + 3);
    if (close != std::string::npos) {
      out += "\\x" + pattern.substr(i + 2, close - i - 1);  // \u{1F600} -> \x{1F600}
      return close;
    }
  }
  if (next == 'u' && i + 5 < pattern.size() && IsHex(pattern[i + 2]) && IsHex(pattern[i + 3]) &&
      IsHex(pattern[i + 4]) && IsHex(pattern[i + 5])) {
    out += "\\x{" + pattern.substr(i + 2, 4) + "}";
    return i + 5;
  }
  if ((next == 'p' || next == 'P') && i + 2 < pattern.size() && pattern[i + 2] == '{') {
    const std::size_t close = pattern.find('}', i + 3);
    if (close != std::string::npos) {
      out += std::string("\\") + next + "{" +
             PropertyName(std::string_view(pattern).substr(i + 3, close - i - 3)) + "}";
      return close;
    }
  }
  if (next == 's') {
    out += in_class ? std::string(kEcmaSpaces) : "[" + std::string(kEcmaSpaces) + "]";
    return i + 1;
  }
  if (next == 'S' && !in_class) {
    out += "[^" + std::string(kEcmaSpaces) + "]";
    return i + 1;
  }
  out += '\\';
  if (next != '\0') out += next;
  return i + 1;
}

// ECMA-262 spelling to RE2 spelling (see the header); what RE2 cannot do is left for it to
// refuse.
std::string TranslateEcma(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      i = TranslateEscape(pattern, i, in_class, out);
    } else if (in_class) {
      if (c == ']') in_class = false;
      out += c;
    } else if (c == '[') {
      // ECMA's [] matches nothing and [^] any character; in RE2 a ']' first in a class is a
      // literal, so both are spelled out.
      if (pattern.compare(i, 2, "[]") == 0) {
        out += R"([^\x00-\x{10FFFF}])";
        i += 1;
      } else if (pattern.compare(i, 3, "[^]") == 0) {
        out += R"([\x00-\x{10FFFF}])";
        i += 2;
      } else {
        in_class = true;
        out += c;
        if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      }
    } else if (c == '.') {
      out += R"([^\n\r\x{2028}\x{2029}])";  // ECMA's "." stops at every line terminator
    } else if (c == '(' && pattern.compare(i, 3, "(?<") == 0 && i + 3 < pattern.size() &&
               pattern[i + 3] != '=' && pattern[i + 3] != '!') {
      out += "(?P<";  // a named group: RE2 of Debian 12 knows only Python's spelling
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

using Compiled = std::shared_ptr<const re2::RE2>;

class RegexCache {
 public:
  Compiled Find(const std::string& pattern) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = regexes_.find(pattern);
    return it == regexes_.end() ? nullptr : it->second;
  }

  void Add(const std::string& pattern, Compiled regex) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (regexes_.size() >= kMaxCachedRegexes) regexes_.erase(regexes_.begin());
    regexes_.emplace(pattern, std::move(regex));
  }

  std::size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return regexes_.size();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Compiled> regexes_;  // GUARDED_BY(mutex_)
};

RegexCache& Cache() {
  static RegexCache* cache = new RegexCache();  // never destroyed: workers may outlive statics
  return *cache;
}

// Compiles without touching the cache; a regex RE2 refuses comes back with its error.
Compiled Compile(const std::string& pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);  // a bad pattern is reported to the caller, not to stderr
  options.set_never_capture(true);
  options.set_max_mem(kRegexMaxMem);
  return std::make_shared<const re2::RE2>(TranslateEcma(pattern), options);
}

Compiled CompiledFor(const std::string& pattern) {
  if (Compiled cached = Cache().Find(pattern)) return cached;
  Compiled regex = Compile(pattern);
  if (regex->ok()) Cache().Add(pattern, regex);
  return regex;
}

}  // namespace

std::optional<std::string> RegexProblem(const std::string& pattern) {
  Compiled regex = CompiledFor(pattern);
  if (regex->ok()) return std::nullopt;
  return "RE2 cannot check this regular expression (" + regex->error() +
         "): keel matches patterns with RE2, in linear time, which has no backreferences or "
         "lookaround and bounds a compiled regex at " +
         std::to_string(kRegexMaxMem >> 20) + " MiB";
}

std::optional<bool> RegexSearch(const std::string& pattern, const std::string& text) {
  Compiled regex = CompiledFor(pattern);
  if (!regex->ok()) return std::nullopt;
  return re2::RE2::PartialMatch(text, *regex);
}

std::size_t CachedRegexCount() { return Cache().size(); }

}  // namespace keel::schema
