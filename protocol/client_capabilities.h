// What a client must declare in its ClientCapabilities for the server to send it an input
// request (MCP 2026-07-28 multi round-trip requests; the same rule for a 2025-11-25 client's
// server-to-client requests): elicitation/create needs `elicitation`, in the mode asked ({}
// means form only; url needs `url`); sampling/createMessage needs `sampling`, and
// `sampling.tools` when it passes tools or toolChoice; roots/list needs `roots`. Pure
// functions; never throw.
#pragma once

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// The capabilities the input requests of `input_requests` (key -> {method, params}) need that
// `client_capabilities` do not declare, as a ClientCapabilities object; empty when nothing is
// missing. Values that are not objects, and unknown methods, need nothing.
Json MissingCapabilities(const Json& input_requests, const Json& client_capabilities);

}  // namespace keel
