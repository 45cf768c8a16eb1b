// StdioServer: one MCP session over keel's stdio, served until it ends. It wires the event
// loop, the stdio transport and the Session; watches the signal pipe (SignalDispatch: SIGHUP
// reloads the policy, SIGTERM/SIGINT drain like stdin EOF, a second one ends the grace at
// once); runs the durable upkeep (durable_upkeep.h); and ends with the exit sequence
// (serve_exit.h).
//
// Thread: Run() makes the calling thread the loop thread.
// Invariants:
//  1. Tasks a dead keel left working are queued for recovery on the task store thread before
//     any request is read (the store runs jobs in order).
//  2. The task store thread is joined before the loop goes away (member order), so its
//     answers never reach a destroyed loop.
//  3. Serving ends when the session has finished (after stdin EOF or a signal) or at once when
//     the client closes stdout (nothing keel writes can arrive).
//  5. SIGHUP also reloads the --catalog file's resources, prompts and completions (the
//     tools stay those of start-up): a file that does not load keeps what is in force.
//  4. A policy reload that fails keeps the policy in force; one that succeeds is put in force
//     on the loop thread and recorded in the database on a worker.
//  5. A tool that changes what keel lists (ToolSet::tools_changed) is heard on the loop
//     thread, as a policy reload is: open subscriptions/listen streams that asked are told;
//     the hook is connected only while this server exists.
//  6. keel wrap: the upstream's notifications/tools/list_changed makes keel read its lists
//     again; when its tools changed, keel's tools/list follows (UpstreamToolSync) and every
//     client is told (subscriptions/listen streams that asked, legacy peers).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "server/app/cli_options.h"
#include "server/app/durable_upkeep.h"
#include "server/app/signal_dispatch.h"
#include "server/app/surface_watch.h"
#include "server/app/tool_set.h"
#include "server/app/upstream_tool_sync.h"
#include "server/durable/ledger_service.h"
#include "server/policy/policy.h"
#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"
#include "server/runtime/worker_pool.h"
#include "server/session/session.h"
#include "server/tasks/task_store_thread.h"
#include "server/trace/trace_log.h"
#include "server/transport/function_dispatcher.h"
#include "server/transport/http/mcp_http.h"
#include "server/transport/output_router.h"
#include "server/transport/stdio_fd.h"
#include "server/transport/stdio_transport.h"
#include "server/upstream/upstream_link.h"

namespace keel {

// What start-up made, for the server. Everything referred to outlives the server.
struct ServeParts {
  const CliOptions& flags;
  PolicyHandle policy;                    // in force at start
  std::shared_ptr<LedgerService> ledger;  // open on the --db file
  std::string owner;                      // ProcessOwner()
  const ToolSet& tools;
  TraceLog* trace = nullptr;  // --trace-file; null: none
  StdioFd in;                 // the protocol streams (protocol_fds.h)
  StdioFd out;
  int signal_fd = -1;  // the signal pipe's read end (signal_pipe.h)
  // --http (http_setup.h); nullopt: no HTTP. With `no_stdio`, stdin and stdout are not
  // served.
  std::optional<McpHttpOptions> http;
  bool no_stdio = false;
  // The resources, prompts and completions served (surface_setup.h); null: none.
  std::shared_ptr<Surface> surface;
  // keel wrap: the server wrapped (wrap_setup.h); its notifications reach the session, and
  // it is stopped with keel. Null: keel serves its own tools.
  std::shared_ptr<UpstreamLink> upstream;
  // keel wrap: follows the upstream's tool list into `tools` (invariant 6). Null: the tools
  // stay those of start-up.
  std::shared_ptr<UpstreamToolSync> upstream_tools;
  // The catalog's `server` section (how keel introduces itself); empty: keel's own.
  ServerIdentity identity;
};

class StdioServer {
 public:
  // `task_store` is the --db file's, started (TaskStoreThread::Start).
  StdioServer(ServeParts parts, std::unique_ptr<TaskStoreThread> task_store);
  // Disconnects the tool set's hooks from this server (invariant 5).
  ~StdioServer();
  StdioServer(const StdioServer&) = delete;
  StdioServer& operator=(const StdioServer&) = delete;

  // Serves until the session ends, then runs the exit sequence. Returns 0 (69 when the HTTP
  // address cannot be listened on), or does not return: _Exit(70) when the loop itself
  // fails, _Exit(0) when tool code still runs at exit.
  int Run();
  // The HTTP port listened on (after Run started it); 0 without --http.
  uint16_t http_port() const { return http_ ? http_->port() : 0; }

  // For tests, after Run().
  const Session& session() const { return session_; }

 private:
  FunctionDispatcher::Functions TransportCallbacks();
  FunctionDispatcher::Functions HttpCallbacks();
  // Where each exchange's output goes: stdio's one exchange (and lines that concern no
  // request), or an HTTP exchange while it is open.
  class Router final : public OutputRouter {
   public:
    explicit Router(StdioServer& server) : server_(server) {}
    OutputSink* Find(ExchangeId id) override;

   private:
    StdioServer& server_;
  };
  // The session's default sink when stdin/stdout are not served: drops everything.
  class NullSink final : public OutputSink {
   public:
    void SendResponse(std::string) override {}
    void SendProgress(uint64_t, std::string) override {}
    void DiscardProgress(uint64_t) override {}
    void SendLog(std::string) override {}
  };
  void WireSession();
  void WireUpstream();
  void OnUpstreamNotification(const std::string& method, const Json& params);
  void ReloadPolicy();
  // DIST-2: with a --db shared across machines, keyed command writes a dead keel left are
  // looked up every kFleetReconcileInterval, not only at start-up (another keel may die
  // while this one runs); one pass at a time, on a worker.
  void ArmFleetReconcile();

  ServeParts parts_;
  // A fleet reconciliation pass runs on a worker (declared before the pool, whose
  // destruction waits for that pass).
  std::atomic<bool> reconciling_{false};
  SteadyClock clock_;
  EventLoop loop_;
  // Durable tasks are read and written on their own thread (declared after the loop it
  // posts answers to, so it is drained and joined before the loop goes away).
  std::unique_ptr<TaskStoreThread> task_store_;
  WorkerPool pool_;
  bool peer_gone_ = false;
  FunctionDispatcher dispatcher_;  // what the transport delivers, to the session
  FunctionDispatcher http_dispatcher_;
  NullSink null_sink_;
  std::unique_ptr<StdioTransport> transport_;  // null with --no-stdio
  Session session_;
  Router router_{*this};
  std::unique_ptr<McpHttpTransport> http_;  // null without --http
  LedgerReaper reaper_;
  SurfaceWatch surface_watch_{loop_, session_};
  SignalDispatch signals_;
};

}  // namespace keel
