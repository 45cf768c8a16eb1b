// McpHttpTransport over real loopback sockets (server/transport/http/mcp_http.h, invariants
// 1-7; HttpServer's invariants 1-3 underneath): the test thread runs keel's EventLoop, a
// client thread speaks raw HTTP/1.1 with blocking sockets (http_test_client.h). Ordering
// between the two comes from atomics, promises and the loop's own progress, never sleeps.
// Reference: reference/mcp-2026-07-28.md §3 (status codes, headers, SSE, legacy sessions).
#include "server/transport/http/mcp_http.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/socket.h>

#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"
#include "server/transport/function_dispatcher.h"
#include "server/transport/http_test_client.h"

namespace keel::mcp_http_test {
namespace {

using namespace keel::http_test_client;  // NOLINT: the test client's Http* helpers
using Json = nlohmann::json;

constexpr const char* kHttpModernVersion = "2026-07-28";
constexpr const char* kHttpLegacyVersion = "2025-11-25";

// What the dispatcher saw: the exchange a message came on, its peer, the message.
struct HttpSeen {
  ExchangeId exchange = 0;
  PeerId peer = 0;
  Message message;
};

McpHttpOptions HttpTestOptions() {
  McpHttpOptions options;
  options.server.host = "127.0.0.1";
  options.server.port = 0;
  return options;
}

// A transport on an ephemeral loopback port, with a recording FunctionDispatcher.
class HttpHarness {
 public:
  explicit HttpHarness(McpHttpOptions options = HttpTestOptions())
      : loop_(clock_),
        dispatcher_(FunctionDispatcher::Functions{
            [this](Exchange& exchange, Message message) {
              OnMessage(exchange, std::move(message));
            },
            [this](Exchange& exchange) { closed.push_back(exchange.id()); },
            [this](Exchange& exchange, uint64_t stream) {
              dropped.emplace_back(exchange.id(), stream);
            },
            {}}),
        transport_(
            loop_, std::move(options), dispatcher_,
            [this](const std::string& tool) -> const Json* {
              const auto it = schemas.find(tool);
              return it == schemas.end() ? nullptr : &it->second;
            },
            [this](PeerId peer) { ended.push_back(peer); }) {
    std::string error;
    const bool started = transport_.Start(&error);
    INFO(error);
    REQUIRE(started);
    REQUIRE(transport_.port() != 0);
  }

  uint16_t port() const { return transport_.port(); }
  McpHttpTransport& transport() { return transport_; }
  EventLoop& loop() { return loop_; }

  // Runs the loop until `done` holds, or a generous cap (iterations, and 30 s of wall time
  // as a last resort so that a broken test fails instead of hanging).
  bool PumpUntil(const std::function<bool()>& done, int max_iterations = 100000) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (int i = 0; i < max_iterations; ++i) {
      if (done()) return true;
      if (std::chrono::steady_clock::now() > give_up) break;
      loop_.RunOnce(Millis(10));
    }
    return done();
  }

  // One request on its own connection from a client thread, the loop running meanwhile.
  HttpReply RoundTrip(const std::string& request) {
    std::atomic<bool> finished{false};
    HttpReply reply;
    std::thread client([&] {
      reply = HttpRoundTrip(port(), request);
      finished = true;
    });
    const bool ok = PumpUntil([&] { return finished.load(); });
    client.join();
    CHECK(ok);
    return reply;
  }

  // Answers every request synchronously when set.
  std::function<void(Exchange&, const Message&)> respond;
  std::vector<HttpSeen> seen;
  std::vector<ExchangeId> closed;
  std::vector<std::pair<ExchangeId, uint64_t>> dropped;
  std::vector<PeerId> ended;
  std::map<std::string, Json> schemas;

 private:
  void OnMessage(Exchange& exchange, Message message) {
    seen.push_back(HttpSeen{exchange.id(), exchange.peer(), message});
    if (respond) respond(exchange, message);
  }

  SteadyClock clock_;
  EventLoop loop_;
  FunctionDispatcher dispatcher_;
  McpHttpTransport transport_;
};

// A client on its own thread that sends one request and reads the response until EOF,
// noting what it has seen so far (for streamed responses).
class HttpAsyncClient {
 public:
  HttpAsyncClient(uint16_t port, std::string request) {
    thread_ = std::thread([this, port, request = std::move(request)] {
      const int fd = HttpConnect(port);
      if (fd >= 0) {
        sent = HttpSendAll(fd, request);
        raw_ = HttpReadToEnd(fd, [this](const std::string& so_far) { Observe(so_far); });
        close(fd);
      }
      done = true;
    });
  }
  ~HttpAsyncClient() {
    if (thread_.joinable()) thread_.join();
  }
  HttpReply Finish() {
    if (thread_.joinable()) thread_.join();
    return HttpParseReply(raw_);
  }

  std::atomic<bool> sent{false};
  std::atomic<bool> done{false};
  std::atomic<bool> got_head{false};
  std::atomic<int> events{0};  // SSE events with data, complete so far
  std::atomic<bool> keepalive{false};

 private:
  void Observe(const std::string& so_far) {
    const HttpReply partial = HttpParseReply(so_far);
    if (partial.status == 0) return;
    got_head = true;
    int count = 0;
    for (const HttpSseEvent& event : HttpSseEvents(partial.body)) {
      if (!event.data.empty()) ++count;
      for (const std::string& comment : event.comments) {
        if (comment.find("keep-alive") != std::string::npos) keepalive = true;
      }
    }
    events = count;
  }

  std::string raw_;
  std::thread thread_;
};

Json HttpEnvelope() {
  return Json{{"io.modelcontextprotocol/protocolVersion", kHttpModernVersion},
              {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
}

// A modern request body: `params` with the envelope added to its _meta.
std::string HttpModernBody(const Json& id, const std::string& method,
                           Json params = Json::object()) {
  const Json envelope = HttpEnvelope();
  for (auto it = envelope.begin(); it != envelope.end(); ++it)
    params["_meta"][it.key()] = it.value();
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
}

HttpHeaderList HttpJsonHeaders() {
  return {{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}};
}

HttpHeaderList HttpModernHeaders(const std::string& method, const std::string& name = "") {
  HttpHeaderList headers = HttpJsonHeaders();
  headers.emplace_back("MCP-Protocol-Version", kHttpModernVersion);
  headers.emplace_back("Mcp-Method", method);
  if (!name.empty()) headers.emplace_back("Mcp-Name", name);
  return headers;
}

HttpHeaderList HttpLegacyHeaders(const std::string& session = "") {
  HttpHeaderList headers = HttpJsonHeaders();
  if (!session.empty()) {
    headers.emplace_back("Mcp-Session-Id", session);
    headers.emplace_back("MCP-Protocol-Version", kHttpLegacyVersion);
  }
  return headers;
}

HttpHeaderList HttpWith(HttpHeaderList headers, const std::string& name, const std::string& value) {
  headers.emplace_back(name, value);
  return headers;
}

std::string HttpResultLine(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}.dump();
}

std::string HttpErrorLine(const Json& id, int code, const std::string& message) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}}
      .dump();
}

