// UpstreamLink (WRAP-3, WRAP-4) against the scripted upstream (scripted_upstream.mjs): the
// era found by the handshake (a refused server/discover probe falls back to initialize; a
// 2026-07-28 server gets keel's envelope on every later request), a start that fails with
// the reason, restarts after a crash (Acquire waits for the new instance), the restart
// budget, and Shutdown.
#include "server/upstream/upstream_link.h"

#include <errno.h>
#include <signal.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "server/upstream/scripted_upstream.h"

namespace keel::upstream_link_test {
namespace {

// The methods the instance behind `client` received, in order (the `received` call last).
std::vector<std::string> MethodsReceived(UpstreamClient& client, Json* received = nullptr) {
  const Json seen = CallScripted(client, "received").value("received", Json::array());
  if (received != nullptr) *received = seen;
  std::vector<std::string> methods;
  for (const Json& message : seen) {
    methods.push_back(message["method"].is_string() ? message["method"].get<std::string>()
                                                    : "(answer)");
  }
  return methods;
}

std::shared_ptr<UpstreamClient> AcquireWithin(UpstreamLink& link, int seconds, std::string* why) {
  return link.Acquire(SecondsFromNow(seconds), CancellationToken(), why);
}

}  // namespace

TEST_CASE(
    "a server that refuses the server/discover probe is spoken to as 2025-11-25 after initialize",
    "[upstream][WRAP-4]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  CHECK(link->info().era == UpstreamEra::kLegacy);
  CHECK(link->info().protocol_version == "2025-11-25");
  CHECK(link->info().server_info["name"] == "scripted");
  CHECK(link->lists().tools.size() == 10);

  std::string why;
  auto client = AcquireWithin(*link, 10, &why);
  REQUIRE(client != nullptr);
  Json received;
  CHECK(MethodsReceived(*client, &received) ==
        std::vector<std::string>{"server/discover", "initialize", "notifications/initialized",
                                 "tools/list", "tools/call"});
  CHECK(received[1]["params"]["protocolVersion"] == "2025-11-25");
  CHECK(received[3]["enveloped"] == false);  // a legacy server gets no envelope
}

TEST_CASE("protocol legacy skips the server/discover probe", "[upstream][WRAP-4]") {
  TempDir dir;
  UpstreamOptions options = ScriptedUpstream(dir);
  options.protocol = "legacy";
  auto link = StartedLink(options);
  std::string why;
  auto client = AcquireWithin(*link, 10, &why);
  REQUIRE(client != nullptr);
  CHECK(MethodsReceived(*client).front() == "initialize");
  CHECK(link->info().era == UpstreamEra::kLegacy);
}

TEST_CASE(
    "a server that answers server/discover with 2026-07-28 is modern, and every later request "
    "carries keel's envelope",
    "[upstream][WRAP-4]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir, "modern"));  // it refuses requests without
  CHECK(link->info().era == UpstreamEra::kModern);
  CHECK(link->info().protocol_version == "2026-07-28");
  CHECK(link->info().server_info["name"] == "scripted");
  CHECK(link->lists().tools.size() == 10);

  std::string why;
  auto client = AcquireWithin(*link, 10, &why);
  REQUIRE(client != nullptr);
  Json received;
  CHECK(MethodsReceived(*client, &received) ==
        std::vector<std::string>{"server/discover", "tools/list", "tools/call"});
  for (const Json& message : received) {
    INFO(message.dump());
    CHECK(message["enveloped"] == true);
    const Json meta = message["params"]["_meta"];
    CHECK(meta["io.modelcontextprotocol/clientInfo"]["name"] == "keel");
    CHECK(meta.contains("io.modelcontextprotocol/clientCapabilities"));
  }
}

TEST_CASE(
    "a server that dies of the server/discover probe is started again and spoken to with "
    "initialize only",
    "[upstream][WRAP-4]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir, "die-on-discover"));
  CHECK(link->info().era == UpstreamEra::kLegacy);
  CHECK(LinesIn(dir, "instances.log") == 2);
  std::string why;
  auto client = AcquireWithin(*link, 10, &why);
  REQUIRE(client != nullptr);
  CHECK(MethodsReceived(*client).front() == "initialize");
}

TEST_CASE("a server that exits during the handshake fails Start, with the reason",
          "[upstream][WRAP-3]") {
  TempDir dir;
  UpstreamLink link(ScriptedUpstream(dir, "exit-on-initialize"));
  std::string error;
  CHECK_FALSE(link.Start(&error));
  CHECK(error == "the upstream did not answer initialize: exited with status 4");
  std::string why;
  CHECK(AcquireWithin(link, 0, &why) == nullptr);
}

TEST_CASE("a command that cannot be spawned fails Start, with the reason", "[upstream][WRAP-3]") {
  TempDir dir;
  UpstreamOptions options = ScriptedUpstream(dir);
  options.command.argv = {"/nonexistent/mcp-server"};
  UpstreamLink link(options);
  std::string error;
  CHECK_FALSE(link.Start(&error));
  CHECK(error.rfind("cannot start /nonexistent/mcp-server: ", 0) == 0);
}

TEST_CASE("after a crash the upstream is restarted, and Acquire waits for the new instance",
          "[upstream][WRAP-3]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  std::string why;
  auto first = AcquireWithin(*link, 10, &why);
  REQUIRE(first != nullptr);
  CHECK(CallScripted(*first, "pid")["instance"] == 1);
  CHECK(CallScripted(*first, "crash", &why).is_null());
  CHECK(why == "exited with status 1");

  auto second = AcquireWithin(*link, 10, &why);
  INFO(why);
  REQUIRE(second != nullptr);
  CHECK(second != first);
  CHECK_FALSE(second->closed());
  CHECK(CallScripted(*second, "pid")["instance"] == 2);
  CHECK(MethodsReceived(*second).front() == "initialize");  // the era found at start, kept
  CHECK(link->lists().tools.size() == 10);
}

TEST_CASE("once the restart budget is spent Acquire returns null, with the reason",
          "[upstream][WRAP-3]") {
  TempDir dir;
  UpstreamOptions options = ScriptedUpstream(dir, "later-exit-on-initialize");
  options.max_restarts = 1;
  auto link = StartedLink(options);
  std::string why;
  auto first = AcquireWithin(*link, 10, &why);
  REQUIRE(first != nullptr);
  CHECK(CallScripted(*first, "crash", &why).is_null());

  CHECK(AcquireWithin(*link, 10, &why) == nullptr);
  CHECK(why.find("keel stopped restarting it") != std::string::npos);
  CHECK(LinesIn(dir, "instances.log") == 2);  // one restart was tried, and failed
  std::string again;
  CHECK(AcquireWithin(*link, 10, &again) == nullptr);  // for good, at once
  CHECK(again == why);
}

TEST_CASE("Shutdown stops the upstream, and Acquire then refuses", "[upstream][WRAP-3]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  std::string why;
  auto client = AcquireWithin(*link, 10, &why);
  REQUIRE(client != nullptr);
  const pid_t pid = CallScripted(*client, "pid")["pid"].get<pid_t>();
  link->Shutdown();
  CHECK(client->closed());
  const int signalled = ::kill(pid, 0);
  const int error = errno;
  CHECK(signalled == -1);  // exited at end of file, and reaped
  CHECK(error == ESRCH);
  CHECK(AcquireWithin(*link, 10, &why) == nullptr);
  CHECK(why == "keel is shutting down");
  CHECK(LinesIn(dir, "instances.log") == 1);  // no restart followed
}

}  // namespace keel::upstream_link_test
