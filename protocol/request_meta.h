// RequestMeta: what keel keeps of a request's params._meta. MCP lets a client put anything
// there; keel reads a few keys, and a call that waits in the queue, runs, or is stored as a
// task must not hold the rest (six queued calls with a 14 MB _meta array once held 690 MB).
// KeepUsedMeta keeps the keys keel reads, each bounded in size, and drops every other.
// Pure functions; reentrant; never throw.
//
// The keys kept (the table in request_meta.cc), each at most kMaxMetaValueBytes encoded:
//   progressToken             echoed on every progress notification of the call: a string
//                             or any number (null: none); another kind is a problem
//   dev.keel/idempotency-key  keel's idempotency key (1 to 255 characters are valid)
//   traceparent               W3C trace context: the parent of the call's span
// To keep another (the 2026-07-28 revision's io.modelcontextprotocol/protocolVersion,
// clientCapabilities, clientInfo and logLevel; tracestate, baggage), add its row to that
// table, with its bound and, when only some values are valid, a check.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// A kept value larger than this (compact JSON) is refused: the longest valid value of any kept
// key is a few hundred bytes.
inline constexpr size_t kMaxMetaValueBytes = 1024;

// Replaces `meta` by an object holding only its kept keys (moved out; the rest is freed), and
// a `meta` that is not an object by null. Returns the problem instead, leaving `meta` as it
// was, when a kept value is too large or not of a kind its key allows, for a -32602:
// "_meta.traceparent is larger than 1024 bytes", "_meta.progressToken must be a string or a
// number, got boolean".
std::optional<std::string> KeepUsedMeta(Json& meta);

// About the size of `value` as compact JSON (strings without their escapes, every number 24
// bytes), counted only until it passes `limit`: measuring a huge value costs no more than a
// value of `limit` bytes.
size_t EncodedSizeUpTo(const Json& value, size_t limit);

}  // namespace keel