std::string HttpProgressLine(int progress) {
  return Json{{"jsonrpc", "2.0"},
              {"method", "notifications/progress"},
              {"params", {{"progressToken", "tok-1"}, {"progress", progress}, {"total", 2}}}}
      .dump();
}

// Answers every request with an empty result (initialize with a legacy InitializeResult).
void HttpAnswerEverything(HttpHarness& harness) {
  harness.respond = [](Exchange& exchange, const Message& message) {
    if (message.kind != MessageKind::kRequest) return;
    Json result = Json::object();
    if (message.method == "initialize") {
      result = {{"protocolVersion", kHttpLegacyVersion},
                {"capabilities", Json::object()},
                {"serverInfo", {{"name", "keel"}, {"version", "0"}}}};
    }
    exchange.SendResponse(HttpResultLine(message.id, result));
  };
}

std::string HttpInitializeBody(int id = 1) {
  return Json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", kHttpLegacyVersion},
                {"capabilities", Json::object()},
                {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}}
      .dump();
}

std::string HttpLegacyBody(const Json& id, const std::string& method,
                           Json params = Json::object()) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}}
      .dump();
}

// Opens a legacy session; returns its Mcp-Session-Id.
std::string HttpOpenSession(HttpHarness& harness) {
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(), HttpInitializeBody()));
  REQUIRE(reply.status == 200);
  const auto session = reply.Header("mcp-session-id");
  REQUIRE(session.has_value());
  return *session;
}

Json HttpBodyJson(const HttpReply& reply) {
  INFO(reply.raw);
  const Json body = Json::parse(reply.body, nullptr, false);
  REQUIRE(body.is_object());
  return body;
}

bool HttpStartsWith(const std::optional<std::string>& value, const std::string& prefix) {
  return value.has_value() && value->rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("A modern tools/list POST is answered 200 with the response line as its JSON body",
          "[http][mcp_http]") {
  HttpHarness harness;
  std::string answered;
  harness.respond = [&answered](Exchange& exchange, const Message& message) {
    answered = HttpResultLine(message.id, {{"tools", Json::array()}});
    exchange.SendResponse(answered);
  };
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("tools/list"),
                                                            HttpModernBody(1, "tools/list")));
  INFO(reply.raw);
  CHECK(reply.status == 200);
  CHECK(HttpStartsWith(reply.Header("content-type"), "application/json"));
  CHECK(reply.body == answered);
  CHECK_FALSE(reply.Header("mcp-session-id").has_value());
  REQUIRE(harness.seen.size() == 1);
  const HttpSeen& seen = harness.seen[0];
  CHECK(seen.message.kind == MessageKind::kRequest);
  CHECK(seen.message.method == "tools/list");
  CHECK(seen.message.id == Json(1));
  CHECK(seen.exchange >= McpHttpTransport::kFirstId);
  CHECK(harness.closed.empty());
  CHECK(harness.PumpUntil([&] { return harness.transport().open_exchanges() == 0; }));
}

TEST_CASE("Each modern POST is its own exchange and its own peer", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  for (int id = 1; id <= 2; ++id) {
    const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                              HttpModernHeaders("tools/list"),
                                                              HttpModernBody(id, "tools/list")));
    CHECK(reply.status == 200);
  }
  REQUIRE(harness.seen.size() == 2);
  CHECK(harness.seen[0].exchange != harness.seen[1].exchange);
  CHECK(harness.seen[0].peer != harness.seen[1].peer);
  CHECK(harness.seen[0].peer >= McpHttpTransport::kFirstId);
}

TEST_CASE("Modern headers that disagree with the body are 400 -32020 before the dispatcher",
          "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("tools/call"),
                                                            HttpModernBody(7, "tools/list")));
  CHECK(reply.status == 400);
  CHECK(HttpStartsWith(reply.Header("content-type"), "application/json"));
  const Json body = HttpBodyJson(reply);
  CHECK(body["id"] == 7);
  CHECK(body["error"]["code"] == -32020);
  CHECK(body["error"]["data"]["header"] == "Mcp-Method");
  CHECK(harness.seen.empty());

  // A missing MCP-Protocol-Version too (the envelope makes the request modern).
  HttpHeaderList headers = HttpJsonHeaders();
  headers.emplace_back("Mcp-Method", "tools/list");
  const HttpReply missing = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", headers, HttpModernBody(8, "tools/list")));
  CHECK(missing.status == 400);
  CHECK(HttpBodyJson(missing)["error"]["code"] == -32020);
  CHECK(HttpBodyJson(missing)["error"]["data"]["header"] == "MCP-Protocol-Version");
  CHECK(harness.seen.empty());
}

TEST_CASE("An Mcp-Param header the tool's schema asks for is checked over HTTP",
          "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  harness.schemas["deploy"] = Json::parse(
      R"({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}})");
  const std::string body =
      HttpModernBody(3, "tools/call", {{"name", "deploy"}, {"arguments", {{"region", "eu-west"}}}});
  const HttpReply refused = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", HttpModernHeaders("tools/call", "deploy"), body));
  CHECK(refused.status == 400);
  CHECK(HttpBodyJson(refused)["error"]["code"] == -32020);
  CHECK(HttpBodyJson(refused)["error"]["data"]["header"] == "Mcp-Param-Region");
  CHECK(harness.seen.empty());

  const HttpReply accepted = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp",
      HttpWith(HttpModernHeaders("tools/call", "deploy"), "Mcp-Param-Region", "eu-west"), body));
  CHECK(accepted.status == 200);
  CHECK(harness.seen.size() == 1);
}

TEST_CASE("A modern envelope without clientCapabilities is 400 -32602", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const std::string body =
      Json{{"jsonrpc", "2.0"},
           {"id", 4},
           {"method", "tools/list"},
           {"params",
            {{"_meta", {{"io.modelcontextprotocol/protocolVersion", kHttpModernVersion}}}}}}
          .dump();
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", HttpModernHeaders("tools/list"), body));
  CHECK(reply.status == 400);
  const Json answer = HttpBodyJson(reply);
  CHECK(answer["id"] == 4);
  CHECK(answer["error"]["code"] == -32602);
  CHECK(harness.seen.empty());
}

