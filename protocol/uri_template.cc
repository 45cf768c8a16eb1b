#include "protocol/uri_template.h"

#include <set>
#include <utility>

#include "protocol/utf8.h"

namespace keel {
namespace {

using Part = uri_template_internal::Part;

// RFC 6570 §3.2.1, table of operator behaviour (level 3).
struct OpSpec {
  char first;         // prefix before the first value; 0 for none
  char sep;           // between values
  bool named;         // name=value pairs
  const char* ifemp;  // after the name when the value is empty
  bool reserved;      // keep reserved characters and %XX triplets
};

OpSpec SpecFor(char op) {
  switch (op) {
    case '+':
      return {0, ',', false, "", true};
    case '#':
      return {'#', ',', false, "", true};
    case '.':
      return {'.', '.', false, "", false};
    case '/':
      return {'/', '/', false, "", false};
    case ';':
      return {';', ';', true, "", false};
    case '?':
      return {'?', '&', true, "=", false};
    case '&':
      return {'&', '&', true, "=", false};
    default:
      return {0, ',', false, "", false};
  }
}

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

bool IsUnreserved(char c) { return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

bool IsReserved(char c) {
  return std::string_view(":/?#[]@!$&'()*+,;=").find(c) != std::string_view::npos;
}

// RFC 6570 §2.3: varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded.
bool IsVarName(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '%') {
      if (i + 2 >= name.size() || !IsHex(name[i + 1]) || !IsHex(name[i + 2])) return false;
      i += 2;
    } else if (c == '.') {
      if (name[i + 1] == '.') return false;
    } else if (!IsAlnum(c) && c != '_') {
      return false;
    }
  }
  return true;
}

std::string Encode(std::string_view value, bool reserved) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    const bool triplet =
        c == '%' && i + 2 < value.size() && IsHex(value[i + 1]) && IsHex(value[i + 2]);
    if (IsUnreserved(c) || (reserved && (IsReserved(c) || triplet))) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kDigits[byte >> 4];
      out += kDigits[byte & 0xF];
    }
  }
  return out;
}

std::optional<std::string> PercentDecode(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '%') {
      out += raw[i];
      continue;
    }
    if (i + 2 >= raw.size() || !IsHex(raw[i + 1]) || !IsHex(raw[i + 2])) return std::nullopt;
    out += static_cast<char>(HexValue(raw[i + 1]) * 16 + HexValue(raw[i + 2]));
    i += 2;
  }
  if (!IsValidUtf8(out)) return std::nullopt;
  return out;
}

std::string AtOffset(std::string_view what, size_t offset) {
  return std::string(what) + " at offset " + std::to_string(offset);
}

