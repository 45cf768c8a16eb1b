// ParseJson must accept exactly what nlohmann::json::parse accepts and build the same value
// with the same number types — but for its one deliberate difference in what it accepts: a
// lone surrogate escape reads as U+FFFD, so nlohmann is shown the text with those escapes
// replaced by \ufffd. Checked on hand-picked edge cases, on mutations of valid documents
// (fixed seed, so a failure reproduces) and on generated documents.
#include "protocol/json_parser.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fuzz/fuzz_support.h"

namespace json_parser_test {

namespace {

using nlohmann::json;

constexpr int kDepth = 128;

// Same value, same types, same key order, and for doubles the same bits (so -0.0 != 0.0).
bool SameValue(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::number_float: {
      const double x = a.get<double>();
      const double y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
        if (i.key() != j.key() || !SameValue(*i, *j)) return false;
      }
      return true;
    }
    case json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!SameValue(a[i], b[i])) return false;
      }
      return true;
    }
    default:
      return a == b;
  }
}

// "" when both parsers agree, else a description for the failure message.
std::string Disagreement(const std::string& text) {
  const json expected = json::parse(keel::fuzz::WithLoneSurrogatesReplaced(text), nullptr,
                                    /*allow_exceptions=*/false);
  json actual;
  const bool ok = keel::ParseJson(text, kDepth, actual);
  if (expected.is_discarded()) return ok ? "accepted, nlohmann rejects: " + actual.dump() : "";
  if (!ok) return "rejected, nlohmann accepts: " + expected.dump();
  if (!SameValue(expected, actual)) return "value " + actual.dump() + " != " + expected.dump();
  return "";
}

TEST_CASE("ParseJson agrees with nlohmann on edge cases of the grammar") {
  const std::vector<std::string> cases = {
      // Documents and whitespace.
      "",
      " ",
      "\xEF\xBB\xBF{}",
      "\xEF\xBB{}",
      "\xEF{}",
      " \xEF\xBB\xBF{}",
      "\t\n\r {} \t\n\r",
      "{} x",
      "{}{}",
      "\f{}",
      "\v1",
      std::string("1\0", 2),
      std::string("\0", 1),
      // Literals.
      "true",
      "false",
      "null",
      "tru",
      "truex",
      "nul",
      "True",
      "[true,false,null]",
      // Numbers.
      "0",
      "-0",
      "-0.0",
      "0.0",
      "01",
      "-01",
      "1.",
      ".5",
      "-",
      "--1",
      "+1",
      "1e",
      "1e+",
      "1E5",
      "1e-5",
      "1.5e+3",
      "-1.5E-3",
      "1e400",
      "-1e400",
      "1e-400",
      "2.2250738585072011e-308",
      "9223372036854775807",
      "9223372036854775808",
      "-9223372036854775808",
      "-9223372036854775809",
      "18446744073709551615",
      "18446744073709551616",
      "123456789012345678901234567890",
      "-123456789012345678901234567890",
      "1.0",
      "100",
      "0e0",
      "-0e-0",
      "[1,2 ,3 , 4]",
      "[1 2]",
      "1x",
      "0x10",
      "NaN",
      "Infinity",
      "-Infinity",
      // Strings.
      R"("")",
      R"("abc")",
      R"("a\"b")",
      R"("\\\/\b\f\n\r\t")",
      R"("\u0041\u00e9\u4e2d")",
      R"("\u0000")",
      R"("\ud83d\ude00")",
      R"("\ud83d")",
      R"("\ude00")",
      R"("\ud83d\u0041")",
      R"("\ud83dx")",
      R"("\u12")",
      R"("\u12G4")",
      R"("\x")",
      R"("\'")",
      "\"tab\there\"",
      "\"nl\nhere\"",
      "\"\x1f\"",
      "\"\x7f\"",
      "\"caf\xc3\xa9\"",
      "\"\xc3\"",
      "\"\xc0\xaf\"",
      "\"\xe0\x80\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "\"\xf0\x9f\x98\x80\"",
      "\"\xff\"",
      "\"unterminated",
      "\"\\",
      "\"\\u",
      // Objects and arrays.
      "{}",
      "[]",
      "{ }",
      "[ ]",
      R"({"a":1})",
      R"({"a":1,})",
      R"({,"a":1})",
      R"({"a" 1})",
      R"({"a":})",
      R"({a:1})",
      R"({"a":1 "b":2})",
      R"({"a":1,"a":2})",
      R"({"a":{"x":1},"a":[2]})",
      R"({"b":1,"a":2,"c":3})",
      "[",
      "]",
      "[1,]",
      "[,1]",
      "[[[]]]",
      R"({"k\u0000":1})",
      R"({"":""})",
      R"([{"a":[{"b":null}]}])",
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}})",
  };
  for (const std::string& text : cases) {
    INFO("input: " << json(text).dump(-1, ' ', true, json::error_handler_t::replace));
    CHECK(Disagreement(text) == "");
  }
}