TEST_CASE("An unknown method answered -32601 on the modern path is 404", "[http][mcp_http]") {
  HttpHarness harness;
  std::string answered;
  harness.respond = [&answered](Exchange& exchange, const Message& message) {
    answered = HttpErrorLine(message.id, -32601, "Method not found: nope/never");
    exchange.SendResponse(answered);
  };
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("nope/never"),
                                                            HttpModernBody(5, "nope/never")));
  CHECK(reply.status == 404);
  CHECK(reply.body == answered);
  CHECK(harness.seen.size() == 1);
}

TEST_CASE("Another JSON-RPC error on the modern path is 200 with the error body",
          "[http][mcp_http]") {
  HttpHarness harness;
  harness.respond = [](Exchange& exchange, const Message& message) {
    exchange.SendResponse(HttpErrorLine(message.id, -32602, "Invalid params: unknown tool"));
  };
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("tools/list"),
                                                            HttpModernBody(5, "tools/list")));
  CHECK(reply.status == 200);
  CHECK(HttpBodyJson(reply)["error"]["code"] == -32602);
}

TEST_CASE("GET is 405 with an Allow header", "[http][mcp_http]") {
  HttpHarness harness;
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "GET", "/mcp", {{"Accept", "text/event-stream"}}));
  CHECK(reply.status == 405);
  const auto allow = reply.Header("allow");
  REQUIRE(allow.has_value());
  CHECK(allow->find("POST") != std::string::npos);
  CHECK(harness.seen.empty());
}

TEST_CASE("DELETE without a session id is 405", "[http][mcp_http]") {
  HttpHarness harness;
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "DELETE", "/mcp", {}));
  CHECK(reply.status == 405);
  CHECK(reply.Header("allow").has_value());
}

TEST_CASE("A path other than the endpoint is 404", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/other",
                                                            HttpModernHeaders("tools/list"),
                                                            HttpModernBody(1, "tools/list")));
  CHECK(reply.status == 404);
  CHECK(harness.seen.empty());
}

TEST_CASE("A foreign Origin is 403 before the dispatcher", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp",
      HttpWith(HttpModernHeaders("tools/list"), "Origin", "http://evil.example.com"),
      HttpModernBody(1, "tools/list")));
  CHECK(reply.status == 403);
  CHECK(harness.seen.empty());

  // The server's own origin is fine.
  const HttpReply own = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp",
                      HttpWith(HttpModernHeaders("tools/list"), "Origin",
                               "http://127.0.0.1:" + std::to_string(harness.port())),
                      HttpModernBody(2, "tools/list")));
  CHECK(own.status == 200);
}

TEST_CASE("A foreign Host on a loopback bind is 403 before the dispatcher", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp",
                      HttpWith(HttpModernHeaders("tools/list"), "Host", "evil.example.com"),
                      HttpModernBody(1, "tools/list")));
  CHECK(reply.status == 403);
  CHECK(harness.seen.empty());

  const HttpReply local =
      harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                        HttpWith(HttpModernHeaders("tools/list"), "Host",
                                                 "localhost:" + std::to_string(harness.port())),
                                        HttpModernBody(2, "tools/list")));
  CHECK(local.status == 200);
}

TEST_CASE("A body that is not application/json is 415", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  HttpHeaderList headers = HttpModernHeaders("tools/list");
  headers[0] = {"Content-Type", "text/plain"};
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", headers, HttpModernBody(1, "tools/list")));
  CHECK(reply.status == 415);
  CHECK(harness.seen.empty());
}

TEST_CASE("An Accept that takes neither JSON nor SSE is 406", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  HttpHeaderList headers = HttpModernHeaders("tools/list");
  headers[1] = {"Accept", "text/html"};
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", headers, HttpModernBody(1, "tools/list")));
  CHECK(reply.status == 406);
  CHECK(harness.seen.empty());
}

TEST_CASE("An unparsable JSON body is 400 with -32700", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("tools/list"),
                                                            "{\"jsonrpc\":\"2.0\",\"id\":1,"));
  CHECK(reply.status == 400);
  const Json body = HttpBodyJson(reply);
  CHECK(body["error"]["code"] == -32700);
  CHECK_FALSE(body.contains("id"));
  CHECK(harness.seen.empty());
}

TEST_CASE("A JSON-RPC response outside a legacy session is 400", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", HttpJsonHeaders(), HttpResultLine(9, Json::object())));
  CHECK(reply.status == 400);
  CHECK(harness.seen.empty());
}

TEST_CASE("A body larger than max_body_bytes by Content-Length is 413", "[http][mcp_http]") {
  McpHttpOptions options = HttpTestOptions();
  options.server.max_body_bytes = 1024;
  HttpHarness harness(options);
  HttpAnswerEverything(harness);
  // Refused from the headers: a megabyte the server never reads still gets its 413.
  for (const size_t padding : {size_t{2000}, size_t{1} << 20}) {
    const std::string body =
        HttpModernBody(1, "tools/list", {{"padding", std::string(padding, 'x')}});
    const HttpReply reply = harness.RoundTrip(
        HttpRequestText(harness.port(), "POST", "/mcp", HttpModernHeaders("tools/list"), body));
    CHECK(reply.status == 413);
  }
  CHECK(harness.seen.empty());

  // Within the bound it is read.
  const std::string small = HttpModernBody(2, "tools/list");
  REQUIRE(small.size() < 1024);
  CHECK(harness
            .RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                       HttpModernHeaders("tools/list"), small))
            .status == 200);
}

TEST_CASE("A chunked body larger than max_body_bytes is 413", "[http][mcp_http]") {
  McpHttpOptions options = HttpTestOptions();
  options.server.max_body_bytes = 1024;
  HttpHarness harness(options);
  HttpAnswerEverything(harness);
  const std::string body = HttpModernBody(1, "tools/list", {{"padding", std::string(2000, 'x')}});
  auto chunked = [](const std::string& data) {
    std::string text;
    for (size_t pos = 0; pos < data.size(); pos += 300) {
      const std::string piece = data.substr(pos, 300);
      char size[16];
      std::snprintf(size, sizeof size, "%zx", piece.size());
      text += std::string(size) + "\r\n" + piece + "\r\n";
    }
    return text + "0\r\n\r\n";
  };
  const HttpHeaderList headers =
      HttpWith(HttpModernHeaders("tools/list"), "Transfer-Encoding", "chunked");
  const HttpReply reply =
      harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", headers, chunked(body)));
  CHECK(reply.status == 413);
  CHECK(harness.seen.empty());

  // A small chunked body is read whole.
  const HttpReply small = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", headers, chunked(HttpModernBody(2, "tools/list"))));
  CHECK(small.status == 200);
  REQUIRE(harness.seen.size() == 1);
  CHECK(harness.seen[0].message.id == Json(2));
}

