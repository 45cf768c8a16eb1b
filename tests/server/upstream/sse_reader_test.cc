// SseReader (server/upstream/sse_reader.h): the text/event-stream framing of an HTTP
// upstream's responses, fed in chunks of every size, with its bound.
#include "server/upstream/sse_reader.h"

#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::sse_reader_test {
namespace {

struct SseEvents {
  std::vector<std::string> events;
  std::vector<size_t> oversize;
  SseReader Reader(size_t max = 1024) {
    return SseReader(
        max, [this](std::string_view data) { events.emplace_back(data); },
        [this](size_t bytes) { oversize.push_back(bytes); });
  }
};

// The same stream fed whole, byte by byte, and in chunks of 2..7 bytes: the same events.
std::vector<std::string> SseEventsOfEverySplit(std::string_view stream) {
  std::vector<std::string> first;
  for (size_t chunk : {stream.size() + 1, size_t{1}, size_t{2}, size_t{3}, size_t{7}}) {
    SseEvents seen;
    SseReader reader = seen.Reader();
    for (size_t at = 0; at < stream.size(); at += chunk) reader.Feed(stream.substr(at, chunk));
    CHECK(reader.Finish() == 0);
    if (chunk == stream.size() + 1) first = seen.events;
    CHECK(seen.events == first);
  }
  return first;
}

}  // namespace

TEST_CASE("each event's data lines are joined and handed out at the blank line", "[sse]") {
  const auto events = SseEventsOfEverySplit("data: {\"a\":1}\n\ndata: {\"b\":\ndata: 2}\n\n");
  REQUIRE(events.size() == 2);
  CHECK(events[0] == R"({"a":1})");
  CHECK(events[1] == "{\"b\":\n2}");
}

TEST_CASE("CRLF, LF and CR all end lines, also when split between chunks", "[sse]") {
  const auto events = SseEventsOfEverySplit("data: one\r\n\r\ndata: two\r\rdata:three\n\n");
  CHECK(events == std::vector<std::string>{"one", "two", "three"});
}

TEST_CASE("comments, ids, retry, event names and empty events are ignored", "[sse]") {
  const auto events = SseEventsOfEverySplit(
      ": keep-alive\n\nid: 7\nretry: 1000\ndata:\n\nevent: message\nid: 8\ndata: x\n\n"
      "nonsense\n\n");
  CHECK(events == std::vector<std::string>{"x"});
}

TEST_CASE("a byte order mark at the start of the stream is skipped", "[sse]") {
  const auto events = SseEventsOfEverySplit(
      "\xEF\xBB\xBF"
      "data: x\n\n");
  CHECK(events == std::vector<std::string>{"x"});
}

TEST_CASE("an event over the bound is dropped once and the next one is read", "[sse]") {
  SseEvents seen;
  SseReader reader = seen.Reader(16);
  reader.Feed("data: 0123456789\ndata: 0123456789\n");
  reader.Feed("data: still the same event\n\ndata: next\n\n");
  CHECK(reader.Finish() == 0);
  CHECK(seen.events == std::vector<std::string>{"next"});
  REQUIRE(seen.oversize.size() == 1);
  CHECK(seen.oversize[0] > 16);
}

TEST_CASE("one long line over the bound is not buffered and is dropped", "[sse]") {
  SseEvents seen;
  SseReader reader = seen.Reader(8);
  reader.Feed("data: ");
  for (int i = 0; i < 100; ++i) reader.Feed("0123456789");
  reader.Feed("\n\ndata: ok\n\n");
  CHECK(seen.events == std::vector<std::string>{"ok"});
  CHECK(seen.oversize.size() == 1);
}

TEST_CASE("at the end a complete last event is handed out and a cut line is dropped", "[sse]") {
  SseEvents seen;
  SseReader whole = seen.Reader();
  whole.Feed("data: last\n");
  CHECK(whole.Finish() == 0);
  CHECK(seen.events == std::vector<std::string>{"last"});
  SseEvents cut;
  SseReader half = cut.Reader();
  half.Feed("data: one\ndata: {\"half");
  CHECK(half.Finish() == 12);
  CHECK(cut.events.empty());
}

}  // namespace keel::sse_reader_test
