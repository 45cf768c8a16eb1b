// Inbound: what every transport does with one framed message before the dispatcher sees it.
// Blank lines vanish, undecodable ones are answered (requests) or dropped (notifications),
// and an oversized line gets one error naming the limit.
#include "server/transport/inbound.h"

#include <string>

#include <catch2/catch.hpp>

#include "fakes/recording_sink.h"

namespace keel::inbound_test {
namespace {

TEST_CASE("a decodable line becomes its message and nothing is answered", "[transport]") {
  RecordingSink replies;
  const auto message =
      DecodeInbound(R"({"jsonrpc":"2.0","id":0,"method":"tools/list","params":{}})", replies);
  REQUIRE(message);
  CHECK(message->kind == MessageKind::kRequest);
  CHECK(message->id == Json(0));
  CHECK(message->method == "tools/list");
  CHECK(replies.lines().empty());
}

TEST_CASE("a blank line is no message and gets no answer", "[transport]") {
  RecordingSink replies;
  for (const char* line : {"", " ", "\t", "\r", " \t\r "}) {
    CHECK_FALSE(DecodeInbound(line, replies));
  }
  CHECK(replies.lines().empty());
}

TEST_CASE("an undecodable request is answered with the codec's error and its id", "[transport]") {
  RecordingSink replies;
  CHECK_FALSE(DecodeInbound("[1]", replies));
  CHECK_FALSE(DecodeInbound(R"({"jsonrpc":"2.0","id":"0","method":"m","params":[]})", replies));
  REQUIRE(replies.messages().size() == 2);
  CHECK(replies.messages()[0]["error"]["code"] == -32600);
  CHECK_FALSE(replies.messages()[0].contains("id"));
  CHECK(replies.messages()[1]["id"] == "0");
  CHECK(replies.messages()[1]["error"]["message"] == "Invalid params: params must be an object");
}

TEST_CASE("an undecodable notification is never answered (CAN-3)", "[transport][CAN-3]") {
  RecordingSink replies;
  CHECK_FALSE(
      DecodeInbound(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":7})", replies));
  CHECK(replies.lines().empty());
}

TEST_CASE("an oversized line is answered once, without an id, naming the limit", "[transport]") {
  RecordingSink replies;
  AnswerOversizedLine(replies, 17 << 20, 16 << 20);
  REQUIRE(replies.lines().size() == 1);
  CHECK(replies.lines()[0] ==
        R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: line of )"
        R"(17825792 bytes exceeds --max-line-bytes 16777216; it was skipped"}})");
}

}  // namespace
}  // namespace keel::inbound_test
