#include "server/app/serve.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "ledger/database.h"
#include "server/app/durable_state.h"
#include "server/app/exit_codes.h"
#include "server/app/http_setup.h"
#include "server/app/process_identity.h"
#include "server/app/process_log.h"
#include "server/app/protocol_fds.h"
#include "server/app/serve_config.h"
#include "server/app/signal_pipe.h"
#include "server/app/stdio_server.h"
#include "server/app/surface_setup.h"
#include "server/app/tool_set.h"
#include "server/app/upstream_tool_sync.h"
#include "server/app/wrap_setup.h"
#include "server/tasks/task_store_thread.h"
#include "server/trace/trace_log.h"

namespace keel {
namespace {

// The protocol streams and the signal pipe, once taken.
struct ProcessIo {
  StdioFd in;
  StdioFd out;
  int signal_fd = -1;
};

// The process log as the flags say, then the protocol fds and the signal pipe. An exit code
// after saying why one cannot be set up.
std::optional<int> SetUpProcess(const CliOptions& flags, ProcessIo* io) {
  if (const std::string error = ConfigureProcessLog(flags.log_level, flags.log_file);
      !error.empty()) {
    std::cerr << "keel: cannot open log file " << flags.log_file << ": " << error << "\n";
    return kExitCantCreate;
  }
  if (isatty(STDIN_FILENO) == 1) {
    // Started by hand: without this keel would wait in silence for JSON-RPC.
    std::cerr << "keel: reading MCP messages (JSON-RPC, one per line) from this terminal; an MCP "
                 "host normally starts keel (see the README's Host configuration). Ctrl-D ends. "
                 "keel --help lists the flags.\n";
  }
  if (!TakeProtocolFds(&io->in, &io->out) || (io->signal_fd = InstallSignalPipe()) < 0) {
    spdlog::critical("cannot set up stdio: {}", std::strerror(errno));
    return kExitSoftware;
  }
  return std::nullopt;
}

// The --trace-file log (null without one). An exit code after saying why it cannot be opened.
std::optional<int> OpenTrace(const CliOptions& flags, std::unique_ptr<TraceLog>* trace) {
  if (flags.trace_file.empty()) return std::nullopt;
  std::string trace_error;
  TraceLog::Options options;
  options.format = ParseTraceFormat(flags.trace_format).value_or(TraceFormat::kJsonl);
  options.version = KEEL_VERSION;
  *trace = TraceLog::Open(
      flags.trace_file,
      {{"service.name", "keel"}, {"service.version", KEEL_VERSION}, {"process.pid", getpid()}},
      &trace_error, options);
  if (*trace) return std::nullopt;
  std::cerr << "keel: cannot open --trace-file " << flags.trace_file << ": " << trace_error << "\n";
  return kExitCantCreate;
}

}  // namespace

int Serve(const CliOptions& flags) {
  // The policy and the catalog are validated completely before anything else starts (BUD-1).
  ServeConfig config = LoadServeConfig(flags, std::cerr);
  if (config.exit_code) return *config.exit_code;
  HttpSetup http = PrepareHttp(flags, std::cerr);
  if (http.exit_code) return *http.exit_code;
  ProcessIo io;
  if (const std::optional<int> exit_code = SetUpProcess(flags, &io)) return *exit_code;
  // The durable state is opened before serving: a database keel cannot use is a clear
  // start-up error, never a failing call.
  const std::string owner = ProcessOwner();
  DurableState durable = OpenDurableState(flags, *config.policy, owner, std::cerr);
  if (durable.exit_code) return *durable.exit_code;
  ToolSet tools;
  std::shared_ptr<Surface> surface;
  WrapParts wrap;
  std::shared_ptr<UpstreamToolSync> upstream_tools;
  if (flags.wrap) {
    // keel wrap: the upstream's tools and surface; the catalog (when a file is named) is
    // the overlay that gives its tools their policies.
    wrap = StartWrap(flags, std::cerr);
    if (wrap.exit_code) return *wrap.exit_code;
    const Catalog* overlay = flags.catalog_file.empty() ? nullptr : &*config.catalog;
    if (!AddUpstreamTools(wrap.link, overlay, durable.ledger, &tools, std::cerr)) {
      wrap.link->Shutdown();
      return kExitConfig;
    }
    surface = MakeForwardedSurface(wrap.link);
    upstream_tools =
        std::make_shared<UpstreamToolSync>(tools.registry, wrap.link, overlay, durable.ledger);
  } else {
    tools = BuildToolSet(flags, *config.catalog, durable.ledger, std::cerr);
    if (tools.exit_code) return *tools.exit_code;
    surface = BuildSurface(flags, *config.catalog, durable.ledger);
  }
  std::unique_ptr<TraceLog> trace;
  if (const std::optional<int> exit_code = OpenTrace(flags, &trace)) return *exit_code;
  std::string db_error;
  std::unique_ptr<TaskStoreThread> task_store = TaskStoreThread::Start(durable.db_path, &db_error);
  if (!task_store) {
    std::cerr << "keel: cannot open " << Database::Describe(durable.db_path)
              << " for tasks: " << db_error << "\n";
    return kExitCantCreate;
  }
  StdioServer server({.flags = flags,
                      .policy = config.policy,
                      .ledger = durable.ledger,
                      .owner = owner,
                      .tools = tools,
                      .trace = trace.get(),
                      .in = io.in,
                      .out = io.out,
                      .signal_fd = io.signal_fd,
                      .http = std::move(http.options),
                      .no_stdio = flags.no_stdio,
                      .surface = std::move(surface),
                      .upstream = wrap.link,
                      .upstream_tools = std::move(upstream_tools),
                      .identity = config.catalog->server},
                     std::move(task_store));
  return server.Run();
}

}  // namespace keel
