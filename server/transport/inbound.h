// Inbound: from one framed message (a line on stdio, a body on HTTP) to a decoded Message,
// answering what cannot be decoded. Shared by every transport, so a malformed message
// earns the same answer whatever carried it. Loop thread only (it writes to `replies`).
//
// Rules:
//  1. A blank line (spaces, tabs, CR only) is no message: skipped without an answer.
//  2. What DecodeLine refuses is answered on `replies` with its error (-32700, -32600,
//     -32602) and logged at debug; a notification is never answered (CAN-3), only logged.
//  3. A line longer than the transport's limit was skipped unread: it gets one -32600
//     without an id (none could be read) naming the limit.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "protocol/json_rpc.h"
#include "server/transport/output_sink.h"

namespace keel {

// The message in `line` (without its newline), or nullopt when there is none to deliver
// (rules 1 and 2: any answer is already on `replies`).
std::optional<Message> DecodeInbound(std::string_view line, OutputSink& replies);

// Rule 3: a line of `bytes` exceeded `max_line_bytes` (--max-line-bytes).
void AnswerOversizedLine(OutputSink& replies, size_t bytes, size_t max_line_bytes);

}  // namespace keel
