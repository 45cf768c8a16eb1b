// A tiny blocking HTTP/1.1 client for the Streamable HTTP tests: raw request text over a
// POSIX socket to 127.0.0.1, read until EOF, and a parser for what came back (status line,
// headers, body; chunked bodies de-chunked; SSE events). Meant for a client thread while
// the test thread runs keel's EventLoop. Header-only; every name starts with Http so the
// unity build cannot mix them up with other tests' helpers.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

namespace keel::http_test_client {

using HttpHeaderList = std::vector<std::pair<std::string, std::string>>;

inline std::string HttpLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

struct HttpReply {
  int status = 0;          // 0: no status line came
  HttpHeaderList headers;  // names lower-cased, in order
  std::string body;        // de-chunked when chunked
  bool chunked = false;
  bool chunked_complete = false;  // the last chunk came
  std::string raw;

  std::optional<std::string> Header(std::string_view lower_name) const {
    for (const auto& [name, value] : headers) {
      if (name == lower_name) return value;
    }
    return std::nullopt;
  }
};

// A blocking TCP socket connected to 127.0.0.1:`port`, or -1. Send and receive time out
// after `timeout_ms` so that a broken test fails instead of hanging.
inline int HttpConnect(uint16_t port, int timeout_ms = 20000) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{};
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline bool HttpSendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Closes `fd` with a reset instead of a FIN (SO_LINGER 0): an abandoned connection.
inline void HttpCloseAbruptly(int fd) {
  linger lg{};
  lg.l_onoff = 1;
  lg.l_linger = 0;
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  close(fd);
}

// Reads until EOF, an error or the receive timeout. `on_data`, when set, sees everything
// read so far after each piece.
inline std::string HttpReadToEnd(int fd,
                                 const std::function<void(const std::string&)>& on_data = {}) {
  std::string text;
  char buf[8192];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (on_data) on_data(text);
  }
  return text;
}

// The data of a chunked body, as far as whole chunks go. `complete` is set when the last
// (zero-size) chunk was seen.
inline std::string HttpDechunk(std::string_view text, bool* complete = nullptr) {
  std::string out;
  if (complete != nullptr) *complete = false;
  size_t pos = 0;
  for (;;) {
    const size_t line_end = text.find("\r\n", pos);
    if (line_end == std::string_view::npos) break;
    const std::string size_text(text.substr(pos, line_end - pos));
    char* end = nullptr;
    const unsigned long size = std::strtoul(size_text.c_str(), &end, 16);
    if (end == size_text.c_str()) break;  // not a chunk-size line
    if (size == 0) {
      if (complete != nullptr) *complete = true;
      break;
    }
    const size_t data = line_end + 2;
    if (data + size + 2 > text.size()) break;  // this chunk is not all here yet
    out.append(text.substr(data, size));
    pos = data + size + 2;
  }
  return out;
}

// Status line, headers and body of `raw` (a whole or partial response).
inline HttpReply HttpParseReply(std::string raw) {
  HttpReply reply;
  reply.raw = std::move(raw);
  const std::string& text = reply.raw;
  const size_t head_end = text.find("\r\n\r\n");
  if (head_end == std::string::npos) return reply;
  size_t pos = text.find("\r\n");
  const std::string status_line = text.substr(0, pos);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return reply;
  reply.status = std::atoi(status_line.c_str() + 9);
  pos += 2;
  while (pos < head_end) {
    const size_t line_end = text.find("\r\n", pos);
    const std::string line = text.substr(pos, line_end - pos);
    pos = line_end + 2;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    reply.headers.emplace_back(HttpLowerAscii(line.substr(0, colon)), std::move(value));
  }
  const std::string_view body = std::string_view(text).substr(head_end + 4);
  const auto encoding = reply.Header("transfer-encoding");
  if (encoding && HttpLowerAscii(*encoding).find("chunked") != std::string::npos) {
    reply.chunked = true;
    reply.body = HttpDechunk(body, &reply.chunked_complete);
  } else {
    reply.body = std::string(body);
  }
  return reply;
}

// Connects, sends `request`, reads the whole response (the request should say
// `Connection: close`), closes. Status -1 when it could not connect or send.
inline HttpReply HttpRoundTrip(uint16_t port, const std::string& request) {
  const int fd = HttpConnect(port);
  if (fd < 0) {
    HttpReply failed;
    failed.status = -1;
    return failed;
  }
  // A refusal may come before the whole request is sent (413): read what came anyway.
  HttpSendAll(fd, request);
  HttpReply reply = HttpParseReply(HttpReadToEnd(fd));
  close(fd);
  return reply;
}

// Request text: `method path`, Host (unless `headers` has one), the headers, Content-Length
// when there is a body (unless the headers say Transfer-Encoding), Connection: close.
inline std::string HttpRequestText(uint16_t port, const std::string& method,
                                   const std::string& path, const HttpHeaderList& headers,
                                   const std::string& body = "") {
  std::string text = method + " " + path + " HTTP/1.1\r\n";
  bool has_host = false;
  bool has_encoding = false;
  bool has_length = false;
  for (const auto& [name, value] : headers) {
    const std::string lower = HttpLowerAscii(name);
    has_host = has_host || lower == "host";
    has_encoding = has_encoding || lower == "transfer-encoding";
    has_length = has_length || lower == "content-length";
  }
  if (!has_host) text += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  for (const auto& [name, value] : headers) text += name + ": " + value + "\r\n";
  if (!has_encoding && !has_length && (!body.empty() || method == "POST")) {
    text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  text += "Connection: close\r\n\r\n";
  return text + body;
}

// One SSE event: its data lines joined by "\n" (empty for a comment-only event), and its
// comment lines (without the ':').
struct HttpSseEvent {
  std::string data;
  std::vector<std::string> comments;
};

// The complete events (ended by a blank line) of an SSE body.
inline std::vector<HttpSseEvent> HttpSseEvents(std::string_view body) {
  std::vector<HttpSseEvent> events;
  size_t pos = 0;
  for (;;) {
    const size_t end = body.find("\n\n", pos);
    if (end == std::string_view::npos) break;
    HttpSseEvent event;
    bool has_data = false;
    std::string_view block = body.substr(pos, end - pos);
    while (!block.empty()) {
      const size_t nl = block.find('\n');
      std::string_view line = block.substr(0, nl);
      block = nl == std::string_view::npos ? std::string_view() : block.substr(nl + 1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.rfind("data:", 0) == 0) {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (has_data) event.data += "\n";
        event.data += std::string(line);
        has_data = true;
      } else if (!line.empty() && line.front() == ':') {
        event.comments.emplace_back(line.substr(1));
      }
    }
    events.push_back(std::move(event));
    pos = end + 2;
  }
  return events;
}

// The data of the events that carry data, in order.
inline std::vector<std::string> HttpSseData(std::string_view body) {
  std::vector<std::string> out;
  for (const HttpSseEvent& event : HttpSseEvents(body)) {
    if (!event.data.empty()) out.push_back(event.data);
  }
  return out;
}

}  // namespace keel::http_test_client
