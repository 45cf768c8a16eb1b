// HttpUpstream (server/upstream/http_upstream.h) against a scripted HTTP server on loopback
// (fake_http_upstream.h): what each kind of response becomes, failures answered per request,
// when the connection ends, Abandon, the legacy session's headers, GET stream and DELETE.
// The waits are bounded by deadlines; nothing sleeps.
#include "server/upstream/http_upstream.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/upstream/fake_http_upstream.h"

namespace keel::http_upstream_test {
namespace {

using Json = nlohmann::json;
using namespace keel::fake_http_upstream;

struct HttpEventLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<Json, Json>> messages;  // message, related
  std::vector<std::string> closed;

  UpstreamEvents Events() {
    UpstreamEvents events;
    events.on_message = [this](Json message, const Json& related) {
      std::lock_guard<std::mutex> lock(mu);
      messages.emplace_back(std::move(message), related);
      cv.notify_all();
    };
    events.on_closed = [this](std::string why) {
      std::lock_guard<std::mutex> lock(mu);
      closed.push_back(std::move(why));
      cv.notify_all();
    };
    return events;
  }
  bool WaitMessages(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return messages.size() >= n; });
  }
  bool WaitClosed() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return !closed.empty(); });
  }
};

std::unique_ptr<HttpUpstream> HttpStartAt(const std::string& url, HttpEventLog& log,
                                          size_t max_line_bytes = 1 << 20) {
  UpstreamEndpoint endpoint;
  endpoint.url = url;
  endpoint.max_line_bytes = max_line_bytes;
  std::string error;
  std::unique_ptr<HttpUpstream> upstream = HttpUpstream::Start(endpoint, log.Events(), &error);
  REQUIRE(upstream);
  return upstream;
}

std::unique_ptr<HttpUpstream> HttpStart(const FakeHttpServer& server, HttpEventLog& log,
                                        size_t max_line_bytes = 1 << 20) {
  REQUIRE(server.listening());
  return HttpStartAt(server.url(), log, max_line_bytes);
}

void HttpSend(HttpUpstream& upstream, const Json& message) {
  std::string why;
  REQUIRE(upstream.Send(message, &why));
}

Json HttpRequest(int id, const std::string& method, Json params = Json::object()) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

std::string HttpAnswer(int id) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"ok", id}}}}.dump();
}

}  // namespace

TEST_CASE("a JSON answer is delivered related to its request", "[upstream][http]") {
  FakeHttpServer server([](const FakeRequest&) { return FakeJsonReply(200, HttpAnswer(7)); });
  HttpEventLog log;
  auto upstream = HttpStart(server, log);
  HttpSend(*upstream, HttpRequest(7, "tools/list"));
  REQUIRE(log.WaitMessages(1));
  CHECK(log.messages[0].first["result"]["ok"] == 7);
  CHECK(log.messages[0].second == 7);
  const FakeRequest seen = server.requests().at(0);
  CHECK(seen.method == "POST");
  CHECK(seen.Header("content-type") == "application/json");
  CHECK(seen.Header("accept") == "application/json, text/event-stream");
  CHECK(Json::parse(seen.body)["method"] == "tools/list");
  upstream->Shutdown(Millis(100));
  REQUIRE(log.closed.size() == 1);
}

TEST_CASE("each event of an SSE answer is delivered in order, related to the request",
          "[upstream][http]") {
  const std::string progress =
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"keel-3","progress":1}})";
  FakeHttpServer server([&](const FakeRequest&) {
    return FakeSseReply({progress, "not json", HttpAnswer(3)});
  });
  HttpEventLog log;
  auto upstream = HttpStart(server, log);
  HttpSend(*upstream, HttpRequest(3, "tools/call"));
  REQUIRE(log.WaitMessages(2));
  CHECK(log.messages[0].first["method"] == "notifications/progress");
  CHECK(log.messages[0].second == 3);
  CHECK(log.messages[1].first["result"]["ok"] == 3);
  CHECK(log.messages[1].second == 3);
  upstream->Shutdown(Millis(100));
  CHECK(log.messages.size() == 2);  // the junk event was dropped, nothing else came
}

TEST_CASE("a failed POST answers its request with -32000 and the connection goes on",
          "[upstream][http]") {
  std::atomic<int> calls{0};
  FakeHttpServer server([&](const FakeRequest&) {
    return ++calls == 1 ? FakeEmptyReply(503) : FakeJsonReply(200, HttpAnswer(2));
  });
  HttpEventLog log;
  auto upstream = HttpStart(server, log);
  HttpSend(*upstream, HttpRequest(1, "tools/call"));
  REQUIRE(log.WaitMessages(1));
  const Json& error = log.messages[0].first["error"];
  CHECK(error["code"] == -32000);
  CHECK(error["data"]["http_status"] == 503);
  CHECK(error["data"]["sent"] == true);
  CHECK(error["message"].get<std::string>().find("HTTP 503") != std::string::npos);
  CHECK(log.messages[0].second == 1);
  HttpSend(*upstream, HttpRequest(2, "tools/call"));
  REQUIRE(log.WaitMessages(2));
  CHECK(log.messages[1].first["result"]["ok"] == 2);
  CHECK(log.closed.empty());
}

TEST_CASE("the upstream's own JSON-RPC error on an error status is delivered as it is",
          "[upstream][http]") {
  const std::string refusal =
      R"({"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}})";
  FakeHttpServer server([&](const FakeRequest&) { return FakeJsonReply(404, refusal); });
  HttpEventLog log;
  auto upstream = HttpStart(server, log);
  HttpSend(*upstream, HttpRequest(4, "server/discover"));
  REQUIRE(log.WaitMessages(1));
  CHECK(log.messages[0].first["error"]["code"] == -32601);
}