TEST_CASE("ParseJson agrees with nlohmann on mutated documents") {
  const std::vector<std::string> seeds = {
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}})",
      R"([1,-2,3.5,-0.0,1e10,18446744073709551615,-9223372036854775808,true,false,null])",
      R"({"s":"a\"b\\c\/d\b\f\n\r\t\u0041\ud83d\ude00 caf\u00e9","e":{},"a":[]})",
      "{\"utf8\":\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\",\"n\":[0,10,-1e-3,2E+2]}",
  };
  // Bytes that matter to the grammar, plus UTF-8 lead and continuation bytes.
  const std::string special("\x00\x1f\x7f\x80\xa0\xbf\xc3\xe0\xed\xef\xf0\xf4\xff", 13);
  const std::string alphabet = "{}[]\":,\\/ \t\n\rtruefalsn0123456789-+.eEu" + special;
  std::mt19937 rng(20251125);
  int checked = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(at, 1, c);
          break;
        default:
          text.erase(at, 1);
          break;
      }
    }
    const std::string problem = Disagreement(text);
    if (!problem.empty()) {
      INFO("input: " << json(text).dump(-1, ' ', true, json::error_handler_t::replace));
      FAIL(problem);
    }
    ++checked;
  }
  CHECK(checked == 20000);
}

TEST_CASE("ParseJson reads back generated documents exactly as nlohmann does") {
  std::mt19937 rng(7);
  auto random_string = [&] {
    std::string s;
    const int length = static_cast<int>(rng() % 8);
    for (int i = 0; i < length; ++i) {
      switch (rng() % 4) {
        case 0:
          s += static_cast<char>(rng() % 0x20);
          break;  // escaped on output
        case 1:
          s += "\xc3\xa9";
          break;
        case 2:
          s += "\xf0\x9f\x98\x80";
          break;
        default:
          s += static_cast<char>('a' + rng() % 26);
          break;
      }
    }
    return s;
  };
  std::function<json(int)> random_value = [&](int depth) -> json {
    switch (rng() % (depth > 3 ? 6 : 8)) {
      case 0:
        return nullptr;
      case 1:
        return rng() % 2 == 0;
      case 2:
        return static_cast<int64_t>(rng()) - static_cast<int64_t>(rng());
      case 3:
        return static_cast<uint64_t>(rng()) << 32 | rng();
      case 4:
        return std::ldexp(static_cast<double>(rng()), static_cast<int>(rng() % 200) - 100);
      case 5:
        return random_string();
      case 6: {
        json array = json::array();
        for (int n = static_cast<int>(rng() % 4); n > 0; --n)
          array.push_back(random_value(depth + 1));
        return array;
      }
      default: {
        json object = json::object();
        for (int n = static_cast<int>(rng() % 4); n > 0; --n)
          object[random_string()] = random_value(depth + 1);
        return object;
      }
    }
  };
  for (int round = 0; round < 2000; ++round) {
    const std::string text = random_value(0).dump(round % 2 == 0 ? -1 : 1);
    INFO("input: " << text);
    REQUIRE(Disagreement(text) == "");
  }
}

// The string a one-string document parses to, or "<refused>".
std::string StringOf(const std::string& text) {
  json value;
  if (!keel::ParseJson(text, kDepth, value) || !value.is_string()) return "<refused>";
  return value.get<std::string>();
}

TEST_CASE("a lone surrogate escape reads as U+FFFD and a pair as its character") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(StringOf(R"("\ud83d\ude00")") == "\xF0\x9F\x98\x80");  // a pair: unchanged
  CHECK(StringOf(R"("a\ud83db")") == "a" + fffd + "b");        // lone high
  CHECK(StringOf(R"("a\ude00b")") == "a" + fffd + "b");        // lone low
  CHECK(StringOf(R"("\ud83d\u0041")") == fffd + "A");          // high, then no low
  CHECK(StringOf(R"("\ud83d\n")") == fffd + "\n");             // high, then another escape
  CHECK(StringOf(R"("\ud83d\ud83d\ude00")") == fffd + "\xF0\x9F\x98\x80");  // high, then a pair
  CHECK(StringOf(R"("\ude00\ud83d")") == fffd + fffd);                      // a reversed pair
  CHECK(StringOf(R"("\ud83d")") == fffd);        // at the end of the string
  CHECK(StringOf(R"("\\ud83d")") == "\\ud83d");  // an escaped backslash
  // Still refused: an unfinished escape after a lone high, and a lone high at the text's end.
  CHECK(StringOf(R"("\ud83d\u12")") == "<refused>");
  CHECK(StringOf(R"("\ud83d)") == "<refused>");
}

TEST_CASE("a lone surrogate in an object key reads as U+FFFD, so such keys can coincide") {
  json value;
  REQUIRE(keel::ParseJson(R"({"k\ud83d":1,"k\udc00":2})", kDepth, value));
  CHECK(value.size() == 1);
  CHECK(value["k\xEF\xBF\xBD"] == 2);
}

TEST_CASE("ParseJson refuses nesting deeper than its limit") {
  json value;
  CHECK(keel::ParseJson("[[[1]]]", 3, value));
  CHECK_FALSE(keel::ParseJson("[[[[1]]]]", 3, value));
  CHECK_FALSE(keel::ParseJson(R"({"a":{"b":{"c":{}}}})", 3, value));
}

TEST_CASE("JsonNestingDepth is the depth of a JSON text, brackets in strings not counted") {
  CHECK(keel::JsonNestingDepth("") == 0);
  CHECK(keel::JsonNestingDepth("\"[{\"") == 0);
  CHECK(keel::JsonNestingDepth("[]") == 1);
  CHECK(keel::JsonNestingDepth(R"([{"a":[1]},{"b":2}])") == 3);
  CHECK(keel::JsonNestingDepth(R"({"a":"]]\"[[[","b":[]})") == 2);  // an escaped quote
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(keel::JsonNestingDepth(deep) == 100000);
  // Never below what the parser reads: text after a NUL (where nlohmann stops) still counts.
  CHECK(keel::JsonNestingDepth(std::string("1\0[[", 5)) == 2);
}

}  // namespace

}  // namespace json_parser_test
