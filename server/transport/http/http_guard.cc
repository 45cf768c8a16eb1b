#include "server/transport/http/http_guard.h"

#include <algorithm>
#include <cctype>

#include <arpa/inet.h>

namespace keel {

namespace {

bool OriginAllowed(std::string_view origin, const GuardOptions& options) {
  for (const std::string& allowed : options.allowed_origins) {
    if (AsciiLower(allowed) == AsciiLower(origin)) return true;
  }
  std::string lower = AsciiLower(origin);
  std::string_view rest = lower;
  if (rest.substr(0, 7) == "http://") {
    rest.remove_prefix(7);
  } else if (rest.substr(0, 8) == "https://") {
    rest.remove_prefix(8);
  } else {
    return false;  // "null", file:, anything without an authority
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    rest = rest.substr(0, slash);
  }
  return IsLoopbackHost(HostPart(rest));
}

}  // namespace

std::string_view HostPart(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    return close == std::string_view::npos ? authority : authority.substr(0, close + 1);
  }
  const size_t colon = authority.rfind(':');
  return colon == std::string_view::npos ? authority : authority.substr(0, colon);
}

bool IsLoopbackHost(std::string_view host) {
  const std::string h = AsciiLower(host);
  return h == "localhost" || h == "127.0.0.1" || h == "[::1]";
}

bool IsLoopbackBind(const std::string& host) {
  if (AsciiLower(host) == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  std::string bare = host;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, bare.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

GuardVerdict CheckAccess(const HttpRequest& request, const GuardOptions& options) {
  if (const auto origin = request.Header("origin")) {
    if (!OriginAllowed(*origin, options)) {
      return {403, "origin not allowed: " + std::string(*origin), {}};
    }
  }
  if (options.loopback_bind) {
    const auto host = request.Header("host");
    if (!host || !IsLoopbackHost(HostPart(*host))) {
      return {403, "host not allowed: " + std::string(host.value_or("(none)")), {}};
    }
  }
  if (!options.token.empty()) {
    const auto auth = request.Header("authorization");
    constexpr std::string_view kBearer = "bearer ";
    bool ok = false;
    if (auth && auth->size() > kBearer.size() &&
        AsciiLower(auth->substr(0, kBearer.size())) == kBearer) {
      std::string_view presented = auth->substr(kBearer.size());
      while (!presented.empty() && (presented.front() == ' ' || presented.front() == '\t')) {
        presented.remove_prefix(1);
      }
      while (!presented.empty() && (presented.back() == ' ' || presented.back() == '\t')) {
        presented.remove_suffix(1);
      }
      ok = ConstantTimeEquals(presented, options.token);
    }
    if (!ok) {
      return {
          401, "missing or wrong bearer token", {{"WWW-Authenticate", "Bearer realm=\"keel\""}}};
    }
  }
  return {};
}

}  // namespace keel
