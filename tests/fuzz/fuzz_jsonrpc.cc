// fuzz_jsonrpc: bytes as keel reads them from stdin, through what the event loop does with
// them up to a decoded message or the error line it writes back: LineFramer (size cap,
// CRLF), blank lines skipped, DecodeLine (UTF-8 check, nesting guard, ParseJson, envelope),
// EncodeError / EncodeResult.
//
// Input: the stream, lines separated by "\n" (a corpus file is a few JSON-RPC lines).
// Checked, besides "no crash, leak, UB or hang":
//  1. framing: whatever the read chunk sizes, the framer delivers exactly the "\n"-separated
//     pieces (one trailing "\r" dropped), each one longer than the cap as oversized instead;
//  2. ParseJson builds the very value nlohmann::json::parse builds (json_parser.h's contract),
//     except where the input nests deeper than the parser's limit, and with lone surrogate
//     escapes read as U+FFFD (nlohmann is shown them as \ufffd);
//  3. DecodeLine's verdict: not UTF-8 or not JSON is -32700; an error's id is absent or a
//     valid id; a notification's error is -32602 without an id; requests and responses have
//     valid ids;
//  4. every line keel would write back (the error, or a result echoing the id and params) is
//     one line of UTF-8 JSON that decodes to a response with the same id (the same number:
//     an id of -0 comes back as 0, which JSON cannot tell apart);
//  5. DumpCompact of arbitrary bytes as a string (a tool's output) never throws and is UTF-8.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_support.h"
#include "protocol/bounded_json.h"
#include "protocol/error_codes.h"
#include "protocol/json_parser.h"
#include "protocol/json_rpc.h"
#include "protocol/line_framer.h"
#include "protocol/utf8.h"

namespace keel {
namespace {

constexpr int kMaxDepth = kMaxJsonDepth;  // DecodeLine's nesting guard (bounded_json.h)

// session.cc's IsBlank: such lines are skipped without an answer.
bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// A line keel writes: one line of UTF-8 JSON, a JSON-RPC 2.0 object.
Json CheckOutputLine(const std::string& out) {
  FUZZ_CHECK(out.find('\n') == std::string::npos);
  FUZZ_CHECK(IsValidUtf8(out));
  Json value;
  FUZZ_CHECK(ParseJson(out, kMaxDepth + 8, value));
  FUZZ_CHECK(value.is_object());
  FUZZ_CHECK(value.at("jsonrpc") == "2.0");
  return value;
}

// Check 1: the framer against a plain split of the whole input.
void CheckFraming(std::string_view input, const uint8_t* data) {
  const size_t cap = input.size() / 2;  // some lines fit, some do not
  struct Event {
    bool oversized;
    std::string line;  // the line, or empty when oversized
    size_t bytes;      // oversized: the size reported
  };
  std::vector<Event> got;
  LineFramer framer(
      cap,
      [&](std::string_view line) {
        got.push_back({false, std::string(line), 0});
      },
      [&](size_t bytes) {
        got.push_back({true, "", bytes});
      });
  for (size_t at = 0, k = 0; at < input.size(); ++k) {
    const size_t n = 1 + data[k % input.size()] % 31;  // read sizes taken from the input
    framer.Feed(input.substr(at, n));
    at += n < input.size() - at ? n : input.size() - at;
    FUZZ_CHECK(framer.buffered() <= cap + 1);  // invariant 3: never more than the cap
  }
  framer.Finish();

  std::vector<std::string_view> pieces;
  size_t start = 0;
  for (size_t nl; (nl = input.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    pieces.push_back(input.substr(start, nl - start));
  }
  if (start < input.size()) pieces.push_back(input.substr(start));

  FUZZ_CHECK(got.size() == pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string_view piece = pieces[i];
    const size_t raw = piece.size();
    if (!piece.empty() && piece.back() == '\r') piece.remove_suffix(1);
    if (piece.size() > cap) {
      FUZZ_CHECK(got[i].oversized);
      FUZZ_CHECK(got[i].bytes == raw || got[i].bytes == piece.size());
    } else {
      FUZZ_CHECK(!got[i].oversized);
      FUZZ_CHECK(got[i].line == piece);
    }
  }
}

// Check 2: ParseJson against nlohmann.
void CheckParser(std::string_view line) {
  Json ours;
  const bool ok = ParseJson(line, kMaxDepth, ours);
  const Json theirs = Json::parse(fuzz::WithLoneSurrogatesReplaced(line), nullptr,
                                  /*allow_exceptions=*/false);
  if (ok) {
    FUZZ_CHECK(!theirs.is_discarded());
    FUZZ_CHECK(fuzz::Same(ours, theirs));
  } else {
    FUZZ_CHECK(theirs.is_discarded() || fuzz::Depth(theirs, kMaxDepth) > kMaxDepth);
  }
}

// Checks 3 and 4 for one line.
void CheckDecode(std::string_view line) {
  DecodeResult decoded = DecodeLine(line);
  if (const auto* error = std::get_if<DecodeError>(&decoded)) {
    if (!IsValidUtf8(line)) FUZZ_CHECK(error->code == kParseError);
    FUZZ_CHECK(!error->id || IsValidId(*error->id));
    if (error->notification) {
      FUZZ_CHECK(error->code == kInvalidParams && !error->id);
      return;  // never answered
    }
    const Json out = CheckOutputLine(EncodeError(error->id, error->code, error->message));
    FUZZ_CHECK(out.at("error").at("code") == error->code);
    FUZZ_CHECK(error->id ? fuzz::Same(out.at("id"), *error->id, /*any_integer_kind=*/true)
                         : !out.contains("id"));
    return;
  }
  const Message& message = std::get<Message>(decoded);
  FUZZ_CHECK(IsValidUtf8(line));
  if (message.kind == MessageKind::kNotification) return;
  FUZZ_CHECK(IsValidId(message.id));
  FUZZ_CHECK(IdKey(message.id) == DumpCompact(message.id));
  if (message.kind != MessageKind::kRequest) return;
  FUZZ_CHECK(message.params.is_null() || message.params.is_object());
  // A result that echoes the request's params (what the echo tool does, in effect).
  const std::string out = EncodeResult(message.id, message.params);
  CheckOutputLine(out);
  DecodeResult again = DecodeLine(out);
  const Message* response = std::get_if<Message>(&again);
  FUZZ_CHECK(response != nullptr && response->kind == MessageKind::kResponse);
  FUZZ_CHECK(fuzz::Same(response->id, message.id, /*any_integer_kind=*/true));
  FUZZ_CHECK(fuzz::Same(response->result, message.params, /*any_integer_kind=*/true));
}

}  // namespace
}  // namespace keel

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keel;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (!input.empty()) CheckFraming(input, data);

  // What the event loop does: lines under the real cap (--max-line-bytes, 16 MiB by
  // default, far above any input here), blank ones skipped.
  LineFramer framer(
      size_t{16} << 20,
      [](std::string_view line) {
        if (IsBlank(line)) return;
        CheckParser(line);
        CheckDecode(line);
      },
      [](size_t) { FUZZ_CHECK(false); });
  framer.Feed(input);
  framer.Finish();

  // Check 5: a tool's output, any bytes at all, as a JSON string.
  const std::string dumped = DumpCompact(Json(std::string(input)));
  FUZZ_CHECK(IsValidUtf8(dumped) && dumped.find('\n') == std::string::npos);
  return 0;
}
