// HttpGuard: who may talk to keel's HTTP endpoint (reference/mcp-2026-07-28.md §3.6), decided
// before anything else reads the request. Pure; reentrant.
//
// Rules, in this order (the first that refuses answers):
//  1. Origin: a request without one is allowed (non-browser clients send none). One that
//     names a loopback host (localhost, 127.0.0.1, [::1], any port, http or https) or equals
//     an --http-allow-origin entry is allowed; any other (including "null") is 403: a web
//     page the user opened must not drive keel.
//  2. Host, when keel listens on a loopback address (DNS rebinding): the Host header must
//     name a loopback host (any port); anything else, or none, is 403.
//  3. Bearer token, when one is configured (--http-token-file): `Authorization: Bearer <t>`
//     with t equal to the token, compared in constant time; else 401 with
//     `WWW-Authenticate: Bearer`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/transport/http/http_server.h"

namespace keel {

struct GuardOptions {
  bool loopback_bind = true;
  std::vector<std::string> allowed_origins;  // exact "scheme://host[:port]"
  std::string token;                         // empty: no token required
};

struct GuardVerdict {
  int status = 0;  // 0: allowed
  std::string reason;
  HttpHeaders headers;
};

GuardVerdict CheckAccess(const HttpRequest& request, const GuardOptions& options);

// The host of a Host header or of an Origin's authority, without the port ("[::1]:80" ->
// "[::1]").
std::string_view HostPart(std::string_view authority);
bool IsLoopbackHost(std::string_view host);
// True when `host` (an address or a name) is a loopback address.
bool IsLoopbackBind(const std::string& host);
// Equal strings, in time that depends only on their lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace keel
