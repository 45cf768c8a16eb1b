// Unit tests for protocol/json_rpc.h: the JSON-RPC 2.0 line codec.
// Requirements: DC-1 (decoding: ids kept with their exact type, message classification,
// -32700/-32600/-32602 for bad input, an unreadable id is never echoed),
// DC-2 (encoding: one compact line, no raw newline, invalid UTF-8 replaced, never throws).
#include "protocol/json_rpc.h"

#include <cstdint>
#include <limits>
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "protocol/error_codes.h"
#include "protocol/utf8.h"

namespace json_rpc_test {

namespace {

using keel::DecodeError;
using keel::DecodeLine;
using keel::Json;
using keel::Message;
using keel::MessageKind;

// Decodes a line that must decode to a Message.
Message Decoded(const std::string& line) {
  keel::DecodeResult result = DecodeLine(line);
  INFO("line: " << line);
  REQUIRE(std::holds_alternative<Message>(result));
  return std::get<Message>(std::move(result));
}

// Decodes a line that must be refused.
DecodeError Refused(const std::string& line) {
  keel::DecodeResult result = DecodeLine(line);
  INFO("line: " << line);
  REQUIRE(std::holds_alternative<DecodeError>(result));
  return std::get<DecodeError>(std::move(result));
}

// The id of a refusal, re-encoded so the JSON type shows ("7" vs 7); "<none>" when absent.
std::string RefusedId(const DecodeError& error) {
  return error.id ? keel::DumpCompact(*error.id) : std::string("<none>");
}

std::string Request(const std::string& id_json) {
  return R"({"jsonrpc":"2.0","id":)" + id_json + R"(,"method":"ping"})";
}

bool HasRawNewline(const std::string& line) {
  return line.find('\n') != std::string::npos || line.find('\r') != std::string::npos;
}

// `depth` arrays nested inside each other, as text: [[[...]]].
std::string NestedArrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("request ids are echoed with their exact JSON type and value") {
  const char* ids[] = {"0", R"("0")", "18446744073709551615", "-42", R"("abc")", "7"};
  for (const std::string id : ids) {
    INFO("id: " << id);
    const Message message = Decoded(Request(id));
    CHECK(keel::IsValidId(message.id));
    CHECK(keel::DumpCompact(message.id) == id);
    CHECK(keel::EncodeResult(message.id, Json::object()) ==
          R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{}})");
    CHECK(keel::EncodeError(message.id, keel::kInternalError, "x") ==
          R"({"jsonrpc":"2.0","id":)" + id + R"(,"error":{"code":-32603,"message":"x"}})");
  }
}

TEST_CASE("a message with a method and an id is a request carrying its params") {
  const Message m =
      Decoded(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}})");
  CHECK(m.kind == MessageKind::kRequest);
  CHECK(m.method == "tools/call");
  CHECK(keel::DumpCompact(m.id) == "3");
  REQUIRE(m.params.is_object());
  CHECK(m.params.at("name").get<std::string>() == "echo");
}

TEST_CASE("params that are not an object: -32602 for a request, unanswerable for a notification") {
  const auto request = DecodeLine(R"({"jsonrpc":"2.0","id":4,"method":"ping","params":[1]})");
  const auto* request_error = std::get_if<DecodeError>(&request);
  REQUIRE(request_error != nullptr);
  CHECK(request_error->code == -32602);
  CHECK(request_error->id == Json(4));
  CHECK_FALSE(request_error->notification);
  const auto note =
      DecodeLine(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":7})");
  const auto* note_error = std::get_if<DecodeError>(&note);
  REQUIRE(note_error != nullptr);
  CHECK(note_error->notification);
}

