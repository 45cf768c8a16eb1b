#include "protocol/json_parser.h"

#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace keel {
namespace {

using Json = nlohmann::json;

// What an unpaired surrogate escape reads as (U+FFFD REPLACEMENT CHARACTER).
constexpr uint32_t kReplacementCharacter = 0xFFFD;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the well-formed UTF-8 sequence at `p` (lead byte >= 0x80), or 0. The ranges are
// those of RFC 3629 (no overlongs, no surrogates, nothing above U+10FFFF), as nlohmann checks.
size_t Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  unsigned char lo = 0x80;  // allowed range of the second byte
  unsigned char hi = 0xBF;
  size_t len;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (static_cast<size_t>(end - p) < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  }
  return len;
}

void AppendUtf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

class Parser {
 public:
  Parser(std::string_view text, int max_depth)
      : p_(reinterpret_cast<const unsigned char*>(text.data())),
        end_(p_ + text.size()),
        max_depth_(max_depth) {}

  bool ParseDocument(Json& out) {
    if (p_ != end_ && *p_ == 0xEF) {  // a byte order mark, or nothing valid
      if (end_ - p_ < 3 || p_[1] != 0xBB || p_[2] != 0xBF) return false;
      p_ += 3;
    }
    SkipWhitespace();
    if (!ParseValue(out, 0)) return false;
    SkipWhitespace();
    // nlohmann's lexer reads a NUL byte as the end of the input, so whatever follows one
    // after the value is ignored. (Anywhere else a NUL fails, as the end would.)
    return p_ == end_ || *p_ == '\0';
  }

 private:
  void SkipWhitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool Consume(char c) {
    if (p_ == end_ || *p_ != static_cast<unsigned char>(c)) return false;
    ++p_;
    return true;
  }

  bool ParseValue(Json& out, int depth) {
    if (p_ == end_) return false;
    switch (*p_) {
      case '{':
        return ParseObject(out, depth + 1);
      case '[':
        return ParseArray(out, depth + 1);
      case '"':
        out = Json(Json::value_t::string);
        return ParseString(out.get_ref<std::string&>());
      case 't':
        out = true;
        return ParseLiteral("true");
      case 'f':
        out = false;
        return ParseLiteral("false");
      case 'n':
        out = nullptr;
        return ParseLiteral("null");
      default:
        return ParseNumber(out);
    }
  }

  bool ParseLiteral(std::string_view literal) {
    if (static_cast<size_t>(end_ - p_) < literal.size() ||
        std::string_view(reinterpret_cast<const char*>(p_), literal.size()) != literal) {
      return false;
    }
    p_ += literal.size();
    return true;
  }

  bool ParseObject(Json& out, int depth) {
    if (depth > max_depth_) return false;
    ++p_;  // '{'
    out = Json(Json::value_t::object);
    auto& object = out.get_ref<Json::object_t&>();
    SkipWhitespace();
    if (Consume('}')) return true;
    std::string key;
    for (;;) {
      key.clear();
      if (p_ == end_ || *p_ != '"' || !ParseString(key)) return false;
      SkipWhitespace();
      if (!Consume(':')) return false;
      SkipWhitespace();
      // operator[] keeps a repeated key's slot, and the new value overwrites it.
      if (!ParseValue(object[std::move(key)], depth)) return false;
      SkipWhitespace();
      if (Consume('}')) return true;
      if (!Consume(',')) return false;
      SkipWhitespace();
    }
  }

  bool ParseArray(Json& out, int depth) {
    if (depth > max_depth_) return false;
    ++p_;  // '['
    out = Json(Json::value_t::array);
    auto& array = out.get_ref<Json::array_t&>();
    SkipWhitespace();
    if (Consume(']')) return true;
    for (;;) {
      if (!ParseValue(array.emplace_back(), depth)) return false;
      SkipWhitespace();
      if (Consume(']')) return true;
      if (!Consume(',')) return false;
      SkipWhitespace();
    }
  }

  // At the opening quote; appends the decoded string to `out`.
  bool ParseString(std::string& out) {
    ++p_;
    const unsigned char* run = p_;  // plain bytes are copied in runs, not one by one
    for (;;) {
      if (p_ == end_) return false;
      const unsigned char c = *p_;
      if (c == '"') {
        out.append(reinterpret_cast<const char*>(run), p_ - run);
        ++p_;
        return true;
      }
      if (c == '\\') {
        out.append(reinterpret_cast<const char*>(run), p_ - run);
        ++p_;
        if (!ParseEscape(out)) return false;
        run = p_;
      } else if (c < 0x20) {
        return false;  // control characters must be escaped
      } else if (c < 0x80) {
        ++p_;
      } else {
        const size_t len = Utf8SequenceLength(p_, end_);
        if (len == 0) return false;
        p_ += len;
      }
    }
  }

