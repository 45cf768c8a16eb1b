// StreamCapture: stdout and stderr are kept up to their cap and marked truncated beyond it;
// progress is split into complete lines, each capped, delivered in order.
#include "server/runtime/stream_capture.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::stream_capture_test {
namespace {

TEST_CASE("bytes up to the cap are kept and nothing is marked truncated", "[process]") {
  StreamCapture capture = StreamCapture::Bytes(6);
  capture.Consume("abc");
  capture.Consume("def");
  CHECK_FALSE(capture.truncated());
  CHECK(capture.TakeBytes() == "abcdef");
}

TEST_CASE("bytes beyond the cap are discarded and mark the stream truncated", "[process]") {
  StreamCapture capture = StreamCapture::Bytes(4);
  capture.Consume("abc");
  capture.Consume("defgh");
  capture.Consume("ij");
  CHECK(capture.truncated());
  CHECK(capture.TakeBytes() == "abcd");
}

TEST_CASE("progress lines split across chunks arrive whole and in order", "[process]") {
  std::vector<std::string> lines;
  const StreamCapture::LineFn on_line = [&](std::string_view line) { lines.emplace_back(line); };
  StreamCapture capture = StreamCapture::Lines(100, &on_line);
  capture.Consume("one\ntw");
  capture.Consume("o\n\nthr");
  capture.Consume("ee\nunterminated");
  CHECK(lines == std::vector<std::string>{"one", "two", "", "three"});
}

TEST_CASE("a progress line longer than the cap is cut at the cap, the next one is whole",
          "[process]") {
  std::vector<std::string> lines;
  const StreamCapture::LineFn on_line = [&](std::string_view line) { lines.emplace_back(line); };
  StreamCapture capture = StreamCapture::Lines(3, &on_line);
  capture.Consume("abcd");
  capture.Consume("ef\nxy\n");
  CHECK(lines == std::vector<std::string>{"abc", "xy"});
}

TEST_CASE("progress with no line callback is split and dropped", "[process]") {
  const StreamCapture::LineFn none;
  StreamCapture capture = StreamCapture::Lines(10, &none);
  capture.Consume("a\nb\n");
  StreamCapture no_pointer = StreamCapture::Lines(10, nullptr);
  no_pointer.Consume("a\nb\n");
  SUCCEED("no call was made");
}

}  // namespace
}  // namespace keel::stream_capture_test