// Parses the inside of `{...}` (which starts at `offset`) into `part`.
bool ParseExpression(std::string_view body, size_t offset, Part* part, std::string* error) {
  if (body.empty()) {
    *error = AtOffset("empty expression", offset);
    return false;
  }
  const char op = body.front();
  if (std::string_view("+#./;?&").find(op) != std::string_view::npos) {
    part->op = op;
    body.remove_prefix(1);
  } else if (std::string_view("=,!@|").find(op) != std::string_view::npos) {
    *error =
        AtOffset(std::string("unsupported operator '") + op + "' (reserved by RFC 6570)", offset);
    return false;
  }
  size_t start = 0;
  while (true) {
    const size_t comma = body.find(',', start);
    const std::string_view spec = body.substr(start, comma - start);
    if (!spec.empty() && spec.back() == '*') {
      *error = AtOffset("explode modifier '*' (RFC 6570 level 4) is not supported", offset);
      return false;
    }
    if (spec.find(':') != std::string_view::npos) {
      *error = AtOffset("prefix modifier ':' (RFC 6570 level 4) is not supported", offset);
      return false;
    }
    if (!IsVarName(spec)) {
      *error = AtOffset("bad variable name '" + std::string(spec) + "' in the expression", offset);
      return false;
    }
    part->names.emplace_back(spec);
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

void ExpandExpression(const Part& part, const UriTemplate::Values& values, std::string* out) {
  const OpSpec spec = SpecFor(part.op);
  bool first = true;
  for (const std::string& name : part.names) {
    const auto it = values.find(name);
    if (it == values.end()) continue;
    if (first && spec.first != 0) *out += spec.first;
    if (!first) *out += spec.sep;
    first = false;
    if (spec.named) {
      *out += name;
      if (it->second.empty()) {
        *out += spec.ifemp;
        continue;
      }
      *out += '=';
    }
    *out += Encode(it->second, spec.reserved);
  }
}

// Whether `c` may appear in the raw text an expression with operator `op` matches (rule 2).
bool InRun(char op, char c) {
  switch (op) {
    case '+':
    case '#':
      return true;
    case '/':
      return c != '?' && c != '#';
    case '?':
    case '&':
      return c != '#';
    default:
      return c != '/' && c != '?' && c != '#';
  }
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    pieces.push_back(text.substr(start, at - start));
    if (at == std::string_view::npos) return pieces;
    start = at + 1;
  }
}

using Assignments = std::vector<std::pair<std::string, std::string>>;

// The decoded value of `raw` for operator `op` (rule 5), or nullopt.
std::optional<std::string> DecodeFor(char op, std::string_view raw) {
  std::optional<std::string> value = PercentDecode(raw);
  const bool segment = op == 0 || op == '.' || op == '/' || op == ';';
  if (value && segment && value->find('/') != std::string::npos) return std::nullopt;
  return value;
}

// Rule 4, positional: `content` (after the prefix) holds the values in order.
bool AssignPositional(const Part& part, std::string_view content, Assignments* out) {
  const OpSpec spec = SpecFor(part.op);
  // One variable of {var}, {+var} or {#var} takes the whole run, separators included
  // ({id} matches "a,b"); the values of {.var} and {/var} never contain their separator.
  const bool whole = part.names.size() == 1 && spec.sep == ',';
  std::vector<std::string_view> raw =
      whole ? std::vector<std::string_view>{content} : Split(content, spec.sep);
  if (raw.size() > part.names.size()) return false;
  for (size_t i = 0; i < raw.size(); ++i) {
    std::optional<std::string> value = DecodeFor(part.op, raw[i]);
    if (!value) return false;
    out->emplace_back(part.names[i], std::move(*value));
  }
  return true;
}

// Rule 4, named: `content` (after the prefix) holds name=value pairs in any order.
bool AssignNamed(const Part& part, std::string_view content, Assignments* out) {
  const OpSpec spec = SpecFor(part.op);
  std::set<std::string_view> seen;
  for (std::string_view pair : Split(content, spec.sep)) {
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos && part.op != ';') return false;
    const std::string_view name = pair.substr(0, eq);
    const std::string_view raw = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    bool known = false;
    for (const std::string& n : part.names) known = known || n == name;
    if (!known || !seen.insert(name).second) return false;
    std::optional<std::string> value = DecodeFor(part.op, raw);
    if (!value) return false;
    out->emplace_back(std::string(name), std::move(*value));
  }
  return true;
}

// Backtracking matcher of rule 3. `failed_` memoises (part, position) pairs from which the
// rest cannot match; sound only when no variable repeats (rule 6 makes the outcome depend
// on earlier bindings).
class Matcher {
 public:
  Matcher(const std::vector<Part>& parts, std::string_view uri, bool memo)
      : parts_(parts), uri_(uri), memo_(memo) {
    if (memo_) failed_.assign((parts.size() + 1) * (uri.size() + 1), false);
  }

  bool From(size_t index, size_t pos) {
    if (index == parts_.size()) return pos == uri_.size();
    const size_t key = Key(index, pos);
    if (memo_ && failed_[key]) return false;
    const Part& part = parts_[index];
    const bool ok = part.literal ? MatchLiteral(index, pos) : MatchExpression(index, pos);
    if (!ok && memo_) failed_[key] = true;
    return ok;
  }

  UriTemplate::Values& values() { return values_; }

 private:
  size_t Key(size_t index, size_t pos) const { return index * (uri_.size() + 1) + pos; }