TEST_CASE("A request answered later through Find is 200", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAsyncClient client(harness.port(), HttpRequestText(harness.port(), "POST", "/mcp",
                                                         HttpModernHeaders("tools/list"),
                                                         HttpModernBody("later", "tools/list")));
  // The whole request reached the dispatcher: the client has sent it.
  REQUIRE(harness.PumpUntil([&] { return !harness.seen.empty(); }));
  // The call waits: nothing has been answered yet.
  harness.loop().RunOnce(Millis(0));
  CHECK_FALSE(client.done);
  const ExchangeId id = harness.seen[0].exchange;
  OutputSink* sink = harness.transport().Find(id);
  REQUIRE(sink != nullptr);
  const std::string line = HttpResultLine("later", {{"tools", Json::array()}});
  sink->SendResponse(line);
  REQUIRE(harness.PumpUntil([&] { return client.done.load(); }));
  const HttpReply reply = client.Finish();
  CHECK(reply.status == 200);
  CHECK(HttpStartsWith(reply.Header("content-type"), "application/json"));
  CHECK(reply.body == line);
  CHECK(harness.closed.empty());
  CHECK(harness.PumpUntil([&] { return harness.transport().Find(id) == nullptr; }));
}

TEST_CASE("A modern client that leaves before its answer closes the exchange", "[http][mcp_http]") {
  HttpHarness harness;
  std::promise<void> leave;
  std::atomic<bool> left{false};
  std::thread client([&, port = harness.port(), go = leave.get_future()]() mutable {
    const int fd = HttpConnect(port);
    if (fd >= 0) {
      HttpSendAll(fd, HttpRequestText(port, "POST", "/mcp", HttpModernHeaders("tools/list"),
                                      HttpModernBody(1, "tools/list")));
      go.wait();
      close(fd);
    }
    left = true;
  });
  const bool delivered = harness.PumpUntil([&] { return !harness.seen.empty(); });
  leave.set_value();
  client.join();
  REQUIRE(delivered);
  const ExchangeId id = harness.seen[0].exchange;
  CHECK(harness.PumpUntil([&] { return !harness.closed.empty(); }));
  CHECK(harness.closed == std::vector<ExchangeId>{id});
  CHECK(harness.transport().Find(id) == nullptr);
  CHECK(harness.PumpUntil([&] { return harness.transport().server().calls() == 0; }));
  // Reported once.
  for (int i = 0; i < 5; ++i) harness.loop().RunOnce(Millis(0));
  CHECK(harness.closed.size() == 1);
}

TEST_CASE("A modern SSE client that leaves before its answer closes the exchange",
          "[http][mcp_http]") {
  HttpHarness harness;
  std::promise<void> leave;
  std::atomic<bool> got_head{false};
  std::thread client([&, port = harness.port(), go = leave.get_future()]() mutable {
    const int fd = HttpConnect(port);
    if (fd >= 0) {
      HttpSendAll(fd, HttpRequestText(port, "POST", "/mcp", HttpModernHeaders("tools/call", "slow"),
                                      HttpModernBody(1, "tools/call",
                                                     {{"name", "slow"},
                                                      {"arguments", Json::object()},
                                                      {"_meta", {{"progressToken", "p"}}}})));
      char buf[512];
      if (recv(fd, buf, sizeof buf, 0) > 0) got_head = true;
      go.wait();
      close(fd);
    }
  });
  const bool streaming = harness.PumpUntil([&] { return got_head.load(); });
  leave.set_value();
  client.join();
  REQUIRE(streaming);
  REQUIRE(harness.seen.size() == 1);
  CHECK(harness.PumpUntil([&] { return !harness.closed.empty(); }));
  CHECK(harness.closed == std::vector<ExchangeId>{harness.seen[0].exchange});
}

TEST_CASE("A legacy client that leaves before its answer does not close its request",
          "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const std::string session = HttpOpenSession(harness);
  harness.respond = nullptr;  // tools/list waits
  std::promise<void> leave;
  std::thread client([&, port = harness.port(), go = leave.get_future()]() mutable {
    const int fd = HttpConnect(port);
    if (fd >= 0) {
      HttpSendAll(fd, HttpRequestText(port, "POST", "/mcp", HttpLegacyHeaders(session),
                                      HttpLegacyBody(2, "tools/list")));
      go.wait();
      close(fd);
    }
  });
  const bool delivered = harness.PumpUntil([&] { return harness.seen.size() == 2; });
  leave.set_value();
  client.join();
  REQUIRE(delivered);
  const ExchangeId id = harness.seen[1].exchange;
  // The HTTP call ends; the request is not cancelled.
  CHECK(harness.PumpUntil([&] { return harness.transport().server().calls() == 0; }));
  CHECK(harness.closed.empty());
  CHECK(harness.transport().Find(id) == nullptr);  // its answer has nowhere to go
  CHECK(harness.transport().sessions() == 1);
  CHECK(harness.ended.empty());
}

TEST_CASE("A modern tools/call with a progressToken streams progress then the response as SSE",
          "[http][mcp_http]") {
  HttpHarness harness;
  const std::string body = HttpModernBody(
      11, "tools/call",
      {{"name", "slow"}, {"arguments", Json::object()}, {"_meta", {{"progressToken", "tok-1"}}}});
  HttpAsyncClient client(harness.port(),
                         HttpRequestText(harness.port(), "POST", "/mcp",
                                         HttpModernHeaders("tools/call", "slow"), body));
  REQUIRE(harness.PumpUntil([&] { return !harness.seen.empty(); }));
  const ExchangeId id = harness.seen[0].exchange;
  CHECK(harness.seen[0].message.params["_meta"]["progressToken"] == "tok-1");
  // The stream's head is sent before any event.
  REQUIRE(harness.PumpUntil([&] { return client.got_head.load(); }));
  CHECK(client.events == 0);

  OutputSink* sink = harness.transport().Find(id);
  REQUIRE(sink != nullptr);
  sink->SendProgress(1, HttpProgressLine(1));
  REQUIRE(harness.PumpUntil([&] { return client.events >= 1; }));
  sink = harness.transport().Find(id);
  REQUIRE(sink != nullptr);
  sink->SendProgress(1, HttpProgressLine(2));
  REQUIRE(harness.PumpUntil([&] { return client.events >= 2; }));
  CHECK_FALSE(client.done);
  const std::string answer = HttpResultLine(11, {{"content", Json::array()}});
  sink = harness.transport().Find(id);
  REQUIRE(sink != nullptr);
  sink->SendResponse(answer);
  REQUIRE(harness.PumpUntil([&] { return client.done.load(); }));

  const HttpReply reply = client.Finish();
  INFO(reply.raw);
  CHECK(reply.status == 200);
  CHECK(HttpStartsWith(reply.Header("content-type"), "text/event-stream"));
  CHECK(reply.Header("cache-control") == std::optional<std::string>("no-cache"));
  CHECK(reply.Header("x-accel-buffering") == std::optional<std::string>("no"));
  CHECK(reply.chunked_complete);
  CHECK(HttpSseData(reply.body) ==
        std::vector<std::string>{HttpProgressLine(1), HttpProgressLine(2), answer});
  CHECK(harness.closed.empty());
  CHECK(harness.PumpUntil([&] { return harness.transport().open_exchanges() == 0; }));
}

