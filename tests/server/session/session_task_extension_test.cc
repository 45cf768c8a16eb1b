// The 2026-07-28 tasks extension through the Session (TASKX-1): a running call that becomes a
// task after --task-after, with each side of its races forced. The store thread is held by
// a job waiting on a latch, so "the work settled before the task was committed" and "the
// client gave up before the CreateTaskResult" happen in that order, not by luck; the loop's
// clock is a FakeClock, so --task-after passes when the test says.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "server/tasks/task_harness.h"

namespace keel::session_task_extension_test {
namespace {

const Json kDeclaring = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                         {"io.modelcontextprotocol/clientCapabilities",
                          {{"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}}}};

Json ModernCall(const Json& id, const std::string& tool, const Json& args) {
  return Json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "tools/call"},
              {"params", {{"name", tool}, {"arguments", args}, {"_meta", kDeclaring}}}};
}

Json LatchArgs(const std::string& name) {
  return Json{{"name", name}, {"ignore_cancel", false}, {"checkpoint", true}};
}

// Holds the task store thread until Open(): every store job posted meanwhile waits. The flag
// is shared with the store's job, which may still read it after the gate is gone.
class StoreGate {
 public:
  explicit StoreGate(TaskHarness& h) {
    h.store().Post([open = open_](TaskStore&) {
      while (!open->load()) std::this_thread::yield();
    });
  }
  ~StoreGate() { Open(); }
  StoreGate(const StoreGate&) = delete;
  StoreGate& operator=(const StoreGate&) = delete;
  void Open() { open_->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> open_ = std::make_shared<std::atomic<bool>>(false);
};

// Fires the --task-after timer (10 s by default) of every call admitted so far.
void PassTaskAfter(TaskHarness& h) {
  h.clock().Advance(Millis(10001));
  h.Pump();
}

}  // namespace

TEST_CASE(
    "a call whose work ends while its task is being committed is answered working, and "
    "tasks/get then gives its result",
    "[tasks][TASKX-1]") {
  TaskHarness h;
  h.Send(ModernCall(1, "latch_wait", LatchArgs("L")));
  REQUIRE(h.WaitUntil([&] { return h.session().coordinator().Started(1); }));
  {
    StoreGate gate(h);
    PassTaskAfter(h);  // promoted: the creation waits behind the gate
    CHECK(h.session().tasks()->live() == 1);
    h.Send(ModernCall(2, "latch_release", {{"name", "L"}}));
    // The work returns and settles the task in memory; its write queues behind the create.
    REQUIRE(h.WaitUntil([&] { return h.session().coordinator().live() == 0; }));
    CHECK(h.sink().ForId(1).empty());  // nothing before the commit
  }
  const Json created = h.Answer(1);
  REQUIRE(created["result"]["resultType"] == "task");
  CHECK(created["result"]["status"] == "working");  // the row as committed
  const std::string task_id = created["result"]["taskId"].get<std::string>();
  Json get_params = {{"taskId", task_id}, {"_meta", kDeclaring}};
  const Json read = h.Request(3, "tasks/get", get_params);
  CHECK(read["result"]["status"] == "completed");
  CHECK(read["result"]["result"]["content"].is_array());
  REQUIRE(h.WaitUntil([&] { return h.session().tasks()->live() == 0; }));
}

TEST_CASE(
    "a call cancelled while it is being made a task is never answered, and its task is "
    "cancelled with its work stopped",
    "[tasks][TASKX-1][CAN-2]") {
  TaskHarness h;
  h.Initialize();  // a legacy session too, to read the rows with tasks/list
  h.Send(ModernCall(1, "latch_wait", LatchArgs("L")));
  REQUIRE(h.WaitUntil([&] { return h.session().coordinator().Started(1); }));
  {
    StoreGate gate(h);
    PassTaskAfter(h);
    h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
    CHECK(h.session().coordinator().live() == 1);  // the work is the task's now
  }
  // The commit comes back: nobody will learn the id, so the task is cancelled and its work
  // stopped at its checkpoint.
  REQUIRE(h.WaitUntil(
      [&] { return h.session().coordinator().live() == 0 && h.session().tasks()->live() == 0; }));
  const Json list = h.Request(2, "tasks/list", Json::object());
  REQUIRE(list["result"]["tasks"].size() == 1);
  CHECK(list["result"]["tasks"][0]["status"] == "cancelled");
  CHECK(h.sink().ForId(1).empty());
}

TEST_CASE("a call that ends before --task-after is answered as a call, and no task is made",
          "[tasks][TASKX-1]") {
  TaskHarness h;
  h.Initialize();
  h.Send(ModernCall(1, "echo", {{"text", "hi"}}));
  const Json answer = h.Answer(1);
  CHECK(answer["result"]["resultType"] == "complete");
  PassTaskAfter(h);
  CHECK(h.session().tasks()->live() == 0);
  CHECK(h.Request(2, "tasks/list", Json::object())["result"]["tasks"].empty());
}

}  // namespace keel::session_task_extension_test