  bool MatchLiteral(size_t index, size_t pos) {
    const std::string& text = parts_[index].text;
    return uri_.substr(pos, text.size()) == text && From(index + 1, pos + text.size());
  }

  bool MatchExpression(size_t index, size_t pos) {
    const Part& part = parts_[index];
    const OpSpec spec = SpecFor(part.op);
    size_t start = pos;
    if (spec.first != 0) {
      if (pos < uri_.size() && uri_[pos] == spec.first) {
        start = pos + 1;
      } else {
        return From(index + 1, pos);  // all undefined
      }
    }
    size_t end = start;
    while (end < uri_.size() && InRun(part.op, uri_[end])) ++end;
    // Simple and reserved expressions need a character; a prefix alone may carry an empty
    // value ("/" for {/var} = "").
    const size_t shortest = spec.first != 0 ? start : start + 1;
    for (size_t stop = end + 1; stop-- > shortest;) {
      // Skip, before decoding, an end the memo already knows the rest cannot follow: this
      // is what keeps the whole match quadratic.
      if (memo_ && failed_[Key(index + 1, stop)]) continue;
      if (TryContent(index, uri_.substr(start, stop - start), stop)) return true;
    }
    return spec.first != 0 && From(index + 1, pos);  // prefixed: may match nothing
  }

  bool TryContent(size_t index, std::string_view content, size_t next) {
    const Part& part = parts_[index];
    Assignments assigned;
    const bool parsed = SpecFor(part.op).named ? AssignNamed(part, content, &assigned)
                                               : AssignPositional(part, content, &assigned);
    if (!parsed) return false;
    std::vector<std::string> added;
    bool consistent = true;
    for (auto& [name, value] : assigned) {
      const auto [it, inserted] = values_.emplace(name, value);
      if (inserted) {
        added.push_back(name);
      } else if (it->second != value) {
        consistent = false;  // rule 6
        break;
      }
    }
    if (consistent && From(index + 1, next)) return true;
    for (const std::string& name : added) values_.erase(name);
    return false;
  }

  const std::vector<Part>& parts_;
  std::string_view uri_;
  bool memo_;
  std::vector<bool> failed_;
  UriTemplate::Values values_;
};

}  // namespace

std::optional<UriTemplate> UriTemplate::Parse(std::string_view text, std::string* error) {
  UriTemplate result;
  result.text_ = std::string(text);
  Part literal{true, "", 0, {}};
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '}') {
      *error = AtOffset("'}' outside an expression", i);
      return std::nullopt;
    }
    if (text[i] != '{') {
      literal.text += text[i++];
      continue;
    }
    const size_t close = text.find_first_of("{}", i + 1);
    if (close == std::string_view::npos || text[close] == '{') {
      *error = AtOffset("unclosed '{'", i);
      return std::nullopt;
    }
    if (!literal.text.empty()) result.parts_.push_back(std::exchange(literal, Part{true}));
    Part expression;
    if (!ParseExpression(text.substr(i + 1, close - i - 1), i, &expression, error)) {
      return std::nullopt;
    }
    result.parts_.push_back(std::move(expression));
    i = close + 1;
  }
  if (!literal.text.empty()) result.parts_.push_back(std::move(literal));
  std::set<std::string> seen;
  for (const Part& part : result.parts_) {
    for (const std::string& name : part.names) {
      if (!seen.insert(name).second) result.repeats_variable_ = true;
    }
  }
  return result;
}

std::vector<std::string> UriTemplate::VariableNames() const {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const Part& part : parts_) {
    for (const std::string& name : part.names) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

std::string UriTemplate::Expand(const Values& values) const {
  std::string out;
  for (const Part& part : parts_) {
    if (part.literal) {
      out += part.text;
    } else {
      ExpandExpression(part, values, &out);
    }
  }
  return out;
}

std::optional<UriTemplate::Values> UriTemplate::Match(std::string_view uri) const {
  if (uri.size() > kMaxMatchBytes) return std::nullopt;
  Matcher matcher(parts_, uri, !repeats_variable_);
  if (!matcher.From(0, 0)) return std::nullopt;
  return std::move(matcher.values());
}

}  // namespace keel