TEST_CASE("A modern tools/call without progressToken or logLevel is one JSON body",
          "[http][mcp_http]") {
  HttpHarness harness;
  harness.respond = [](Exchange& exchange, const Message& message) {
    // Progress has nowhere to go on a JSON response.
    exchange.SendProgress(1, HttpProgressLine(1));
    exchange.SendResponse(HttpResultLine(message.id, {{"content", Json::array()}}));
  };
  const HttpReply reply = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", HttpModernHeaders("tools/call", "fast"),
      HttpModernBody(12, "tools/call", {{"name", "fast"}, {"arguments", Json::object()}})));
  CHECK(reply.status == 200);
  CHECK(HttpStartsWith(reply.Header("content-type"), "application/json"));
  CHECK(HttpBodyJson(reply)["id"] == 12);
}

TEST_CASE("A streaming call answered at once is sent as JSON", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", HttpModernHeaders("tools/call", "fast"),
      HttpModernBody(
          13, "tools/call",
          {{"name", "fast"}, {"arguments", Json::object()}, {"_meta", {{"progressToken", 1}}}})));
  CHECK(reply.status == 200);
  CHECK(HttpStartsWith(reply.Header("content-type"), "application/json"));
  CHECK(HttpBodyJson(reply)["id"] == 13);
}

TEST_CASE("An SSE stream whose answer is delayed carries keep-alive comments", "[http][mcp_http]") {
  McpHttpOptions options = HttpTestOptions();
  options.sse_keepalive = Millis(20);
  HttpHarness harness(options);
  const std::string body = HttpModernBody(
      21, "tools/call",
      {{"name", "slow"}, {"arguments", Json::object()}, {"_meta", {{"progressToken", "k"}}}});
  HttpAsyncClient client(harness.port(),
                         HttpRequestText(harness.port(), "POST", "/mcp",
                                         HttpModernHeaders("tools/call", "slow"), body));
  REQUIRE(harness.PumpUntil([&] { return !harness.seen.empty(); }));
  REQUIRE(harness.PumpUntil([&] { return client.keepalive.load(); }));
  CHECK_FALSE(client.done);
  const std::string answer = HttpResultLine(21, {{"content", Json::array()}});
  OutputSink* sink = harness.transport().Find(harness.seen[0].exchange);
  REQUIRE(sink != nullptr);
  sink->SendResponse(answer);
  REQUIRE(harness.PumpUntil([&] { return client.done.load(); }));
  const HttpReply reply = client.Finish();
  INFO(reply.raw);
  CHECK(reply.status == 200);
  CHECK(reply.chunked_complete);
  CHECK(HttpSseData(reply.body) == std::vector<std::string>{answer});
  bool comment = false;
  for (const HttpSseEvent& event : HttpSseEvents(reply.body)) {
    comment = comment || !event.comments.empty();
  }
  CHECK(comment);
}

TEST_CASE("A legacy initialize mints a session that later requests name", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply init = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(), HttpInitializeBody()));
  INFO(init.raw);
  REQUIRE(init.status == 200);
  CHECK(HttpBodyJson(init)["result"]["protocolVersion"] == kHttpLegacyVersion);
  const auto session = init.Header("mcp-session-id");
  REQUIRE(session.has_value());
  CHECK(session->size() >= 16);
  CHECK(
      std::all_of(session->begin(), session->end(), [](char c) { return c >= 0x21 && c <= 0x7E; }));
  CHECK(harness.transport().sessions() == 1);
  REQUIRE(harness.seen.size() == 1);
  const PeerId peer = harness.seen[0].peer;

  const HttpReply list =
      harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(*session),
                                        HttpLegacyBody(2, "tools/list")));
  CHECK(list.status == 200);
  CHECK(HttpBodyJson(list)["id"] == 2);
  REQUIRE(harness.seen.size() == 2);
  CHECK(harness.seen[1].peer == peer);
  CHECK(harness.seen[1].exchange != harness.seen[0].exchange);

  // A second initialize is a second session, with a peer of its own.
  const std::string other = HttpOpenSession(harness);
  CHECK(other != *session);
  CHECK(harness.seen.back().peer != peer);
  CHECK(harness.transport().sessions() == 2);
}

TEST_CASE("A legacy initialize answered with an error mints no session", "[http][mcp_http]") {
  HttpHarness harness;
  harness.respond = [](Exchange& exchange, const Message& message) {
    exchange.SendResponse(HttpErrorLine(message.id, -32602, "Invalid params: protocolVersion"));
  };
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(), HttpInitializeBody()));
  CHECK(reply.status == 200);
  CHECK_FALSE(reply.Header("mcp-session-id").has_value());
  CHECK(harness.transport().sessions() == 0);
  REQUIRE(harness.seen.size() == 1);
  CHECK(harness.ended == std::vector<PeerId>{harness.seen[0].peer});
}

TEST_CASE("An unknown legacy session id is 404", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpLegacyHeaders("no-such-session"),
                                                            HttpLegacyBody(1, "tools/list")));
  CHECK(reply.status == 404);
  CHECK(harness.seen.empty());
  const HttpReply gone = harness.RoundTrip(
      HttpRequestText(harness.port(), "DELETE", "/mcp", {{"Mcp-Session-Id", "no-such-session"}}));
  CHECK(gone.status == 404);
}

TEST_CASE("DELETE ends a legacy session with 204 and then its id is 404 and its peer is ended",
          "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const std::string session = HttpOpenSession(harness);
  REQUIRE(harness.seen.size() == 1);
  const PeerId peer = harness.seen[0].peer;
  CHECK(harness.ended.empty());

  const HttpReply deleted = harness.RoundTrip(
      HttpRequestText(harness.port(), "DELETE", "/mcp", {{"Mcp-Session-Id", session}}));
  INFO(deleted.raw);
  CHECK(deleted.status == 204);
  CHECK(deleted.body.empty());
  CHECK(harness.ended == std::vector<PeerId>{peer});
  CHECK(harness.transport().sessions() == 0);

  const HttpReply after = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", HttpLegacyHeaders(session), HttpLegacyBody(2, "tools/list")));
  CHECK(after.status == 404);
  CHECK(harness.seen.size() == 1);
  const HttpReply again = harness.RoundTrip(
      HttpRequestText(harness.port(), "DELETE", "/mcp", {{"Mcp-Session-Id", session}}));
  CHECK(again.status == 404);
  CHECK(harness.ended.size() == 1);
}

