// HttpSetup: from the --http flags to what the HTTP transport needs (McpHttpOptions),
// checked before keel starts anything else, so a bad address or a missing token file is a
// clear start-up error (exit 64 or 66 or 78), never a surprise at the first request.
//
// Rules:
//  1. --http is HOST:PORT, [IPv6]:PORT or PORT (then 127.0.0.1). PORT 0 picks a free port
//     (logged, and printed on stderr as "keel: listening on http://HOST:PORT/PATH").
//  2. A non-loopback HOST needs --http-token-file or --http-insecure-no-auth (exit 64).
//  3. The token is the token file's first line, without surrounding spaces; an empty or
//     unreadable file is exit 66 (missing) or 78 (empty).
//  4. --no-stdio without --http is exit 64.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "server/app/cli_options.h"
#include "server/transport/http/mcp_http.h"

namespace keel {

struct HttpSetup {
  std::optional<McpHttpOptions> options;  // nullopt: no --http
  std::optional<int> exit_code;           // set: keel must exit (the reason is written)
};

// Rule 1: host and port of `address`; false when it is not of that form.
bool ParseListenAddress(const std::string& address, std::string* host, uint16_t* port);

HttpSetup PrepareHttp(const CliOptions& flags, std::ostream& err);

}  // namespace keel
