// A serving keel end to end, over real pipes and without a process of its own: stdin EOF ends
// serving with exit 0 after the answers are out; signals come through a pipe the test writes,
// as the signal handler would (SIGHUP with an invalid --policy file keeps the policy in
// force, a valid one replaces it and is recorded); a client that closes stdout ends serving
// at once. Tools run inline (no worker threads), so nothing is left running at exit.
#include "server/app/stdio_server.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "app_fixtures.h"
#include "server/app/durable_state.h"
#include "server/app/serve_config.h"
#include "server/durable/policy_store.h"

namespace keel::stdio_server_test {
namespace {

using app_test::TempKeelDb;

constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
    R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
    "\n";

// A keel served on pipes: the test writes its stdin and signal pipe and reads its stdout.
class PipedKeel {
 public:
  PipedKeel() {
    for (int* fds : {in_, out_, signals_}) REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    db_.flags().workers = 0;  // tools run inline on the loop thread
  }
  ~PipedKeel() {
    server_.reset();
    for (int* fds : {in_, out_, signals_}) {
      for (int i : {0, 1}) {
        if (fds[i] >= 0) close(fds[i]);
      }
    }
  }

  TempKeelDb& db() { return db_; }
  void Stdin(const std::string& text) { REQUIRE(write(in_[1], text.data(), text.size()) > 0); }
  void CloseStdin() { CloseEnd(in_, 1); }
  void CloseStdout() { CloseEnd(out_, 0); }
  void Signal(int signo) {
    const char byte = static_cast<char>(signo);
    REQUIRE(write(signals_[1], &byte, 1) == 1);
  }

  // Starts keel as Serve() would with the current flags, up to serving.
  void Start() {
    std::ostringstream err;
    config_ = LoadServeConfig(db_.flags(), err);
    REQUIRE_FALSE(config_.exit_code);
    durable_ = OpenDurableState(db_.flags(), *config_.policy, "keel-test", err);
    REQUIRE_FALSE(durable_.exit_code);
    tools_ = std::make_unique<ToolSet>(
        BuildToolSet(db_.flags(), *config_.catalog, durable_.ledger, err));
    REQUIRE_FALSE(tools_->exit_code);
    std::string error;
    std::unique_ptr<TaskStoreThread> task_store = TaskStoreThread::Start(db_.path(), &error);
    REQUIRE(task_store);
    server_ = std::make_unique<StdioServer>(ServeParts{.flags = db_.flags(),
                                                       .policy = config_.policy,
                                                       .ledger = durable_.ledger,
                                                       .owner = "keel-test",
                                                       .tools = *tools_,
                                                       .in = {in_[0], StdioFd::Kind::kOwn},
                                                       .out = {out_[1], StdioFd::Kind::kOwn},
                                                       .signal_fd = signals_[0]},
                                            std::move(task_store));
  }
  // Serves until it ends; returns the exit code.
  int Run() { return server_->Run(); }
  int Serve() {
    Start();
    return Run();
  }

  const StdioServer& server() const { return *server_; }
  std::shared_ptr<LedgerService> ledger() const { return durable_.ledger; }

  std::string Stdout() {
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = read(out_[0], buffer, sizeof(buffer))) > 0) {
      text.append(buffer, static_cast<size_t>(n));
    }
    return text;
  }

 private:
  static void CloseEnd(int* fds, int end) {
    close(fds[end]);
    fds[end] = -1;
  }

  TempKeelDb db_;
  int in_[2];
  int out_[2];
  int signals_[2];
  ServeConfig config_;
  DurableState durable_;
  std::unique_ptr<ToolSet> tools_;
  std::unique_ptr<StdioServer> server_;
};

TEST_CASE("stdin EOF ends serving with exit 0 once every answer is out") {
  PipedKeel keel;
  keel.Stdin(kInitialize);
  keel.Stdin(R"({"jsonrpc":"2.0","id":2,"method":"ping"})"
             "\n");
  keel.CloseStdin();
  CHECK(keel.Serve() == 0);
  std::istringstream lines(keel.Stdout());
  std::string first;
  std::string second;
  REQUIRE(std::getline(lines, first));
  REQUIRE(std::getline(lines, second));
  CHECK(nlohmann::json::parse(first)["result"]["serverInfo"]["version"] == KEEL_VERSION);
  CHECK(nlohmann::json::parse(second) ==
        nlohmann::json::parse(R"({"jsonrpc":"2.0","id":2,"result":{}})"));
}

TEST_CASE("a SIGHUP with an invalid policy file keeps the policy in force while serving") {
  PipedKeel keel;
  keel.db().flags().policy_file = keel.db().dir().Write("policy.json", R"({"version":"v1"})");
  keel.Start();
  keel.db().dir().Write("policy.json", R"({"version":"v2","x":1})");  // broken after start-up
  keel.Signal(SIGHUP);
  keel.Signal(SIGTERM);  // then drain: nothing is in flight, so serving ends
  CHECK(keel.Run() == 0);
  CHECK(keel.server().session().policy()->version == "v1");
  CHECK(nlohmann::json::parse(*StoredPolicy(keel.ledger()->Borrow().db(), false))["version"] ==
        "v1");
  CHECK_FALSE(StoredPolicy(keel.ledger()->Borrow().db(), /*previous=*/true));
}

TEST_CASE("a SIGHUP with a valid policy file puts it in force and records it") {
  PipedKeel keel;
  keel.db().flags().policy_file = keel.db().dir().Write("policy.json", R"({"version":"v1"})");
  keel.Start();
  keel.db().dir().Write("policy.json", R"({"version":"v2"})");
  keel.Signal(SIGHUP);
  keel.Signal(SIGTERM);
  CHECK(keel.Run() == 0);
  CHECK(keel.server().session().policy()->version == "v2");
  CHECK(nlohmann::json::parse(*StoredPolicy(keel.ledger()->Borrow().db(), false))["version"] ==
        "v2");
  CHECK(nlohmann::json::parse(*StoredPolicy(keel.ledger()->Borrow().db(), true))["version"] ==
        "v1");
}

TEST_CASE("a second SIGTERM is harmless once serving is draining") {
  PipedKeel keel;
  keel.Signal(SIGTERM);
  keel.Signal(SIGINT);
  CHECK(keel.Serve() == 0);
  CHECK(keel.Stdout().empty());
}

TEST_CASE("a client that closes stdout ends serving at once, with stdin still open") {
  signal(SIGPIPE, SIG_IGN);  // as keel does: a closed stdout is EPIPE, not death
  PipedKeel keel;
  keel.CloseStdout();
  keel.Stdin(kInitialize);  // its answer finds nobody reading
  CHECK(keel.Serve() == 0);
}

}  // namespace
}  // namespace keel::stdio_server_test