TEST_CASE("A legacy request without a session id is 400", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", HttpLegacyHeaders(), HttpLegacyBody(1, "tools/list")));
  CHECK(reply.status == 400);
  CHECK(HttpBodyJson(reply)["id"] == 1);
  CHECK(harness.seen.empty());
}

TEST_CASE("A notification POST is delivered and answered 202 with no body", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const std::string session = HttpOpenSession(harness);
  const PeerId peer = harness.seen.at(0).peer;
  const std::string notification =
      Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump();
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(session), notification));
  INFO(reply.raw);
  CHECK(reply.status == 202);
  CHECK(reply.body.empty());
  REQUIRE(harness.seen.size() == 2);
  CHECK(harness.seen[1].message.kind == MessageKind::kNotification);
  CHECK(harness.seen[1].message.method == "notifications/initialized");
  CHECK(harness.seen[1].peer == peer);
}

TEST_CASE("A modern notification POST is answered 202 with no body", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  HttpHeaderList headers = HttpJsonHeaders();
  headers.emplace_back("MCP-Protocol-Version", kHttpModernVersion);
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", headers,
                      Json{{"jsonrpc", "2.0"}, {"method", "notifications/something"}}.dump()));
  CHECK(reply.status == 202);
  CHECK(reply.body.empty());
  REQUIRE(harness.seen.size() == 1);
  CHECK(harness.seen[0].message.kind == MessageKind::kNotification);
}

TEST_CASE("A legacy tools/call streams keel's request and takes the client's response as a POST",
          "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const std::string session = HttpOpenSession(harness);
  const PeerId peer = harness.seen.at(0).peer;
  harness.respond = nullptr;
  HttpAsyncClient client(
      harness.port(),
      HttpRequestText(
          harness.port(), "POST", "/mcp", HttpLegacyHeaders(session),
          HttpLegacyBody(5, "tools/call", {{"name", "ask"}, {"arguments", Json::object()}})));
  REQUIRE(harness.PumpUntil([&] { return harness.seen.size() == 2; }));
  const ExchangeId id = harness.seen[1].exchange;
  const std::string question = Json{
      {"jsonrpc", "2.0"},
      {"id", "keel-1"},
      {"method", "elicitation/create"},
      {"params", Json::object()}}.dump();
  OutputSink* sink = harness.transport().Find(id);
  REQUIRE(sink != nullptr);
  sink->SendRequest(question);
  REQUIRE(harness.PumpUntil([&] { return client.events >= 1; }));

  // The client answers keel's question with a POST of its own.
  const HttpReply posted =
      harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(session),
                                        HttpResultLine("keel-1", {{"action", "accept"}})));
  CHECK(posted.status == 202);
  CHECK(posted.body.empty());
  REQUIRE(harness.seen.size() == 3);
  CHECK(harness.seen[2].message.kind == MessageKind::kResponse);
  CHECK(harness.seen[2].peer == peer);

  const std::string answer = HttpResultLine(5, {{"content", Json::array()}});
  sink = harness.transport().Find(id);
  REQUIRE(sink != nullptr);
  sink->SendResponse(answer);
  REQUIRE(harness.PumpUntil([&] { return client.done.load(); }));
  const HttpReply reply = client.Finish();
  CHECK(reply.status == 200);
  CHECK(HttpStartsWith(reply.Header("content-type"), "text/event-stream"));
  CHECK(HttpSseData(reply.body) == std::vector<std::string>{question, answer});
}

TEST_CASE("Progress past an SSE stream's bound is dropped and reported with its exchange",
          "[http][mcp_http]") {
  McpHttpOptions options = HttpTestOptions();
  options.stream_bytes = 300;
  HttpHarness harness(options);
  const std::string body = HttpModernBody(
      31, "tools/call",
      {{"name", "slow"}, {"arguments", Json::object()}, {"_meta", {{"progressToken", "tok-1"}}}});
  HttpAsyncClient client(harness.port(),
                         HttpRequestText(harness.port(), "POST", "/mcp",
                                         HttpModernHeaders("tools/call", "slow"), body));
  REQUIRE(harness.PumpUntil([&] { return !harness.seen.empty(); }));
  REQUIRE(harness.PumpUntil([&] { return client.got_head.load(); }));
  const ExchangeId id = harness.seen[0].exchange;
  OutputSink* sink = harness.transport().Find(id);
  REQUIRE(sink != nullptr);
  // Three requests' progress at once (the loop does not run between them): each line is
  // over a third of the bound, so the oldest stream's is dropped.
  REQUIRE(HttpProgressLine(1).size() + 8 > 100);
  sink->SendProgress(1, HttpProgressLine(1));
  sink->SendProgress(2, HttpProgressLine(2));
  sink->SendProgress(3, HttpProgressLine(3));
  CHECK(harness.dropped == std::vector<std::pair<ExchangeId, uint64_t>>{{id, 1}});
  const std::string answer = HttpResultLine(31, {{"content", Json::array()}});
  sink->SendResponse(answer);
  REQUIRE(harness.PumpUntil([&] { return client.done.load(); }));
  const HttpReply reply = client.Finish();
  CHECK(HttpSseData(reply.body) ==
        std::vector<std::string>{HttpProgressLine(2), HttpProgressLine(3), answer});
}

TEST_CASE("An unknown method answered -32601 on the legacy path is 200", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const std::string session = HttpOpenSession(harness);
  harness.respond = [](Exchange& exchange, const Message& message) {
    exchange.SendResponse(HttpErrorLine(message.id, -32601, "Method not found: nope/never"));
  };
  const HttpReply reply = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp", HttpLegacyHeaders(session), HttpLegacyBody(2, "nope/never")));
  CHECK(reply.status == 200);
  CHECK(HttpBodyJson(reply)["error"]["code"] == -32601);
}

TEST_CASE("Past max_sessions the least recently used legacy session ends", "[http][mcp_http]") {
  McpHttpOptions options = HttpTestOptions();
  options.max_sessions = 2;
  HttpHarness harness(options);
  HttpAnswerEverything(harness);
  const std::string first = HttpOpenSession(harness);
  const PeerId first_peer = harness.seen.back().peer;
  const std::string second = HttpOpenSession(harness);
  const PeerId second_peer = harness.seen.back().peer;
  // Using the first makes the second the least recently used.
  CHECK(harness
            .RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(first),
                                       HttpLegacyBody(2, "tools/list")))
            .status == 200);
  const std::string third = HttpOpenSession(harness);
  CHECK(harness.transport().sessions() == 2);
  CHECK(harness.ended == std::vector<PeerId>{second_peer});
  CHECK(harness
            .RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(second),
                                       HttpLegacyBody(3, "tools/list")))
            .status == 404);
  for (const std::string& live : {first, third}) {
    CHECK(harness
              .RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", HttpLegacyHeaders(live),
                                         HttpLegacyBody(4, "tools/list")))
              .status == 200);
  }
  CHECK(std::find(harness.ended.begin(), harness.ended.end(), first_peer) == harness.ended.end());
}