TEST_CASE("a message with a method and no id is a notification with null params when absent") {
  const Message m = Decoded(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  CHECK(m.kind == MessageKind::kNotification);
  CHECK(m.method == "notifications/initialized");
  CHECK(m.id.is_null());
  CHECK(m.params.is_null());

  const Message with_params =
      Decoded(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  CHECK(with_params.kind == MessageKind::kNotification);
  CHECK(with_params.params.at("requestId").get<int>() == 1);
}

TEST_CASE("a message with an id and exactly one of result or error is a response") {
  const Message ok = Decoded(R"({"jsonrpc":"2.0","id":"s1","result":{"roots":[]}})");
  CHECK(ok.kind == MessageKind::kResponse);
  CHECK(keel::DumpCompact(ok.id) == R"("s1")");
  CHECK(ok.result.is_object());
  CHECK(ok.error.is_null());

  const Message failed = Decoded(R"({"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"no"}})");
  CHECK(failed.kind == MessageKind::kResponse);
  CHECK(keel::DumpCompact(failed.id) == "5");
  CHECK(failed.error.at("code").get<int>() == -1);
  CHECK(failed.result.is_null());
}

TEST_CASE("unparsable JSON is a parse error without an id") {
  for (const std::string& line :
       {std::string(R"({"jsonrpc":"2.0","id":1,"method":)"), std::string("not json"),
        std::string(R"({"jsonrpc":"2.0","id":1,"method":"a"}})"), std::string("{'id':1}")}) {
    const DecodeError e = Refused(line);
    CHECK(e.code == keel::kParseError);
    CHECK(RefusedId(e) == "<none>");
  }
}

TEST_CASE("invalid UTF-8 is a parse error without an id even when the id is readable") {
  const DecodeError in_string = Refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}");
  CHECK(in_string.code == keel::kParseError);
  CHECK(RefusedId(in_string) == "<none>");

  // An overlong '"' (C0 A2) must not be accepted as a quote either.
  const DecodeError overlong = Refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xC0\xA2}");
  CHECK(overlong.code == keel::kParseError);
  CHECK(RefusedId(overlong) == "<none>");
}

TEST_CASE("a JSON array is refused as batching with -32600 and no id") {
  for (const std::string& line :
       {std::string(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])"), std::string("[]")}) {
    const DecodeError e = Refused(line);
    CHECK(e.code == keel::kInvalidRequest);
    CHECK_THAT(e.message, Catch::Contains("Batching"));
    CHECK(RefusedId(e) == "<none>");
  }
}

TEST_CASE("a null, fractional, boolean or structured id is an invalid request without id") {
  for (const std::string id : {"null", "1.5", "true", "false", "{}", "[]", R"({"a":1})"}) {
    INFO("id: " << id);
    const DecodeError e = Refused(Request(id));
    CHECK(e.code == keel::kInvalidRequest);
    CHECK(RefusedId(e) == "<none>");
  }
}

TEST_CASE("a missing or wrong jsonrpc member with a valid id is -32600 echoing that id") {
  const std::string cases[][2] = {
      {R"({"id":7,"method":"ping"})", "7"},
      {R"({"jsonrpc":"1.0","id":"7","method":"ping"})", R"("7")"},
      {R"({"jsonrpc":2.0,"id":0,"method":"ping"})", "0"},
      {R"({"jsonrpc":null,"id":-1,"method":"ping"})", "-1"},
  };
  for (const auto& [line, id] : cases) {
    const DecodeError e = Refused(line);
    CHECK(e.code == keel::kInvalidRequest);
    CHECK(RefusedId(e) == id);
  }
}

TEST_CASE("a root that is neither an object nor an array is an invalid request without id") {
  for (const std::string line : {"42", R"("ping")", "null", "true", "-1.5"}) {
    const DecodeError e = Refused(line);
    CHECK(e.code == keel::kInvalidRequest);
    CHECK(RefusedId(e) == "<none>");
  }
}

TEST_CASE("a method that is not a string is an invalid request echoing the id") {
  for (const std::string method : {"42", "null", R"(["ping"])", "{}"}) {
    const DecodeError e = Refused(R"({"jsonrpc":"2.0","id":"m","method":)" + method + "}");
    CHECK(e.code == keel::kInvalidRequest);
    CHECK(RefusedId(e) == R"("m")");
  }
}

