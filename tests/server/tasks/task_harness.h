// TaskHarness: a Session with durable tasks, over a migrated database in a temp dir, a
// FakeClock for the loop and a hand-set wall clock for task times. Answers from the task
// store thread arrive through the loop, so tests wait for them with WaitFor().
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "fakes/temp_dir.h"
#include "fakes/temp_ledger.h"
#include "ledger/database.h"
#include "ledger/schema.h"
#include "server/catalog/tool_registry.h"
#include "server/durable/ledger_service.h"
#include "server/runtime/event_loop.h"
#include "server/runtime/worker_pool.h"
#include "server/session/session.h"
#include "server/tasks/task_store_thread.h"
#include "server/tools/echo_tool.h"
#include "server/tools/ledger_tools.h"
#include "server/tools/test_tools.h"

namespace keel {

class TaskHarness {
 public:
  // `ledger_tools`: also serve charge_account, reserve_inventory and ledger_lookup.
  // `more_tools`: registers more tools after those.
  explicit TaskHarness(size_t workers = 2, TaskOptions task_options = TaskOptions(),
                       bool ledger_tools = false,
                       const std::function<void(ToolRegistry&)>& more_tools = nullptr) {
    std::string error;
    {
      auto db = Database::Open(Path(), &error);
      REQUIRE(db != nullptr);
      REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
    }
    store_ = TaskStoreThread::Start(Path(), &error);
    REQUIRE(store_ != nullptr);
    registry_.Register(MakeEchoTool());
    for (auto& tool : MakeTestTools()) registry_.Register(std::move(tool));
    if (ledger_tools) {
      ledger_ = OpenTestLedger(Path(), "keel-test", 3'600'000);
      for (auto& tool : MakeLedgerTools(ledger_)) registry_.Register(std::move(tool));
    }
    if (more_tools) more_tools(registry_);
    pool_ = std::make_unique<WorkerPool>(workers);
    SessionOptions options;
    if (task_options.owner.empty()) task_options.owner = "keel-test";
    options.tasks = task_options;
    session_ = std::make_unique<Session>(loop_, sink_, registry_, *pool_, options, store_.get(),
                                         [this] { return wall_ms.load(); });
    session_->set_on_finished([this] { finished_ = true; });
  }
  ~TaskHarness() {
    session_->ShutdownNow();
    for (int i = 0; i < 100 && !finished_; ++i) loop_.RunOnce(Millis(10));
  }

  std::string Path() const { return dir_.File("keel.db"); }

  void Send(const std::string& line) {
    session_->HandleLine(line);
    Pump();
  }
  // `line` as it arrives on exchange `exchange` of a transport (server/transport/exchange.h),
  // from `peer` (kNoPeer: the exchange is its own peer).
  void SendOn(ExchangeId exchange, const Json& message, PeerId peer = kNoPeer) {
    session_->HandleLine(message.dump(), exchange, peer);
    Pump();
  }
  void Send(const char* line) { Send(std::string(line)); }
  void Send(const Json& message) { Send(message.dump()); }
  // Initializes `peer` (kNoPeer: the peer of Send, which comes on no exchange).
  void Initialize(bool send_initialized = true, PeerId peer = kNoPeer) {
    SendOn(kNoExchange, Json::parse(kInitializeLine), peer);
    if (send_initialized) {
      SendOn(kNoExchange, Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, peer);
    }
    sink_.Clear();
  }
  static constexpr const char* kInitializeLine =
      R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  void Pump() { loop_.RunOnce(Duration::zero()); }
  // Runs the loop (woken by workers and the store thread) until `done` holds; bounded.
  template <typename Pred>
  bool WaitUntil(Pred done) {
    for (int i = 0; i < 400 && !done(); ++i) loop_.RunOnce(Millis(25));
    return done();
  }
  bool WaitFor(const Json& id) {
    return WaitUntil([&] { return !sink_.ForId(id).empty(); });
  }
  // The one answer to `id` (waits for it).
  Json Answer(const Json& id) {
    REQUIRE(WaitFor(id));
    auto answers = sink_.ForId(id);
    REQUIRE(answers.size() == 1);
    return answers.front();
  }
  Json Request(const Json& id, const std::string& method, const Json& params) {
    Send(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    return Answer(id);
  }
  // tools/call with params.task; returns the created task's id.
  std::string CreateTask(const Json& id, const std::string& tool, const Json& args,
                         const Json& meta = Json(), const Json& task = Json{{"ttl", 60000}}) {
    Json params = {{"name", tool}, {"arguments", args}, {"task", task}};
    if (!meta.is_null()) params["_meta"] = meta;
    const Json answer = Request(id, "tools/call", params);
    REQUIRE(answer.contains("result"));
    return answer["result"]["task"]["taskId"].get<std::string>();
  }
  bool WaitUntilRunning(const std::string& task_id) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      Pump();
      const auto generation = session_->tasks()->GenerationOf(task_id);
      if (generation && session_->coordinator().Started(*generation)) return true;
      std::this_thread::yield();
    }
    return false;
  }
  // The status notifications sent so far for `task_id`.
  std::vector<Json> StatusOf(const std::string& task_id) const {
    std::vector<Json> out;
    for (const Json& m : sink_.WithMethod("notifications/tasks/status")) {
      if (m["params"].value("taskId", "") == task_id) out.push_back(m["params"]);
    }
    return out;
  }

  RecordingSink& sink() { return sink_; }
  Session& session() { return *session_; }
  FakeClock& clock() { return clock_; }
  TaskStoreThread& store() { return *store_; }
  WorkerPool& pool() { return *pool_; }
  bool finished() const { return finished_; }

  std::atomic<int64_t> wall_ms{1'800'000'000'000};

 private:
  TempDir dir_;
  FakeClock clock_;
  EventLoop loop_{clock_};
  std::unique_ptr<TaskStoreThread> store_;
  std::shared_ptr<LedgerService> ledger_;
  RecordingSink sink_;
  ToolRegistry registry_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<Session> session_;
  bool finished_ = false;
};

}  // namespace keel