TEST_CASE("A modern request ignores an Mcp-Session-Id header", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp",
                      HttpWith(HttpModernHeaders("tools/list"), "Mcp-Session-Id", "not-a-session"),
                      HttpModernBody(1, "tools/list")));
  CHECK(reply.status == 200);
  CHECK_FALSE(reply.Header("mcp-session-id").has_value());
  CHECK(harness.seen.size() == 1);
}

TEST_CASE("An empty body or a batch is 400 -32600", "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const HttpReply empty =
      harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", HttpJsonHeaders(), ""));
  CHECK(empty.status == 400);
  CHECK(HttpBodyJson(empty)["error"]["code"] == -32600);
  const HttpReply batch =
      harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", HttpJsonHeaders(),
                                        "[" + HttpModernBody(1, "tools/list") + "]"));
  CHECK(batch.status == 400);
  CHECK(HttpBodyJson(batch)["error"]["code"] == -32600);
  CHECK(harness.seen.empty());
}

TEST_CASE("With a token configured a request needs it as a bearer token", "[http][mcp_http]") {
  McpHttpOptions options = HttpTestOptions();
  options.guard.token = "s3cret-token";
  HttpHarness harness(options);
  HttpAnswerEverything(harness);
  const HttpReply refused = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                              HttpModernHeaders("tools/list"),
                                                              HttpModernBody(1, "tools/list")));
  CHECK(refused.status == 401);
  CHECK(HttpStartsWith(refused.Header("www-authenticate"), "Bearer"));
  CHECK(harness.seen.empty());

  const HttpReply wrong = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp",
                      HttpWith(HttpModernHeaders("tools/list"), "Authorization", "Bearer not-it"),
                      HttpModernBody(2, "tools/list")));
  CHECK(wrong.status == 401);
  CHECK(harness.seen.empty());

  const HttpReply accepted = harness.RoundTrip(HttpRequestText(
      harness.port(), "POST", "/mcp",
      HttpWith(HttpModernHeaders("tools/list"), "Authorization", "Bearer s3cret-token"),
      HttpModernBody(3, "tools/list")));
  CHECK(accepted.status == 200);
  REQUIRE(harness.seen.size() == 1);
  CHECK(harness.seen[0].message.id == Json(3));
}

TEST_CASE("Past max_connections open connections a request is answered 503", "[http][mcp_http]") {
  McpHttpOptions options = HttpTestOptions();
  options.server.max_connections = 2;
  HttpHarness harness(options);
  HttpAnswerEverything(harness);
  const int idle1 = HttpConnect(harness.port());
  const int idle2 = HttpConnect(harness.port());
  REQUIRE(idle1 >= 0);
  REQUIRE(idle2 >= 0);
  REQUIRE(harness.PumpUntil([&] { return harness.transport().server().connections() == 2; }));

  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("tools/list"),
                                                            HttpModernBody(1, "tools/list")));
  CHECK(reply.status == 503);
  CHECK(harness.seen.empty());

  close(idle1);
  close(idle2);
  REQUIRE(harness.PumpUntil([&] { return harness.transport().server().connections() == 0; }));
  const HttpReply after = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("tools/list"),
                                                            HttpModernBody(2, "tools/list")));
  CHECK(after.status == 200);
  CHECK(harness.seen.size() == 1);
}

TEST_CASE("A thousand abandoned connections leave the server serving and its count drops back",
          "[http][mcp_http]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  std::atomic<bool> finished{false};
  std::atomic<bool> stop{false};  // the test gave up: a broken server must not hang it
  std::atomic<int> opened{0};
  std::thread abandoner([&, port = harness.port()] {
    const std::string head = HttpRequestText(port, "POST", "/mcp", HttpModernHeaders("tools/list"),
                                             HttpModernBody(1, "tools/list"));
    for (int i = 0; i < 1000 && !stop; ++i) {
      const int fd = HttpConnect(port, 2000);
      if (fd < 0) continue;
      ++opened;
      switch (i % 4) {
        case 0:  // connected, nothing sent
          close(fd);
          break;
        case 1:  // half a request line and headers
          HttpSendAll(fd, head.substr(0, 40));
          close(fd);
          break;
        case 2:  // headers and half the body
          HttpSendAll(fd, head.substr(0, head.size() - 20));
          close(fd);
          break;
        default:  // headers and half the body, then a reset
          HttpSendAll(fd, head.substr(0, head.size() - 20));
          HttpCloseAbruptly(fd);
          break;
      }
    }
    finished = true;
  });
  const bool done = harness.PumpUntil([&] { return finished.load(); }, 1000000);
  stop = true;
  abandoner.join();
  REQUIRE(done);
  CHECK(opened == 1000);

  const HttpReply reply = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                            HttpModernHeaders("tools/list"),
                                                            HttpModernBody(2, "tools/list")));
  CHECK(reply.status == 200);
  CHECK(HttpBodyJson(reply)["id"] == 2);
  CHECK(harness.PumpUntil([&] { return harness.transport().server().connections() <= 1; }));
  CHECK(harness.PumpUntil([&] {
    return harness.transport().server().calls() == 0 && harness.transport().open_exchanges() == 0;
  }));
  // No abandoned request was ever complete enough to reach the dispatcher.
  CHECK(harness.seen.size() == 1);
  CHECK(harness.closed.empty());
}

// Hostile or unusual HTTP (HTTP-3): each is refused or served by libmicrohttpd's own rules,
// and the server goes on serving the next client.
TEST_CASE("Malformed HTTP gets a 400 and the next client is served", "[http][mcp_http][HTTP-3]") {
  HttpHarness harness;
  harness.respond = [](Exchange& exchange, const Message& message) {
    exchange.SendResponse(HttpResultLine(message.id, {{"tools", Json::array()}}));
  };
  for (const std::string& malformed : std::vector<std::string>{
           "GARBAGE\x01 / HTTP/9.9\r\n\r\n",
           "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nthis is not a header\r\n\r\n",
           "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    const HttpReply bad = harness.RoundTrip(malformed);
    INFO(bad.raw);
    CHECK((bad.status == 0 || (bad.status >= 400 && bad.status <= 505)));
  }
  CHECK(harness.seen.empty());
  const HttpReply good = harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp",
                                                           HttpModernHeaders("tools/list"),
                                                           HttpModernBody(1, "tools/list")));
  CHECK(good.status == 200);
}

