// Unit tests for protocol/line_framer.h: newline framing with a line-size cap.
#include "protocol/line_framer.h"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace line_framer_test {

namespace {

// A framer whose callbacks record what they were given.
struct Framed {
  explicit Framed(size_t max_line_bytes)
      : framer(
            max_line_bytes, [this](std::string_view line) { lines.emplace_back(line); },
            [this](size_t bytes_seen) { oversized.push_back(bytes_seen); }) {}

  std::vector<std::string> lines;
  std::vector<size_t> oversized;
  keel::LineFramer framer;
};

using Lines = std::vector<std::string>;

}  // namespace

TEST_CASE("a line split across several chunks is delivered once, whole") {
  Framed f(1024);
  f.framer.Feed(R"({"jsonrpc":)");
  CHECK(f.lines.empty());
  f.framer.Feed(R"("2.0","id")");
  CHECK(f.lines.empty());
  CHECK(f.framer.buffered() == std::string(R"({"jsonrpc":"2.0","id")").size());
  f.framer.Feed(":1}\n");
  CHECK(f.lines == Lines{R"({"jsonrpc":"2.0","id":1})"});
  CHECK(f.framer.buffered() == 0);
  CHECK(f.oversized.empty());
}

TEST_CASE("several lines in one chunk are delivered in order, keeping a trailing partial") {
  Framed f(1024);
  f.framer.Feed("one\ntwo\nthree\nfou");
  CHECK(f.lines == Lines{"one", "two", "three"});
  CHECK(f.framer.buffered() == 3);
  f.framer.Feed("r\n");
  CHECK(f.lines == Lines{"one", "two", "three", "four"});
  CHECK(f.framer.buffered() == 0);
}

TEST_CASE("CRLF is stripped, but only one carriage return") {
  Framed f(1024);
  f.framer.Feed("a\r\nb\r\r\nc\rd\n");
  CHECK(f.lines == Lines{"a", "b\r", "c\rd"});
  // A CR and its LF in different chunks.
  f.framer.Feed("e\r");
  f.framer.Feed("\n");
  CHECK(f.lines.back() == "e");
}

TEST_CASE("blank lines are delivered as empty lines") {
  Framed f(1024);
  f.framer.Feed("\n\r\nx\n\n");
  CHECK(f.lines == Lines{"", "", "x", ""});
  CHECK(f.oversized.empty());
}

TEST_CASE("a line exactly at the limit is accepted, with or without CRLF") {
  Framed f(16);
  const std::string exact(16, 'a');
  f.framer.Feed(exact + "\n");
  f.framer.Feed(exact + "\r\n");
  f.framer.Feed(exact.substr(0, 10));
  f.framer.Feed(exact.substr(10) + "\r");
  f.framer.Feed("\n");
  CHECK(f.lines == Lines{exact, exact, exact});
  CHECK(f.oversized.empty());
}

TEST_CASE("a line one byte over the limit is reported oversized, not delivered") {
  Framed f(16);
  f.framer.Feed(std::string(17, 'a') + "\n");
  f.framer.Feed(std::string(17, 'b') + "\r\n");
  f.framer.Feed(std::string(17, 'c'));
  f.framer.Feed("\n");
  CHECK(f.lines.empty());
  CHECK(f.oversized.size() == 3);
}

TEST_CASE("an oversized line spanning many chunks is reported once and never buffered") {
  constexpr size_t kMax = 1024;
  Framed f(kMax);
  const std::string chunk(4096, 'x');
  size_t max_buffered = 0;
  for (int i = 0; i < 1000; ++i) {  // 4 MB for a 1 KiB cap
    f.framer.Feed(chunk);
    max_buffered = std::max(max_buffered, f.framer.buffered());
  }
  CHECK(f.oversized.empty());  // not reported before the line ends
  f.framer.Feed("tail\nnext\n");
  CHECK(max_buffered <= kMax + 1);
  CHECK(f.oversized.size() == 1);
  CHECK(f.oversized.at(0) > kMax);
  CHECK(f.lines == Lines{"next"});
  CHECK(f.framer.buffered() == 0);
}

TEST_CASE("an oversized line fed in small chunks is dropped once the cap is passed") {
  constexpr size_t kMax = 1024;
  Framed f(kMax);
  size_t max_buffered = 0;
  for (int i = 0; i < 5000; ++i) {
    f.framer.Feed("0123456789");
    max_buffered = std::max(max_buffered, f.framer.buffered());
  }
  CHECK(max_buffered <= kMax + 1);
  CHECK(f.framer.buffered() == 0);  // dropped, not held
  f.framer.Feed("\n");
  CHECK(f.oversized.size() == 1);
  CHECK(f.lines.empty());
}

TEST_CASE("the line after an oversized one is delivered intact") {
  Framed f(32);
  const std::string next = R"({"jsonrpc":"2.0","id":2})";
  // Same chunk as the end of the oversized line.
  f.framer.Feed(std::string(100, 'x'));
  f.framer.Feed("yyy\n" + next + "\n");
  // Oversized line and the next one in a single chunk.
  f.framer.Feed(std::string(100, 'z') + "\n" + next + "\n");
  // The next line arriving in pieces after the oversized one ends.
  f.framer.Feed(std::string(100, 'w') + "\n" + next.substr(0, 5));
  f.framer.Feed(next.substr(5) + "\n");
  CHECK(f.oversized.size() == 3);
  CHECK(f.lines == Lines{next, next, next});
}

TEST_CASE("Finish delivers a trailing line that has no newline") {
  Framed f(1024);
  f.framer.Feed("first\nlast");
  CHECK(f.lines == Lines{"first"});
  f.framer.Finish();
  CHECK(f.lines == Lines{"first", "last"});
  CHECK(f.framer.buffered() == 0);
  f.framer.Finish();  // nothing more to deliver
  CHECK(f.lines.size() == 2);
  CHECK(f.oversized.empty());
}

TEST_CASE("Finish with nothing pending delivers nothing") {
  Framed f(1024);
  f.framer.Feed("a\n");
  f.framer.Finish();
  CHECK(f.lines == Lines{"a"});
  CHECK(f.oversized.empty());
}

TEST_CASE("Finish after an unterminated oversized line reports it exactly once") {
  Framed f(64);
  for (int i = 0; i < 10; ++i) f.framer.Feed(std::string(50, 'q'));
  CHECK(f.oversized.empty());
  f.framer.Finish();
  REQUIRE(f.oversized.size() == 1);
  CHECK(f.oversized.at(0) == 500);
  f.framer.Finish();
  CHECK(f.oversized.size() == 1);
  CHECK(f.lines.empty());
}

}  // namespace line_framer_test
