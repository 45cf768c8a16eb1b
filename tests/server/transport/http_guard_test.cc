// HttpGuard (server/transport/http/http_guard.h): who may talk to keel's HTTP endpoint —
// the Origin rule, the Host rule of a loopback bind (DNS rebinding), the bearer token, in
// that order; and the helpers they rest on (HostPart, IsLoopbackHost, IsLoopbackBind,
// ConstantTimeEquals). Reference: reference/mcp-2026-07-28.md §3.6.
#include "server/transport/http/http_guard.h"

#include <string>
#include <utility>

#include <catch2/catch.hpp>

namespace keel::http_guard_test {
namespace {

HttpRequest HttpGuardRequest(HttpHeaders headers) {
  HttpRequest request;
  request.method = "POST";
  request.path = "/mcp";
  request.headers = std::move(headers);
  return request;
}

// A request with a loopback Host and `extra` headers.
HttpRequest HttpGuardLocal(HttpHeaders extra = {}) {
  HttpHeaders headers = {{"host", "127.0.0.1:8765"}};
  for (auto& h : extra) headers.push_back(std::move(h));
  return HttpGuardRequest(std::move(headers));
}

int HttpGuardStatus(const HttpRequest& request, const GuardOptions& options = {}) {
  return CheckAccess(request, options).status;
}

}  // namespace

TEST_CASE("A request without an Origin is allowed", "[http][guard][HTTP-2]") {
  CHECK(HttpGuardStatus(HttpGuardLocal()) == 0);
}

TEST_CASE("An Origin naming a loopback host is allowed on any port and scheme",
          "[http][guard][HTTP-2]") {
  for (const std::string origin :
       {"http://localhost", "http://localhost:3000", "https://localhost:443", "http://127.0.0.1",
        "http://127.0.0.1:8765", "https://127.0.0.1:1", "http://[::1]", "http://[::1]:8080",
        "HTTP://LOCALHOST:3000", "http://localhost:3000/some/path"}) {
    INFO(origin);
    CHECK(HttpGuardStatus(HttpGuardLocal({{"origin", origin}})) == 0);
  }
}

TEST_CASE("Any other Origin is refused with 403", "[http][guard][HTTP-2]") {
  for (const std::string origin :
       {"http://evil.example.com", "https://evil.example.com:443", "null", "file://",
        "http://localhost.evil.com", "http://127.0.0.1.evil.com", "http://evil.com#@localhost",
        "http://localhost@evil.com", "ftp://localhost", "localhost", "http://192.168.1.1",
        "http://[::2]", ""}) {
    INFO(origin);
    const GuardVerdict verdict = CheckAccess(HttpGuardLocal({{"origin", origin}}), {});
    CHECK(verdict.status == 403);
    CHECK_FALSE(verdict.reason.empty());
  }
}

TEST_CASE("An Origin listed in allowed_origins is allowed exactly", "[http][guard][HTTP-2]") {
  GuardOptions options;
  options.allowed_origins = {"https://app.example.com"};
  CHECK(HttpGuardStatus(HttpGuardLocal({{"origin", "https://app.example.com"}}), options) == 0);
  CHECK(HttpGuardStatus(HttpGuardLocal({{"origin", "https://APP.example.com"}}), options) == 0);
  CHECK(HttpGuardStatus(HttpGuardLocal({{"origin", "http://app.example.com"}}), options) == 403);
  CHECK(HttpGuardStatus(HttpGuardLocal({{"origin", "https://app.example.com:8443"}}), options) ==
        403);
  CHECK(HttpGuardStatus(HttpGuardLocal({{"origin", "https://evil.example.com"}}), options) == 403);
}

TEST_CASE("On a loopback bind the Host must name a loopback host", "[http][guard][HTTP-2]") {
  for (const std::string host : {"localhost", "localhost:8765", "127.0.0.1", "127.0.0.1:8765",
                                 "[::1]", "[::1]:8765", "LocalHost:1"}) {
    INFO(host);
    CHECK(HttpGuardStatus(HttpGuardRequest({{"host", host}})) == 0);
  }
  for (const std::string host : {"evil.example.com", "evil.example.com:8765", "127.0.0.1.nip.io",
                                 "localhost.evil.com", "192.168.1.1:8765", "0.0.0.0", ""}) {
    INFO(host);
    CHECK(HttpGuardStatus(HttpGuardRequest({{"host", host}})) == 403);
  }
}

TEST_CASE("On a loopback bind a request without a Host is refused", "[http][guard][HTTP-2]") {
  CHECK(HttpGuardStatus(HttpGuardRequest({})) == 403);
}

TEST_CASE("On a non-loopback bind any Host is allowed", "[http][guard][HTTP-2]") {
  GuardOptions options;
  options.loopback_bind = false;
  CHECK(HttpGuardStatus(HttpGuardRequest({{"host", "mcp.example.com"}}), options) == 0);
  CHECK(HttpGuardStatus(HttpGuardRequest({}), options) == 0);
  // The Origin rule still holds.
  CHECK(HttpGuardStatus(
            HttpGuardRequest({{"host", "mcp.example.com"}, {"origin", "http://evil.example.com"}}),
            options) == 403);
}

TEST_CASE("A configured token is required as a bearer token", "[http][guard][HTTP-2]") {
  GuardOptions options;
  options.token = "s3cret-token";
  const GuardVerdict missing = CheckAccess(HttpGuardLocal(), options);
  CHECK(missing.status == 401);
  bool has_challenge = false;
  for (const auto& [name, value] : missing.headers) {
    if (AsciiLower(name) == "www-authenticate") {
      has_challenge = true;
      CHECK(value.rfind("Bearer", 0) == 0);
    }
  }
  CHECK(has_challenge);

  for (const std::string wrong : {"Bearer wrong", "Bearer s3cret-token2", "Bearer s3cret-toke",
                                  "Bearer ", "Bearer", "Basic s3cret-token", "s3cret-token"}) {
    INFO(wrong);
    const GuardVerdict verdict = CheckAccess(HttpGuardLocal({{"authorization", wrong}}), options);
    CHECK(verdict.status == 401);
    CHECK_FALSE(verdict.headers.empty());
  }
  CHECK(HttpGuardStatus(HttpGuardLocal({{"authorization", "Bearer s3cret-token"}}), options) == 0);
  // Spaces around the token are optional whitespace (RFC 9110 §11.1: 1*SP after the scheme).
  CHECK(HttpGuardStatus(HttpGuardLocal({{"authorization", "Bearer  s3cret-token"}}), options) == 0);
  CHECK(HttpGuardStatus(HttpGuardLocal({{"authorization", "Bearer s3cret-token "}}), options) == 0);
  // The scheme is case-insensitive (RFC 9110 §11.1).
  CHECK(HttpGuardStatus(HttpGuardLocal({{"authorization", "bearer s3cret-token"}}), options) == 0);
}

TEST_CASE("Without a configured token no Authorization is needed", "[http][guard][HTTP-2]") {
  CHECK(HttpGuardStatus(HttpGuardLocal({{"authorization", "Bearer anything"}})) == 0);
}

TEST_CASE("The Origin rule answers before the Host and token rules", "[http][guard][HTTP-2]") {
  GuardOptions options;
  options.token = "t";
  CHECK(HttpGuardStatus(
            HttpGuardRequest({{"host", "evil.example.com"}, {"origin", "http://evil.example.com"}}),
            options) == 403);
  // A bad Host is 403 before the missing token's 401.
  CHECK(HttpGuardStatus(HttpGuardRequest({{"host", "evil.example.com"}}), options) == 403);
}

TEST_CASE("IsLoopbackBind knows the loopback addresses and names", "[http][guard][HTTP-2]") {
  CHECK(IsLoopbackBind("127.0.0.1"));
  CHECK(IsLoopbackBind("127.1.2.3"));
  CHECK(IsLoopbackBind("::1"));
  CHECK(IsLoopbackBind("[::1]"));
  CHECK(IsLoopbackBind("localhost"));
  CHECK(IsLoopbackBind("LOCALHOST"));
  CHECK_FALSE(IsLoopbackBind("0.0.0.0"));
  CHECK_FALSE(IsLoopbackBind("::"));
  CHECK_FALSE(IsLoopbackBind("192.168.1.1"));
  CHECK_FALSE(IsLoopbackBind("example.com"));
  CHECK_FALSE(IsLoopbackBind(""));
}

TEST_CASE("HostPart drops the port of a host or a bracketed IPv6 address",
          "[http][guard][HTTP-2]") {
  CHECK(HostPart("localhost:8080") == "localhost");
  CHECK(HostPart("localhost") == "localhost");
  CHECK(HostPart("127.0.0.1:1") == "127.0.0.1");
  CHECK(HostPart("[::1]:80") == "[::1]");
  CHECK(HostPart("[::1]") == "[::1]");
  CHECK(IsLoopbackHost("[::1]"));
  CHECK(IsLoopbackHost("LOCALHOST"));
  CHECK_FALSE(IsLoopbackHost("::1:80"));
  CHECK_FALSE(IsLoopbackHost("evil.example.com"));
}

TEST_CASE("ConstantTimeEquals compares whole strings", "[http][guard][HTTP-2]") {
  CHECK(ConstantTimeEquals("", ""));
  CHECK(ConstantTimeEquals("token", "token"));
  CHECK_FALSE(ConstantTimeEquals("token", "tokex"));
  CHECK_FALSE(ConstantTimeEquals("token", "token2"));
  CHECK_FALSE(ConstantTimeEquals("token", "toke"));
  CHECK_FALSE(ConstantTimeEquals("", "x"));
  CHECK_FALSE(ConstantTimeEquals(std::string_view("a\0", 2), "a"));
}

}  // namespace keel::http_guard_test