  // After the backslash.
  bool ParseEscape(std::string& out) {
    if (p_ == end_) return false;
    switch (*p_++) {
      case '"':
        out += '"';
        return true;
      case '\\':
        out += '\\';
        return true;
      case '/':
        out += '/';
        return true;
      case 'b':
        out += '\b';
        return true;
      case 'f':
        out += '\f';
        return true;
      case 'n':
        out += '\n';
        return true;
      case 'r':
        out += '\r';
        return true;
      case 't':
        out += '\t';
        return true;
      case 'u':
        break;
      default:
        return false;
    }
    if (end_ - p_ < 4) return false;
    int code = Hex4(p_);
    if (code < 0) return false;  // not four hex digits
    p_ += 4;
    if (code >= 0xD800 && code <= 0xDBFF) {
      // A high surrogate pairs with a low one escaped right after it; unpaired, it reads as
      // U+FFFD and whatever follows is read on its own (a deliberate difference: json_parser.h).
      const int low = end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u' ? Hex4(p_ + 2) : -1;
      if (low >= 0xDC00 && low <= 0xDFFF) {
        p_ += 6;
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      } else {
        code = kReplacementCharacter;
      }
    } else if (code >= 0xDC00 && code <= 0xDFFF) {
      code = kReplacementCharacter;  // a low surrogate without its high half
    }
    AppendUtf8(out, static_cast<uint32_t>(code));
    return true;
  }

  // The four hex digits at `p` (which has at least four bytes) as a number, or -1.
  static int Hex4(const unsigned char* p) {
    int value = 0;
    for (int i = 0; i < 4; ++i) {
      const unsigned char c = p[i];
      int digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return -1;
      }
      value = value * 16 + digit;
    }
    return value;
  }

  void SkipDigits() {
    while (p_ != end_ && IsDigit(static_cast<char>(*p_))) ++p_;
  }

  bool ParseNumber(Json& out) {
    const unsigned char* start = p_;
    const bool negative = Consume('-');
    const unsigned char* digits = p_;
    if (p_ == end_ || !IsDigit(static_cast<char>(*p_))) return false;
    if (*p_ == '0') {
      ++p_;  // no leading zeros: "01" ends the number after the 0
    } else {
      SkipDigits();
    }
    const unsigned char* digits_end = p_;
    bool integral = true;
    if (Consume('.')) {
      if (p_ == end_ || !IsDigit(static_cast<char>(*p_))) return false;
      SkipDigits();
      integral = false;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (!Consume('+')) Consume('-');
      if (p_ == end_ || !IsDigit(static_cast<char>(*p_))) return false;
      SkipDigits();
      integral = false;
    }
    if (integral) {
      // nlohmann reads integers with strtoull/strtoll and falls back to a double when the
      // value does not fit; accumulating with an overflow check decides exactly the same.
      uint64_t magnitude = 0;
      bool fits = true;
      for (const unsigned char* d = digits; d != digits_end && fits; ++d) {
        const uint64_t digit = *d - '0';
        fits = magnitude <= (UINT64_MAX - digit) / 10;
        magnitude = magnitude * 10 + digit;
      }
      constexpr uint64_t kMinIntegerMagnitude = uint64_t{1} << 63;  // -INT64_MIN
      if (fits && !negative) {
        out = static_cast<Json::number_unsigned_t>(magnitude);
        return true;
      }
      if (fits && magnitude <= kMinIntegerMagnitude) {
        out = magnitude == kMinIntegerMagnitude ? INT64_MIN
                                                : -static_cast<Json::number_integer_t>(magnitude);
        return true;
      }
    }
    return ParseDouble(start, p_, out);
  }

  // strtod, as nlohmann does, with '.' swapped for the locale's decimal point.
  static bool ParseDouble(const unsigned char* begin, const unsigned char* end, Json& out) {
    std::string token(reinterpret_cast<const char*>(begin), end - begin);
    const lconv* locale = std::localeconv();
    const char point = locale->decimal_point == nullptr ? '.' : *locale->decimal_point;
    if (point != '.') {
      for (char& c : token) {
        if (c == '.') c = point;
      }
    }
    const double value = std::strtod(token.c_str(), nullptr);
    if (!std::isfinite(value)) return false;  // nlohmann: "number overflow"
    out = value;
    return true;
  }

  const unsigned char* p_;
  const unsigned char* const end_;
  const int max_depth_;
};

}  // namespace

bool ParseJson(std::string_view text, int max_depth, Json& out) {
  return Parser(text, max_depth).ParseDocument(out);
}

int JsonNestingDepth(std::string_view text) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) max_depth = depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

}  // namespace keel