TEST_CASE("params that are not an object are invalid params echoing the id") {
  for (const std::string params : {"[1,2]", R"("x")", "3", "null"}) {
    INFO("params: " << params);
    const DecodeError e =
        Refused(R"({"jsonrpc":"2.0","id":9,"method":"tools/list","params":)" + params + "}");
    CHECK(e.code == keel::kInvalidParams);
    CHECK(RefusedId(e) == "9");
  }
  // A notification has no id to echo.
  const DecodeError n = Refused(R"({"jsonrpc":"2.0","method":"notifications/x","params":[]})");
  CHECK(n.code == keel::kInvalidParams);
  CHECK(RefusedId(n) == "<none>");
}

TEST_CASE("a response with both result and error, or neither, is an invalid request") {
  const DecodeError both = Refused(R"({"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1}})");
  CHECK(both.code == keel::kInvalidRequest);
  CHECK(RefusedId(both) == "4");

  const DecodeError neither = Refused(R"({"jsonrpc":"2.0","id":4})");
  CHECK(neither.code == keel::kInvalidRequest);
  CHECK(RefusedId(neither) == "4");

  // Without an id, a result is not a response to anything.
  const DecodeError no_id = Refused(R"({"jsonrpc":"2.0","result":{}})");
  CHECK(no_id.code == keel::kInvalidRequest);
  CHECK(RefusedId(no_id) == "<none>");
}

TEST_CASE("a request with a lone surrogate escape is decoded with its id and U+FFFD") {
  const Message message =
      Decoded(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"text":"cut \ud83d"}})");
  CHECK(message.id == 7);
  CHECK(message.params["text"] == "cut \xEF\xBF\xBD");
}

TEST_CASE("nesting deeper than 128 levels is a parse error, 128 levels still parse") {
  const DecodeError deep = Refused(NestedArrays(129));
  CHECK(deep.code == keel::kParseError);
  CHECK(RefusedId(deep) == "<none>");

  // 128 levels parse, and are then refused only as a batch.
  const DecodeError at_limit = Refused(NestedArrays(128));
  CHECK(at_limit.code == keel::kInvalidRequest);

  // Inside a request: root object + params object + 127 arrays = 129 levels.
  const DecodeError in_params =
      Refused(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":)" + NestedArrays(127) + "}}");
  CHECK(in_params.code == keel::kParseError);
  CHECK(RefusedId(in_params) == "<none>");

  // Brackets inside strings are not nesting.
  const Message quoted = Decoded(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"s":")" +
                                 std::string(300, '[') + R"(\"{{{"}})");
  CHECK(quoted.params.at("s").get<std::string>().size() == 304);
}

TEST_CASE("encoded messages are one compact line even when strings contain newlines") {
  const Json result = {{"text", "line1\nline2\r\n"}, {"list", {1, 2}}};
  const std::string r = keel::EncodeResult(1, result);
  CHECK_FALSE(HasRawNewline(r));
  CHECK(r == R"({"jsonrpc":"2.0","id":1,"result":{"list":[1,2],"text":"line1\nline2\r\n"}})");
  CHECK(Json::parse(r).at("result") == result);

  const std::string e =
      keel::EncodeError(Json("a"), keel::kInvalidParams, "bad\nthing", Json{{"why", "x\ny"}});
  CHECK_FALSE(HasRawNewline(e));
  CHECK(Json::parse(e).at("error").at("message").get<std::string>() == "bad\nthing");

  const std::string n = keel::EncodeNotification("notifications/message", {{"data", "a\nb"}});
  CHECK_FALSE(HasRawNewline(n));
  CHECK(n == R"({"jsonrpc":"2.0","method":"notifications/message","params":{"data":"a\nb"}})");
}

