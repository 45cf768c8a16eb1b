#include "server/app/stdio_server.h"

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "server/app/exit_codes.h"
#include "server/app/policy_reload.h"
#include "server/app/serve_exit.h"
#include "server/app/serve_session_options.h"
#include "server/app/surface_setup.h"
#include "server/app/wrap_setup.h"
#include "server/runtime/process_runner.h"
#include "server/tasks/task_recovery.h"

namespace keel {
namespace {

// keel wrap: what the session says of the wrapped server; and how keel introduces itself.
SessionOptions WithUpstream(SessionOptions options, const UpstreamLink* upstream,
                            ServerIdentity identity) {
  options.identity = std::move(identity);
  if (upstream != nullptr) {
    options.upstream_instructions = upstream->info().instructions;
    options.tools_follow_upstream = true;
  }
  return options;
}

}  // namespace

StdioServer::StdioServer(ServeParts parts, std::unique_ptr<TaskStoreThread> task_store)
    : parts_(std::move(parts)),
      loop_(clock_),
      task_store_(std::move(task_store)),
      // Replacement threads for slots held by tools that ignore cancellation: at most one per
      // admissible call.
      pool_(parts_.flags.workers, parts_.flags.max_inflight),
      dispatcher_(TransportCallbacks()),
      http_dispatcher_(HttpCallbacks()),
      transport_(parts_.no_stdio ? nullptr
                                 : std::make_unique<StdioTransport>(
                                       loop_, parts_.in, parts_.out, parts_.flags.max_line_bytes,
                                       parts_.flags.outbox_bytes, dispatcher_)),
      session_(
          loop_, transport_ ? static_cast<OutputSink&>(*transport_) : null_sink_,
          parts_.tools.registry, pool_,
          WithUpstream(SessionOptionsFor(parts_.flags, parts_.owner, parts_.ledger, parts_.trace),
                       parts_.upstream.get(), parts_.identity),
          task_store_.get()),
      reaper_(loop_, pool_, parts_.ledger),
      signals_({.reload_policy = [this] { ReloadPolicy(); },
                .begin_shutdown = [this](std::string_view why) { session_.BeginShutdown(why); },
                .shutdown_now = [this] { session_.ShutdownNow(); }}) {
  WireSession();
}

FunctionDispatcher::Functions StdioServer::TransportCallbacks() {
  // The session is constructed after the transport; the transport calls none of these before
  // the loop runs.
  return {.on_message =
              [this](Exchange& exchange, Message message) {
                // stdio's one exchange is its own peer (exchange.h).
                session_.HandleMessage(message, exchange.id(), exchange.peer());
              },
          .on_exchange_closed =
              [this](Exchange& exchange) {
                // Its requests are cancelled like any closed exchange's (their work stops).
                // On stdio it is the only one: nobody reads stdout any more, nothing we
                // write can arrive, so stop now.
                session_.OnExchangeClosed(exchange.id());
                peer_gone_ = true;
                spdlog::info("stdout closed by the client; exiting");
                loop_.Stop();
              },
          .on_progress_dropped = [this](Exchange&,
                                        uint64_t stream) { session_.OnProgressDropped(stream); },
          .on_input_ended = [this] { session_.BeginShutdown("stdin closed"); }};
}

FunctionDispatcher::Functions StdioServer::HttpCallbacks() {
  return {.on_message =
              [this](Exchange& exchange, Message message) {
                session_.HandleMessage(message, exchange.id(), exchange.peer(), exchange.client());
              },
          // A modern request whose client left: cancelled (CAN-5). The transport reports
          // only those (mcp_http.h invariant 6).
          .on_exchange_closed =
              [this](Exchange& exchange) { session_.OnExchangeClosed(exchange.id()); },
          .on_progress_dropped = [this](Exchange&,
                                        uint64_t stream) { session_.OnProgressDropped(stream); },
          .on_input_ended = nullptr};
}

OutputSink* StdioServer::Router::Find(ExchangeId id) {
  if (server_.transport_ && (id == StdioTransport::kExchangeId || id == kNoExchange)) {
    return server_.transport_.get();
  }
  if (server_.http_) return server_.http_->Find(id);
  return nullptr;
}

void StdioServer::WireSession() {
  // Tasks a dead keel left working are settled before any request is read (the store
  // thread runs jobs in order), then every minute with the sweep of expired tasks.
  RecoveryOptions recovery{parts_.owner, getpid(), nullptr,
                           parts_.ledger != nullptr && parts_.ledger->spans_machines()};
  session_.tasks()->StartMaintenance(OrphanedTaskRecovery(parts_.tools.registry, recovery));
  session_.set_on_stop_reading([this] {
    if (transport_) transport_->StopReading();
    if (http_) http_->StopReading();
  });
  session_.set_router(&router_);
  if (parts_.http) {
    const ToolRegistry& registry = parts_.tools.registry;
    http_ = std::make_unique<McpHttpTransport>(
        loop_, *parts_.http, http_dispatcher_,
        [&registry](const std::string& name) -> const nlohmann::json* {
          const Tool* tool = registry.Find(name);
          return tool == nullptr ? nullptr : &tool->spec().input_schema;
        },
        [this](PeerId peer) { session_.ForgetPeer(peer); });
  }
  session_.SetPolicy(parts_.policy);
  if (parts_.surface) session_.SetSurface(parts_.surface);
  surface_watch_.Follow();
  session_.set_on_finished([this] { loop_.Stop(); });
  // Invariant 5: tools fire it on workers; the Session is told on the loop.
  parts_.tools.tools_changed->Connect(
      [this] { loop_.Post([this] { session_.NotifyToolsListChanged(); }); });
  parts_.tools.prompts_changed->Connect(
      [this] { loop_.Post([this] { session_.NotifyPromptsListChanged(); }); });
  if (parts_.upstream) WireUpstream();
}

void StdioServer::WireUpstream() {
  // The upstream's threads only post; the session hears it on the loop.
  parts_.upstream->set_on_notification([this](const std::string& method, const Json& params) {
    loop_.Post([this, method, params] { OnUpstreamNotification(method, params); });
  });
  parts_.upstream->set_on_lists_changed([this] {
    loop_.Post([this] {
      session_.SetSurface(MakeForwardedSurface(parts_.upstream));
      if (parts_.upstream_tools && parts_.upstream_tools->Refresh()) {
        session_.NotifyToolsListChanged();
      }
    });
  });
}

void StdioServer::OnUpstreamNotification(const std::string& method, const Json& params) {
  if (method == "notifications/resources/updated") {
    const Json uri = params.value("uri", Json());
    if (uri.is_string()) session_.NotifyResourceUpdated(uri.get<std::string>());
  } else if (method == "notifications/resources/list_changed" ||
             method == "notifications/prompts/list_changed" ||
             method == "notifications/tools/list_changed") {
    parts_.upstream->RequestRelist();  // invariant 6 for the tools
  } else if (method == "notifications/message") {
    spdlog::info("[upstream log] {} {}: {:.2000}", params.value("level", Json()).dump(),
                 params.value("logger", Json()).dump(), params.value("data", Json()).dump());
  } else {
    spdlog::debug("upstream notification {} ignored", method);
  }
}

StdioServer::~StdioServer() {
  parts_.tools.tools_changed->Connect(nullptr);
  parts_.tools.prompts_changed->Connect(nullptr);
  if (parts_.upstream) {
    parts_.upstream->set_on_notification(nullptr);
    parts_.upstream->set_on_lists_changed(nullptr);
  }
}

void StdioServer::ReloadPolicy() {
  // A wrapped server's surface is the upstream's: the catalog is only its overlay.
  std::shared_ptr<Surface> surface;
  if (!parts_.upstream) surface = ReloadSurface(parts_.flags, parts_.ledger);
  if (surface) {
    session_.SetSurface(std::move(surface));
    surface_watch_.Follow();
  }
  PolicyHandle next = ReloadPolicyFile(parts_.flags.policy_file, *session_.policy());
  if (!next) return;
  session_.SetPolicy(next);
  // The tools keel lists are the same, but what they do (retries, timeouts, breakers) is not.
  session_.NotifyToolsListChanged();
  pool_.Submit([ledger = parts_.ledger, next] { RecordReloadedPolicy(*ledger, *next); });
}

void StdioServer::ArmFleetReconcile() {
  loop_.AddTimer(loop_.clock().Now() + kFleetReconcileInterval, [this] {
    if (!reconciling_.exchange(true)) {
      pool_.Submit([this] {
        ReconcileCommandTools(parts_.tools.command_tools, parts_.owner);
        reconciling_ = false;
      });
    }
    ArmFleetReconcile();
  });
}

int StdioServer::Run() {
  // Finished keys past --idempotency-ttl are forgotten: once now, then every 10 minutes.
  reaper_.Start();
  // Keyed command writes a dead keel left without an outcome are looked up by key (IDEM-5).
  if (!parts_.tools.command_tools.empty()) {
    pool_.Submit([this] { ReconcileCommandTools(parts_.tools.command_tools, parts_.owner); });
    if (parts_.ledger && parts_.ledger->spans_machines()) ArmFleetReconcile();
  }
  if (http_) {
    std::string error;
    if (!http_->Start(&error)) {
      spdlog::critical("--http: {}", error);
      std::fprintf(stderr, "keel: --http: %s\n", error.c_str());
      return kExitUnavailable;
    }
    const std::string& host = parts_.http->server.host;
    const bool v6 = host.find(':') != std::string::npos;
    std::fprintf(stderr, "keel: listening on http://%s%s%s:%u%s\n", v6 ? "[" : "", host.c_str(),
                 v6 ? "]" : "", static_cast<unsigned>(http_->port()), parts_.http->path.c_str());
  }
  loop_.Watch(parts_.signal_fd, POLLIN, [this](short) { signals_.Drain(parts_.signal_fd); });
  spdlog::info("keel {} serving{}{} with {} workers, {} tools", KEEL_VERSION,
               transport_ ? " on stdio" : "", http_ ? " over HTTP" : "", pool_.threads(),
               parts_.tools.registry.tools().size());
  try {
    loop_.Run();
  } catch (const std::exception& e) {
    // Only a broken invariant gets here (poll itself failed): say so and exit at once,
    // without joining workers that may be running tool code.
    spdlog::critical("internal error: {}", e.what());
    KillRunningProcessGroups();
    spdlog::default_logger()->flush();
    std::_Exit(kExitSoftware);
  }
  std::vector<Transport*> transports;
  if (transport_) transports.push_back(transport_.get());
  if (http_) transports.push_back(http_.get());
  return FinishServing({.clock = clock_,
                        .transports = std::move(transports),
                        .task_store = std::move(task_store_),
                        .pool = pool_,
                        .stats = session_.coordinator().stats(),
                        .peer_gone = peer_gone_,
                        .stop_upstream = parts_.upstream ? std::function<void()>([this] {
                          parts_.upstream->Shutdown();
                        })
                                                         : nullptr});
}

}  // namespace keel
