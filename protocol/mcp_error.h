// RpcError and Decoded<T>: the typed form of a JSON-RPC error keel answers, and what a
// decoder returns (the typed value, or the error to send instead). Pure values and
// functions; reentrant; never throw.
//
// The constructors below are the errors a request can earn before any work starts
// (dispatch, lifecycle, params). Their text is the text keel has always sent: the
// transcripts in conformance/ compare it byte for byte, so a change here is a protocol
// change. Client-chosen text (a method or tool name, an id) is quoted at most
// kMaxQuotedBytes long, then "..." (QuoteForError).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

struct RpcError {
  int code = 0;
  std::string message;
  Json data;  // null: no "data" member

  bool operator==(const RpcError&) const = default;
};

// The response line for `error` (EncodeError): `id` absent when it could not be read.
std::string EncodeRpcError(const std::optional<Json>& id, const RpcError& error);

// Either the decoded value or the error that answers the request instead.
template <typename T>
class Decoded {
 public:
  Decoded(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Decoded(RpcError error) : value_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(value_); }
  T& value() { return std::get<T>(value_); }
  const T& value() const { return std::get<T>(value_); }
  const RpcError& error() const { return std::get<RpcError>(value_); }

 private:
  std::variant<T, RpcError> value_;
};

inline constexpr size_t kMaxQuotedBytes = 80;
// `text` as quoted back in an error message: cut to kMaxQuotedBytes, then "...".
std::string QuoteForError(std::string_view text);

// -32602 "Invalid params: <what>".
RpcError InvalidParams(std::string_view what);

// Dispatch and lifecycle.
RpcError MethodNotFound(std::string_view method);  // -32601, any time
RpcError NotInitialized();                         // -32600, before initialize
RpcError AlreadyInitialized();                     // -32600, a second initialize
RpcError IdInFlight(const Json& id);               // -32600, an id still being served

// tools/call: `name` names no tool (-32602).
RpcError UnknownTool(std::string_view name);
// tools/list: a cursor keel did not mint, or past the end of the list (-32602).
RpcError InvalidToolsCursor();
// tools/call of tool `name` with params.task, where its execution.taskSupport is
// "forbidden" (-32601); without, where it is "required" (-32601).
RpcError TaskForbidden(std::string_view name);
RpcError TaskRequired(std::string_view name);
// MCP 2026-07-28: a request that needs the tasks extension (io.modelcontextprotocol/tasks)
// and does not declare it in its clientCapabilities.extensions (-32021, with
// data.requiredCapabilities naming it). `what` says what needed it.
RpcError TasksExtensionRequired(std::string_view what);

}  // namespace keel
