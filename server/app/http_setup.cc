#include "server/app/http_setup.h"

#include <cctype>
#include <optional>
#include <string>

#include "protocol/text_file.h"
#include "server/app/exit_codes.h"

namespace keel {

namespace {

bool AllDigits(const std::string& s) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool ParseListenAddress(const std::string& address, std::string* host, uint16_t* port) {
  std::string port_text;
  if (AllDigits(address)) {
    *host = "127.0.0.1";
    port_text = address;
  } else if (!address.empty() && address.front() == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return false;
    }
    *host = address.substr(1, close - 1);
    port_text = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    *host = address.substr(0, colon);
    if (host->find(':') != std::string::npos) return false;  // IPv6 needs brackets
    port_text = address.substr(colon + 1);
  }
  if (!AllDigits(port_text)) return false;
  const unsigned long value = std::stoul(port_text);
  if (value > 65535) return false;
  *port = static_cast<uint16_t>(value);
  return !host->empty();
}

HttpSetup PrepareHttp(const CliOptions& flags, std::ostream& err) {
  HttpSetup setup;
  if (flags.http.empty()) {
    if (flags.no_stdio) {
      err << "keel: --no-stdio needs --http (otherwise keel would serve nobody)\n";
      setup.exit_code = kExitUsage;
    }
    return setup;
  }
  McpHttpOptions options;
  if (!ParseListenAddress(flags.http, &options.server.host, &options.server.port)) {
    err << "keel: --http " << flags.http << ": expected HOST:PORT, [IPv6]:PORT or PORT\n";
    setup.exit_code = kExitUsage;
    return setup;
  }
  if (flags.http_path.empty() || flags.http_path.front() != '/') {
    err << "keel: --http-path must start with '/'\n";
    setup.exit_code = kExitUsage;
    return setup;
  }
  options.path = flags.http_path;
  options.guard.loopback_bind = IsLoopbackBind(options.server.host);
  options.guard.allowed_origins = flags.http_allow_origins;
  if (!flags.http_token_file.empty()) {
    std::string why;
    const std::optional<std::string> text = ReadTextFile(flags.http_token_file, &why);
    if (!text) {
      err << "keel: cannot read --http-token-file " << flags.http_token_file << ": " << why << "\n";
      setup.exit_code = kExitNoInput;
      return setup;
    }
    const std::string line = text->substr(0, text->find('\n'));
    const size_t begin = line.find_first_not_of(" \t\r");
    const size_t end = line.find_last_not_of(" \t\r");
    if (begin == std::string::npos) {
      err << "keel: --http-token-file " << flags.http_token_file << " is empty\n";
      setup.exit_code = kExitConfig;
      return setup;
    }
    options.guard.token = line.substr(begin, end - begin + 1);
  } else if (!options.guard.loopback_bind && !flags.http_insecure_no_auth) {
    err << "keel: --http " << flags.http
        << " is not a loopback address: anyone who reaches it could call every tool. Pass "
           "--http-token-file FILE (clients send Authorization: Bearer TOKEN), or "
           "--http-insecure-no-auth if something in front of keel authenticates\n";
    setup.exit_code = kExitUsage;
    return setup;
  }
  options.server.max_body_bytes = flags.max_line_bytes;
  options.server.max_connections = flags.http_max_connections;
  options.server.idle_timeout = Millis(flags.http_idle_timeout_ms);
  options.sse_keepalive = Millis(flags.sse_keepalive_ms);
  options.stream_bytes = flags.outbox_bytes;
  options.max_sessions = flags.http_max_sessions;
  setup.options = std::move(options);
  return setup;
}

}  // namespace keel
