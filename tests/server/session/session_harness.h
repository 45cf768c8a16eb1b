// SessionHarness: a Session wired to a RecordingSink, a FakeClock and a worker pool, so
// tests send lines and read back parsed messages. Loop-thread work runs in Pump().
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "server/catalog/tool_registry.h"
#include "server/runtime/event_loop.h"
#include "server/runtime/worker_pool.h"
#include "server/session/session.h"
#include "server/tools/echo_tool.h"
#include "server/tools/test_tools.h"

namespace keel {

class SessionHarness {
 public:
  // workers == 0 runs tools inline (deterministic); tests that need a call to stay in
  // flight use a real worker and the latch tools.
  explicit SessionHarness(size_t workers = 0, SessionOptions options = SessionOptions())
      : pool_(workers), session_(loop_, sink_, registry_, pool_, options) {
    registry_.Register(MakeEchoTool());
    for (auto& tool : MakeTestTools()) registry_.Register(std::move(tool));
    session_.set_on_finished([this] { finished_ = true; });
  }
  // Serves `tool` too (before the first call that uses it); the registry's error, or empty.
  std::string Register(std::unique_ptr<Tool> tool) { return registry_.Register(std::move(tool)); }
  // Cancels whatever is still in flight so a failed test cannot leave a worker blocked
  // on a latch (the pool joins its threads).
  ~SessionHarness() { session_.ShutdownNow(); }

  void Send(const std::string& line) {
    session_.HandleLine(line);
    Pump();
  }
  // `line` as it arrives on exchange `exchange` of a transport (server/transport/exchange.h),
  // from `peer` (kNoPeer: the exchange is its own peer).
  void SendOn(ExchangeId exchange, const std::string& line, PeerId peer = kNoPeer) {
    session_.HandleLine(line, exchange, peer);
    Pump();
  }
  // Initializes `peer` (kNoPeer: the peer of Send, which comes on no exchange).
  void Initialize(PeerId peer = kNoPeer) {
    SendOn(
        kNoExchange,
        R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
        peer);
    SendOn(kNoExchange, R"({"jsonrpc":"2.0","method":"notifications/initialized"})", peer);
    sink_.Clear();
  }
  // Runs posted work and due timers without blocking.
  void Pump() { loop_.RunOnce(Duration::zero()); }
  // Runs the loop (woken by workers) until `done` holds; bounded.
  template <typename Pred>
  bool WaitUntil(Pred done) {
    for (int i = 0; i < 200 && !done(); ++i) loop_.RunOnce(Millis(50));
    return done();
  }
  // Waits (on the loop's poll, woken by workers) until a message answers `id`.
  // Bounded so a broken test fails instead of hanging.
  bool WaitFor(const Json& id) {
    for (int i = 0; i < 200 && sink_.ForId(id).empty(); ++i) loop_.RunOnce(Millis(50));
    return !sink_.ForId(id).empty();
  }
  // Waits (bounded, polling the coordinator) until a worker has picked up `peer`'s call `id`,
  // so a test can force the "running" side of a race.
  bool WaitUntilRunning(const Json& id, PeerId peer = kNoPeer) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      if (session_.coordinator().StateOf(id, peer) == CallState::kRunning) return true;
      std::this_thread::yield();
    }
    return false;
  }

  std::string Call(const Json& id, const std::string& tool, const Json& args,
                   const Json& meta = Json()) {
    Json params = {{"name", tool}, {"arguments", args}};
    if (!meta.is_null()) params["_meta"] = meta;
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}}
        .dump();
  }

  FakeClock& clock() { return clock_; }
  RecordingSink& sink() { return sink_; }
  Session& session() { return session_; }
  WorkerPool& pool() { return pool_; }
  bool finished() const { return finished_; }

 private:
  FakeClock clock_;
  EventLoop loop_{clock_};
  RecordingSink sink_;
  ToolRegistry registry_;
  WorkerPool pool_;
  Session session_;
  bool finished_ = false;
};

}  // namespace keel