TEST_CASE("invalid UTF-8 in encoded values is replaced with U+FFFD instead of throwing") {
  const Json bad = {{"text", "ok\xff\xfe"}, {"bad\xC0key", "v"}};
  std::string r, e, n, d;
  REQUIRE_NOTHROW(r = keel::EncodeResult(1, bad));
  REQUIRE_NOTHROW(e = keel::EncodeError(Json(2), keel::kInternalError, "m\xff", bad));
  REQUIRE_NOTHROW(n = keel::EncodeNotification("notifications/x\xff", bad));
  REQUIRE_NOTHROW(d = keel::DumpCompact(Json("\xED\xA0\x80")));
  for (const std::string& line : {r, e, n, d}) {
    INFO("line: " << line);
    CHECK(keel::IsValidUtf8(line));
    CHECK_FALSE(HasRawNewline(line));
    CHECK(line.find("\xEF\xBF\xBD") != std::string::npos);
  }
  CHECK(Json::parse(r).at("result").at("text").get<std::string>() == "ok\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("an error without an id has no id member at all") {
  const std::string line = keel::EncodeError(std::nullopt, keel::kParseError, "Parse error");
  CHECK(line == R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}})");
  CHECK_FALSE(Json::parse(line).contains("id"));

  // With data, data is kept; a null data is left out.
  const Json with_data =
      Json::parse(keel::EncodeError(Json(0), keel::kInvalidParams, "m", {{"k", 1}}));
  CHECK(with_data.at("id").get<int>() == 0);
  CHECK(with_data.at("error").at("data").at("k").get<int>() == 1);
  CHECK_FALSE(Json::parse(keel::EncodeError(Json(0), 1, "m")).at("error").contains("data"));
}

TEST_CASE("IdKey distinguishes ids of different types and matches equal ids") {
  CHECK(keel::IdKey(Json(7)) != keel::IdKey(Json("7")));
  CHECK(keel::IdKey(Json(0)) != keel::IdKey(Json("0")));
  CHECK(keel::IdKey(Json(7)) == keel::IdKey(Json(7)));
  CHECK(keel::IdKey(Json("7")) == keel::IdKey(Json("7")));
  // Parsed ids (unsigned) and constructed ids (signed) of the same value share a key.
  CHECK(keel::IdKey(Decoded(Request("7")).id) == keel::IdKey(Json(7)));
  CHECK(keel::IdKey(Decoded(Request(R"("7")")).id) == keel::IdKey(Json("7")));
}

TEST_CASE("ids are written exactly as nlohmann writes them, at the integer limits too") {
  const Json ids[] = {Json(0),
                      Json(-1),
                      Json(std::numeric_limits<int64_t>::min()),
                      Json(std::numeric_limits<int64_t>::max()),
                      Json(std::numeric_limits<uint64_t>::max()),
                      Json("q\"u\\o\nte"),
                      Json("caf\u00e9")};
  for (const Json& id : ids) {
    INFO("id: " << id.dump());
    CHECK(keel::IdKey(id) == id.dump());
    CHECK(keel::EncodeResult(id, Json::object()) ==
          R"({"jsonrpc":"2.0","id":)" + id.dump() + R"(,"result":{}})");
  }
}

TEST_CASE("IsValidId accepts strings and integers only") {
  CHECK(keel::IsValidId(Json(0)));
  CHECK(keel::IsValidId(Json(-3)));
  CHECK(keel::IsValidId(Json(18446744073709551615ULL)));
  CHECK(keel::IsValidId(Json("")));
  CHECK_FALSE(keel::IsValidId(Json()));
  CHECK_FALSE(keel::IsValidId(Json(1.5)));
  CHECK_FALSE(keel::IsValidId(Json(true)));
  CHECK_FALSE(keel::IsValidId(Json::object()));
  CHECK_FALSE(keel::IsValidId(Json::array()));
}

}  // namespace json_rpc_test