TEST_CASE("a stream that ends without the answer, or with one over the bound, fails the request",
          "[upstream][http]") {
  FakeHttpServer server([&](const FakeRequest& request) {
    if (Json::parse(request.body)["id"] == 1) return FakeSseReply({});
    return FakeJsonReply(200, std::string(300, ' ') + HttpAnswer(2));
  });
  HttpEventLog log;
  auto upstream = HttpStart(server, log, 256);
  HttpSend(*upstream, HttpRequest(1, "tools/call"));
  REQUIRE(log.WaitMessages(1));
  CHECK(log.messages[0].first["error"]["message"].get<std::string>().find("without an answer") !=
        std::string::npos);
  HttpSend(*upstream, HttpRequest(2, "tools/call"));
  REQUIRE(log.WaitMessages(2));
  CHECK(log.messages[1].first["error"]["message"].get<std::string>().find("over 256 bytes") !=
        std::string::npos);
}

TEST_CASE("Abandon closes the request's stream and nothing more of it is delivered",
          "[upstream][http]") {
  FakeHttpServer server([&](const FakeRequest&) { return FakeSseReply({}, true); });
  HttpEventLog log;
  auto upstream = HttpStart(server, log);
  HttpSend(*upstream, HttpRequest(9, "tools/call"));
  REQUIRE(server.WaitRequests(1));
  upstream->Abandon(Json(9));
  CHECK(server.WaitClosedByClient(1));
  upstream->Shutdown(Millis(100));
  CHECK(log.messages.empty());
  CHECK(log.closed.size() == 1);
}

TEST_CASE("an upstream nobody answers for three requests in a row ends the connection",
          "[upstream][http]") {
  std::string url;
  {
    FakeHttpServer gone([](const FakeRequest&) { return FakeEmptyReply(500); });
    url = gone.url();
  }  // nothing listens on its port any more
  HttpEventLog log;
  auto upstream = HttpStartAt(url, log);
  for (int id = 1; id <= kMaxUnreachable; ++id) HttpSend(*upstream, HttpRequest(id, "ping"));
  REQUIRE(log.WaitClosed());
  CHECK(log.closed[0].find("could not be reached") != std::string::npos);
  REQUIRE(log.messages.size() == static_cast<size_t>(kMaxUnreachable));
  CHECK(log.messages[0].first["error"]["data"].contains("transport"));
  CHECK(log.messages[0].first["error"]["data"]["sent"] == false);
  std::string why;
  CHECK_FALSE(upstream->Send(HttpRequest(9, "ping"), &why));
}

TEST_CASE("a legacy session is sent, refused by 404 as ended, and DELETEd at shutdown",
          "[upstream][http]") {
  FakeHttpServer server([&](const FakeRequest& request) {
    if (request.method == "GET") return FakeEmptyReply(405);
    if (request.method == "DELETE") return FakeEmptyReply(204);
    const Json body = Json::parse(request.body);
    if (body["method"] == "initialize") {
      const Json result = {{"protocolVersion", "2025-11-25"}, {"capabilities", Json::object()}};
      return FakeJsonReply(200,
                           Json{{"jsonrpc", "2.0"}, {"id", body["id"]}, {"result", result}}.dump(),
                           "Mcp-Session-Id: s-1\r\n");
    }
    if (!body.contains("id")) return FakeEmptyReply(202);
    return FakeJsonReply(200, HttpAnswer(body["id"].get<int>()));
  });
  HttpEventLog log;
  auto upstream = HttpStart(server, log);
  HttpSend(*upstream, HttpRequest(1, "initialize", {{"protocolVersion", "2025-11-25"}}));
  REQUIRE(log.WaitMessages(1));
  HttpSend(*upstream, Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  HttpSend(*upstream, HttpRequest(2, "tools/list"));
  REQUIRE(log.WaitMessages(2));
  REQUIRE(server.WaitRequests(4));  // with the GET stream, refused
  for (const FakeRequest& request : server.requests()) {
    if (request.method == "GET") CHECK(request.Header("accept") == "text/event-stream");
    if (Json::parse(request.body.empty() ? "{}" : request.body).value("method", "") ==
        "initialize") {
      CHECK(request.Header("mcp-session-id").empty());
    } else {
      CHECK(request.Header("mcp-session-id") == "s-1");
      CHECK(request.Header("mcp-protocol-version") == "2025-11-25");
    }
  }
  upstream->Shutdown(Millis(1000));
  CHECK(server.requests().back().method == "DELETE");
  CHECK(log.closed.size() == 1);
}

TEST_CASE("a 404 to keel's session ends the connection", "[upstream][http]") {
  FakeHttpServer server([&](const FakeRequest& request) {
    const Json body = Json::parse(request.body);
    if (body["method"] == "initialize") {
      return FakeJsonReply(200,
                           Json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", Json::object()}}.dump(),
                           "Mcp-Session-Id: s-2\r\n");
    }
    return FakeEmptyReply(404);
  });
  HttpEventLog log;
  auto upstream = HttpStart(server, log);
  HttpSend(*upstream, HttpRequest(1, "initialize", {{"protocolVersion", "2025-11-25"}}));
  REQUIRE(log.WaitMessages(1));
  HttpSend(*upstream, HttpRequest(2, "tools/list"));
  REQUIRE(log.WaitClosed());
  CHECK(log.closed[0].find("HTTP 404") != std::string::npos);
  CHECK(log.messages.size() == 1);  // the lost request is the client's to fail (kLost)
}

}  // namespace keel::http_upstream_test
