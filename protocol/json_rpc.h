// JSON-RPC 2.0 codec for MCP over stdio: one line in -> a Message or a DecodeError;
// values out -> one compact line. Pure functions, reentrant; never throws.
//
// Rules (MCP 2025-11-25 basic/index, transports):
//  1. Ids are strings or integers and are kept as the exact JSON value, so they are echoed
//     with their type ("7" and 7 differ; 0 is a valid id). null, fractional, boolean or
//     structured ids are invalid requests.
//  2. An error whose id could not be read carries no "id" member at all (never "id": null).
//  3. Unparsable JSON or invalid UTF-8 -> -32700; a JSON array (batch) -> -32600
//     "Batching not supported"; a non-object root or a bad envelope -> -32600.
//  4. Encoded lines are compact, contain no raw newline, and replace invalid UTF-8 coming
//     from tools instead of throwing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

enum class MessageKind { kRequest, kNotification, kResponse };

struct Message {
  MessageKind kind = MessageKind::kNotification;
  Json id;             // requests and responses; a string or integer JSON value
  std::string method;  // requests and notifications
  Json params;         // an object, or null when absent
  Json result;         // responses: "result" or "error" member (the other is null)
  Json error;
};

struct DecodeError {
  int code = 0;
  std::string message;
  std::optional<Json> id;  // set only when the id was readable and valid
  // A well-formed notification with bad params: JSON-RPC never answers a notification,
  // so the caller logs this and sends nothing.
  bool notification = false;
};

using DecodeResult = std::variant<Message, DecodeError>;

// Decodes one line (without its newline). A blank line is the caller's business.
DecodeResult DecodeLine(std::string_view line);

// True for a JSON value that may serve as a request id (string or integer).
bool IsValidId(const Json& id);

// Identity of an id for maps: distinct for 7 and "7".
std::string IdKey(const Json& id);

// One compact line, without the trailing newline.
// `members`: already-encoded members (`"key":value,...`) added to `result`, an object that has
// none of their keys (the caller's promise); ignored when `result` is not an object. So a
// fixed addition is encoded once, not rebuilt as JSON for every response.
std::string EncodeResult(const Json& id, const Json& result, std::string_view members = {});
std::string EncodeError(const std::optional<Json>& id, int code, std::string_view message,
                        const Json& data = Json());
std::string EncodeNotification(std::string_view method, const Json& params);
// A request keel sends (a legacy client's tools' questions, server/input/client_requests.h).
std::string EncodeRequest(const Json& id, std::string_view method, const Json& params);

// Compact serialisation that never throws: invalid UTF-8 is replaced by U+FFFD.
std::string DumpCompact(const Json& value);
// The same text appended to `out`, without a string of its own.
void AppendCompact(std::string& out, const Json& value);

}  // namespace keel
