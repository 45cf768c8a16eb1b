// Unit tests for protocol/cursor.h: opaque pagination cursors bound to one list.
#include "protocol/cursor.h"

#include <cstdint>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

using keel::DecodeCursor;
using keel::EncodeCursor;

namespace cursor_test {

namespace {

// Catch cannot print std::optional; -1 stands for "refused".
long long Decoded(std::string_view list, std::string_view cursor) {
  const auto offset = DecodeCursor(list, cursor);
  return offset ? static_cast<long long>(*offset) : -1;
}

}  // namespace

TEST_CASE("a cursor decodes back to the offset it was minted with") {
  for (size_t offset : {size_t{0}, size_t{1}, size_t{40}, size_t{100}, size_t{123456789}}) {
    const std::string cursor = EncodeCursor("tools", offset);
    INFO("cursor: " << cursor);
    CHECK(Decoded("tools", cursor) == static_cast<long long>(offset));
  }
  const size_t big = std::numeric_limits<size_t>::max();
  const auto round = DecodeCursor("tools", EncodeCursor("tools", big));
  REQUIRE(round.has_value());
  CHECK(*round == big);
}

TEST_CASE("a cursor is opaque lowercase hex that differs per list and offset") {
  const std::string cursor = EncodeCursor("tools", 40);
  CHECK(cursor.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(cursor.find("tools") == std::string::npos);
  CHECK(cursor != EncodeCursor("tools", 41));
  CHECK(cursor != EncodeCursor("prompts", 40));
}

TEST_CASE("a cursor minted for another list is refused") {
  CHECK(Decoded("prompts", EncodeCursor("tools", 40)) == -1);
  CHECK(Decoded("tools", EncodeCursor("tool", 40)) == -1);
  CHECK(Decoded("tool", EncodeCursor("tools", 40)) == -1);
  CHECK(Decoded("", EncodeCursor("tools", 40)) == -1);
}

TEST_CASE("empty, odd-length, non-hex and garbage cursors are refused") {
  const std::string good = EncodeCursor("tools", 40);
  CHECK(Decoded("tools", "") == -1);
  CHECK(Decoded("tools", good.substr(1)) == -1);         // odd length
  CHECK(Decoded("tools", good + "0") == -1);             // odd length
  CHECK(Decoded("tools", "zz" + good.substr(2)) == -1);  // non-hex
  CHECK(Decoded("tools", "not a cursor") == -1);
  CHECK(Decoded("tools", "-1" + good.substr(2)) == -1);  // sign is not a hex digit
  CHECK(Decoded("tools", " " + good.substr(0, good.size() - 1)) == -1);
  CHECK(Decoded("tools", std::string(1000, 'a')) == -1);  // overlong
}

TEST_CASE("a cursor whose offset part is missing or not a number is refused") {
  // Hex of hand-made plaintexts, minted the way EncodeCursor does.
  auto hex = [](std::string_view plain) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : plain) {
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
    return out;
  };
  CHECK(Decoded("tools", hex("tools:40")) == 40);  // the helper agrees with EncodeCursor
  CHECK(Decoded("tools", hex("tools:")) == -1);
  CHECK(Decoded("tools", hex("tools")) == -1);
  CHECK(Decoded("tools", hex("tools:4x")) == -1);
  CHECK(Decoded("tools", hex("tools:-1")) == -1);
  CHECK(Decoded("tools", hex("tools: 1")) == -1);
  CHECK(Decoded("tools", hex("tools:99999999999999999999999")) == -1);  // overflows size_t
}

}  // namespace cursor_test