// RFC 9112 §6.3: a body whose length two headers give differently is a request-smuggling
// vector (a proxy in front may frame it by the other one). libmicrohttpd picks one; keel
// refuses the request instead, and closes the connection.
TEST_CASE("A request framed twice (two Content-Lengths, or one with Transfer-Encoding) is 400",
          "[http][mcp_http][HTTP-3]") {
  HttpHarness harness;
  HttpAnswerEverything(harness);
  const std::string body = HttpModernBody(1, "tools/list");
  const std::string length = std::to_string(body.size());
  const std::string chunked = [&] {
    char size[16];
    std::snprintf(size, sizeof size, "%zx", body.size());
    return std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n";
  }();
  struct Case {
    HttpHeaderList headers;
    std::string body;
  };
  const HttpHeaderList base = HttpModernHeaders("tools/list");
  for (const Case& framed : std::vector<Case>{
           {HttpWith(HttpWith(base, "Content-Length", length), "Content-Length", "5"), body},
           {HttpWith(HttpWith(base, "Content-Length", length), "Content-Length", length), body},
           {HttpWith(HttpWith(base, "Transfer-Encoding", "chunked"), "Content-Length", length),
            chunked}}) {
    const HttpReply reply = harness.RoundTrip(
        HttpRequestText(harness.port(), "POST", "/mcp", framed.headers, framed.body));
    INFO(reply.raw.substr(0, 300));
    CHECK(reply.status == 400);
    CHECK(reply.Header("connection") == "close");
  }
  CHECK(harness.seen.empty());
  CHECK(harness.RoundTrip(HttpRequestText(harness.port(), "POST", "/mcp", base, body)).status ==
        200);
}

TEST_CASE("Headers larger than the header memory bound are refused without reaching the dispatcher",
          "[http][mcp_http][HTTP-3]") {
  McpHttpOptions options = HttpTestOptions();
  options.server.max_header_bytes = 8 << 10;
  HttpHarness harness(options);
  HttpHeaderList headers = HttpModernHeaders("tools/list");
  headers.emplace_back("X-Padding", std::string(16 << 10, 'a'));
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", headers, HttpModernBody(1, "tools/list")));
  INFO(reply.raw.substr(0, 200));
  CHECK((reply.status == 431 || reply.status == 413 || reply.status == 400 || reply.status == 0));
  CHECK(harness.seen.empty());
}

TEST_CASE("Two pipelined POSTs on one connection are both answered, in order",
          "[http][mcp_http][HTTP-3]") {
  HttpHarness harness;
  harness.respond = [](Exchange& exchange, const Message& message) {
    exchange.SendResponse(HttpResultLine(message.id, {{"tools", Json::array()}}));
  };
  const std::string first_body = HttpModernBody(1, "tools/list");
  std::string first =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(harness.port()) + "\r\n";
  for (const auto& [name, value] : HttpModernHeaders("tools/list"))
    first += name + ": " + value + "\r\n";
  first += "Content-Length: " + std::to_string(first_body.size()) + "\r\n\r\n" + first_body;
  const std::string second =
      HttpRequestText(harness.port(), "POST", "/mcp", HttpModernHeaders("tools/list"),
                      HttpModernBody(2, "tools/list"));
  const HttpReply reply = harness.RoundTrip(first + second);
  INFO(reply.raw);
  CHECK(reply.status == 200);
  const size_t one = reply.raw.find("\"id\":1");
  const size_t two = reply.raw.find("\"id\":2");
  CHECK(one != std::string::npos);
  CHECK(two != std::string::npos);
  CHECK(one < two);
  CHECK(harness.seen.size() == 2);
}

TEST_CASE("Expect 100-continue is honoured and the request served", "[http][mcp_http][HTTP-3]") {
  HttpHarness harness;
  harness.respond = [](Exchange& exchange, const Message& message) {
    exchange.SendResponse(HttpResultLine(message.id, {{"tools", Json::array()}}));
  };
  HttpHeaderList headers = HttpModernHeaders("tools/list");
  headers.emplace_back("Expect", "100-continue");
  const HttpReply reply = harness.RoundTrip(
      HttpRequestText(harness.port(), "POST", "/mcp", headers, HttpModernBody(7, "tools/list")));
  INFO(reply.raw);
  CHECK(reply.raw.find("\"id\":7") != std::string::npos);
  CHECK(reply.raw.find(" 200 ") != std::string::npos);
  CHECK(harness.seen.size() == 1);
}

TEST_CASE(
    "A client that stops reading its SSE stream is cut off after the idle timeout, which cancels "
    "its request",
    "[http][mcp_http][HTTP-3][CAN-5]") {
  McpHttpOptions options = HttpTestOptions();
  options.server.idle_timeout = Millis(1000);
  options.stream_bytes = 256 << 10;
  HttpHarness harness(options);
  std::optional<ExchangeId> streaming;
  harness.respond = [&streaming](Exchange& exchange, const Message&) { streaming = exchange.id(); };
  HttpHeaderList headers = HttpModernHeaders("tools/call", "flood");
  Json params = {
      {"name", "flood"}, {"arguments", Json::object()}, {"_meta", {{"progressToken", "p"}}}};
  const std::string request = HttpRequestText(harness.port(), "POST", "/mcp", headers,
                                              HttpModernBody(1, "tools/call", params));
  std::atomic<bool> release{false};
  std::thread client([&] {
    const int fd = HttpConnect(harness.port());
    if (fd < 0) return;
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    HttpSendAll(fd, request);
    while (!release.load()) std::this_thread::yield();  // never reads
    close(fd);
  });
  REQUIRE(harness.PumpUntil([&] { return streaming.has_value(); }));
  // Logs keep coming (each 32 KiB) until keel gives up on the reader.
  const std::string filler(32 << 10, 'x');
  std::function<void()> feed = [&] {
    if (OutputSink* sink = harness.transport().Find(*streaming)) {
      sink->SendLog(Json{{"jsonrpc", "2.0"},
                         {"method", "notifications/message"},
                         {"params", {{"level", "info"}, {"data", filler}}}}
                        .dump());
      harness.loop().AddTimer(harness.loop().clock().Now() + Millis(2), feed);
    }
  };
  feed();
  const bool cut = harness.PumpUntil([&] { return !harness.closed.empty(); }, 1000000);
  release = true;
  client.join();
  REQUIRE(cut);
  CHECK(harness.closed.front() == *streaming);
}

}  // namespace keel::mcp_http_test
