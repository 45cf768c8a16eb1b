// Unit tests for protocol/utf8.h: RFC 3629 well-formedness of incoming lines.
#include "protocol/utf8.h"

#include <string>

#include <catch2/catch.hpp>

using keel::IsValidUtf8;

namespace utf8_test {

TEST_CASE("ASCII and the empty string are valid UTF-8") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"));
  CHECK(IsValidUtf8(std::string("nul\0inside", 10)));
  CHECK(IsValidUtf8("\x7f"));
}

TEST_CASE("well-formed 2, 3 and 4 byte sequences are valid, including the boundaries") {
  CHECK(IsValidUtf8("\xC2\x80"));          // U+0080, smallest 2-byte
  CHECK(IsValidUtf8("caf\xC3\xA9"));       // é
  CHECK(IsValidUtf8("\xDF\xBF"));          // U+07FF
  CHECK(IsValidUtf8("\xE0\xA0\x80"));      // U+0800, smallest 3-byte
  CHECK(IsValidUtf8("\xE2\x82\xAC"));      // €
  CHECK(IsValidUtf8("\xED\x9F\xBF"));      // U+D7FF, just below the surrogates
  CHECK(IsValidUtf8("\xEE\x80\x80"));      // U+E000, just above the surrogates
  CHECK(IsValidUtf8("\xEF\xBF\xBD"));      // U+FFFD
  CHECK(IsValidUtf8("\xF0\x90\x80\x80"));  // U+10000, smallest 4-byte
  CHECK(IsValidUtf8("\xF0\x9F\x98\x80"));  // 😀
  CHECK(IsValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the largest code point
  CHECK(
      IsValidUtf8("a\xC3\xA9"
                  "b\xE2\x82\xAC"
                  "c\xF0\x9F\x98\x80"
                  "d"));
}

TEST_CASE("overlong encodings are invalid") {
  CHECK_FALSE(IsValidUtf8("\xC0\x80"));          // U+0000 in 2 bytes
  CHECK_FALSE(IsValidUtf8("\xC1\xBF"));          // U+007F in 2 bytes
  CHECK_FALSE(IsValidUtf8("\xE0\x80\x80"));      // U+0000 in 3 bytes
  CHECK_FALSE(IsValidUtf8("\xE0\x9F\xBF"));      // U+07FF in 3 bytes
  CHECK_FALSE(IsValidUtf8("\xF0\x80\x80\x80"));  // U+0000 in 4 bytes
  CHECK_FALSE(IsValidUtf8("\xF0\x8F\xBF\xBF"));  // U+FFFF in 4 bytes
  CHECK_FALSE(IsValidUtf8("ok\xC0\xAF"));        // overlong '/' after valid text
}

TEST_CASE("UTF-16 surrogates encoded in UTF-8 are invalid") {
  CHECK_FALSE(IsValidUtf8("\xED\xA0\x80"));              // U+D800
  CHECK_FALSE(IsValidUtf8("\xED\xAF\xBF"));              // U+DBFF
  CHECK_FALSE(IsValidUtf8("\xED\xB0\x80"));              // U+DC00
  CHECK_FALSE(IsValidUtf8("\xED\xBF\xBF"));              // U+DFFF
  CHECK_FALSE(IsValidUtf8("\xED\xA0\xBD\xED\xB8\x80"));  // CESU-8 pair for U+1F600
}

TEST_CASE("code points above U+10FFFF and the bytes F5..FF are invalid") {
  CHECK_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(IsValidUtf8("\xF7\xBF\xBF\xBF"));  // U+1FFFFF
  CHECK_FALSE(IsValidUtf8("\xF5\x80\x80\x80"));
  CHECK_FALSE(IsValidUtf8("\xF8\x88\x80\x80\x80"));      // old 5-byte form
  CHECK_FALSE(IsValidUtf8("\xFC\x84\x80\x80\x80\x80"));  // old 6-byte form
  CHECK_FALSE(IsValidUtf8("\xFE"));
  CHECK_FALSE(IsValidUtf8("\xFF"));
}

TEST_CASE("truncated sequences are invalid, at the end or before other bytes") {
  CHECK_FALSE(IsValidUtf8("\xC3"));
  CHECK_FALSE(IsValidUtf8("\xE2\x82"));
  CHECK_FALSE(IsValidUtf8("\xF0\x9F\x98"));
  CHECK_FALSE(IsValidUtf8("abc\xE2"));
  CHECK_FALSE(
      IsValidUtf8("\xC3"
                  "a"));
  CHECK_FALSE(
      IsValidUtf8("\xE2\x82"
                  "a"));
  CHECK_FALSE(
      IsValidUtf8("\xF0\x9F\x98"
                  "\""));
  CHECK_FALSE(IsValidUtf8("\xE2\xC3\xA9"));  // a new lead byte where a continuation belongs
}

TEST_CASE("stray continuation bytes are invalid") {
  CHECK_FALSE(IsValidUtf8("\x80"));
  CHECK_FALSE(IsValidUtf8("\xBF"));
  CHECK_FALSE(
      IsValidUtf8("a\x80"
                  "b"));
  CHECK_FALSE(IsValidUtf8("\xC3\xA9\xA9"));  // one continuation too many
  CHECK_FALSE(IsValidUtf8("\xF0\x9F\x98\x80\x80"));
}

}  // namespace utf8_test
