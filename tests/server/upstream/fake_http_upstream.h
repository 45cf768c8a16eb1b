// A scripted HTTP/1.1 server on 127.0.0.1 for HttpUpstream's tests: each connection carries
// one request (read whole: headers and a Content-Length body), which the test's handler
// answers with the raw bytes to write; "Connection: close" always. A reply may be held open
// after its bytes (an SSE stream that never ends) until the client closes it, which the
// server counts (that is how Abandon is seen). One thread accepts, one thread per
// connection; the destructor ends and joins them all. Header-only; every name starts with
// Fake so the unity build cannot mix them up with other tests' helpers.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace keel::fake_http_upstream {

struct FakeRequest {
  std::string method;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string Header(const std::string& lower) const {
    const auto it = headers.find(lower);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct FakeReply {
  std::string bytes;  // status line, headers, blank line, body: written as they are
  bool hold = false;  // keep the connection open after `bytes`, until the client closes it
};

inline FakeReply FakeJsonReply(int status, const std::string& body,
                               const std::string& extra_headers = "") {
  return FakeReply{"HTTP/1.1 " + std::to_string(status) +
                   " X\r\nContent-Type: application/json\r\n" + extra_headers + "Content-Length: " +
                   std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body};
}

inline FakeReply FakeSseReply(const std::vector<std::string>& events, bool hold = false) {
  std::string bytes =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
  for (const std::string& data : events) bytes += "data: " + data + "\n\n";
  return FakeReply{std::move(bytes), hold};
}

inline FakeReply FakeEmptyReply(int status) {
  return FakeReply{"HTTP/1.1 " + std::to_string(status) +
                   " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"};
}

class FakeHttpServer {
 public:
  using Handler = std::function<FakeReply(const FakeRequest&)>;

  explicit FakeHttpServer(Handler handler) : handler_(std::move(handler)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listening_ = ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                 ::listen(listener_, 64) == 0;
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    (void)!::pipe2(stop_, O_CLOEXEC);
    acceptor_ = std::thread([this] { Accept(); });
  }

  ~FakeHttpServer() {
    (void)!::write(stop_[1], "x", 1);
    acceptor_.join();
    std::vector<std::thread> connections;
    {
      std::lock_guard<std::mutex> lock(mu_);
      connections.swap(connections_);
    }
    for (std::thread& t : connections) t.join();
    ::close(listener_);
    ::close(stop_[0]);
    ::close(stop_[1]);
  }

  bool listening() const { return listening_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

  std::vector<FakeRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

  // Waits (at most `within`) until `n` requests came / `n` held replies were closed by the
  // client.
  bool WaitRequests(size_t n, std::chrono::milliseconds within = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, within, [&] { return requests_.size() >= n; });
  }
  bool WaitClosedByClient(int n, std::chrono::milliseconds within = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, within, [&] { return closed_by_client_ >= n; });
  }

 private:
  void Accept() {
    while (true) {
      pollfd fds[2] = {{listener_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) return;
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      connections_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  static bool FakeReadRequest(int fd, FakeRequest* request) {
    std::string data;
    char buffer[4096];
    size_t body_at = std::string::npos;
    size_t length = 0;
    while (body_at == std::string::npos || data.size() < body_at + length) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) return false;
      data.append(buffer, static_cast<size_t>(n));
      if (body_at != std::string::npos) continue;
      const size_t end = data.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      body_at = end + 4;
      size_t line_end = data.find("\r\n");
      request->method = data.substr(0, data.find(' '));
      while (line_end < end) {
        const size_t next = data.find("\r\n", line_end + 2);
        const std::string line = data.substr(line_end + 2, next - line_end - 2);
        const size_t colon = line.find(':');
        if (colon != std::string::npos) {
          std::string name = line.substr(0, colon);
          for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          const size_t value_at = line.find_first_not_of(' ', colon + 1);
          request->headers[name] = value_at == std::string::npos ? "" : line.substr(value_at);
        }
        line_end = next;
      }
      const std::string declared = request->Header("content-length");
      length = declared.empty() ? 0 : std::stoul(declared);
    }
    request->body = data.substr(body_at, length);
    return true;
  }

  void Serve(int fd) {
    FakeRequest request;
    if (FakeReadRequest(fd, &request)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(request);
        cv_.notify_all();
      }
      const FakeReply reply = handler_(request);
      (void)!::write(fd, reply.bytes.data(), reply.bytes.size());
      if (reply.hold) Hold(fd);
    }
    ::close(fd);
  }

  // Until the client closes the connection (counted) or the server stops.
  void Hold(int fd) {
    char buffer[256];
    while (true) {
      pollfd fds[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) return;
      if (::read(fd, buffer, sizeof buffer) > 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      ++closed_by_client_;
      cv_.notify_all();
      return;
    }
  }

  Handler handler_;
  int listener_ = -1;
  bool listening_ = false;
  int stop_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<FakeRequest> requests_;
  std::vector<std::thread> connections_;
  int closed_by_client_ = 0;
};

}  // namespace keel::fake_http_upstream
