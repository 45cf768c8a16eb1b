#include "server/app/cli_options.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "ledger/database.h"
#include "protocol/text_file.h"
#include "server/app/build_commit.h"
#include "server/app/config_location.h"
#include "server/app/exit_codes.h"
#include "server/app/usage_error.h"

namespace keel {
namespace {

// Flags for tests, drills and the official conformance suite, listed apart in --help.
constexpr const char* kTestGroup = "Testing keel itself (not for production)";

constexpr const char* kFooter = R"(
Examples:
  keel                              the demo tools on stdio (MCP hosts start keel like this)
  keel --catalog tools.json         your scripts and commands as tools (docs/catalog.md)
  keel catalog check tools.json --path /usr/bin:/bin    check it against a host's PATH
  keel wrap -- npx -y @modelcontextprotocol/server-memory    every guarantee in front of it
  keel --http 127.0.0.1:8080 --http-token-file token    Streamable HTTP for many clients
  keel call --catalog tools.json date '{}'    try one tool, print its answer
  keel trace summary trace.jsonl    what happened to each tool's calls (--trace-file)
  keel trace report trace.jsonl -o report.html    the same as a picture: open it in a browser
Settings come from, highest first: the command line, KEEL_* environment variables,
the --config file (TOML, keys are the long flag names: workers = 4, log-level = "info";
default ~/.config/keel/config.toml, or under $XDG_CONFIG_HOME, when it exists),
then the defaults shown. Durations are integers in milliseconds.

stdout carries MCP JSON-RPC only; logs go to stderr or --log-file.
On stdin EOF (or SIGTERM/SIGINT) keel stops reading, lets in-flight calls finish within
--shutdown-grace, ends the rest with an error, and exits 0.
Durable tasks (tools/call with params.task under MCP 2025-11-25; under 2026-07-28 the tasks
extension, where keel decides: taskSupport required, or --task-after) live in the --db file: they
outlive the connection; a task still running when keel exits is recovered by the next
keel on that file (completed from the tool's ledger when it can tell, else failed).
Kill switch for writes: `keel admin block-writes on|off|status [--db PATH]` from a shell
(a running keel sees it on its next write call), or --block-writes at start-up.
`keel wrap [flags] -- COMMAND [ARGS...]` serves the stdio MCP server COMMAND starts, with
every guarantee above in front of its tools (effect classes from --catalog, else from the
tools' annotations); e.g. keel wrap -- npx -y @modelcontextprotocol/server-memory
`keel wrap [flags] --upstream-url URL` does the same for a Streamable HTTP MCP server at URL.
Exit codes: 0 ok, 64 bad usage, 66 a named file missing or unreadable, 69 the wrapped server cannot start
(keel wrap) or --http cannot listen, 70 internal error, 73 cannot create a file,
78 bad configuration.)";

// Applies the config file to options that neither the command line nor the environment set.
int ApplyConfigFile(CLI::App& app, const std::string& path) {
  std::string why;
  const std::optional<std::string> text = ReadTextFile(path, &why);
  if (!text) {
    std::cerr << "keel: cannot read config file " << path << ": " << why << "\n";
    return kExitNoInput;
  }
  std::vector<CLI::ConfigItem> items;
  try {
    std::istringstream in(*text);
    items = CLI::ConfigTOML().from_config(in);
  } catch (const CLI::Error& e) {
    std::cerr << "keel: config file " << path << ": " << e.what() << "\n";
    return kExitConfig;
  }
  for (const CLI::ConfigItem& item : items) {
    if (!item.parents.empty()) {
      // CLI11 reports a [section] header as an item named "++" under that section.
      std::cerr << "keel: config file " << path << ": unknown section [" << item.parents.front()
                << "]; settings go at the top level (see keel --help)\n";
      return kExitConfig;
    }
    std::string name = item.name;
    for (char& c : name) c = c == '_' ? '-' : c;
    CLI::Option* option = app.get_option_no_throw("--" + name);
    if (option == nullptr || name == "config" || name == "help" || name == "version") {
      std::cerr << "keel: config file " << path << ": unknown setting '" << item.fullname()
                << "' (see keel --help)\n";
      return kExitConfig;
    }
    const std::string& env = option->get_envname();
    if (option->count() > 0 || (!env.empty() && std::getenv(env.c_str()) != nullptr)) continue;
    try {
      option->add_result(item.inputs);
      option->run_callback();
    } catch (const CLI::Error& e) {
      std::cerr << "keel: config file " << path << ": " << item.name << ": " << e.what() << "\n";
      return kExitConfig;
    }
  }
  return 0;
}

// The options that size and bound serving: workers, admission, input lines, shutdown, the
// two call clocks (TMO-1) and the outbox. Returns the two clocks' options: which of them the
// user set decides how a conflict between them resolves (ReconcileTimeouts).
struct TimeoutOptions {
  CLI::Option* idle = nullptr;
  CLI::Option* max = nullptr;
};
TimeoutOptions AddLimitOptions(CLI::App& app, CliOptions& o) {
  app.add_option("--workers", o.workers,
                 "Worker threads that run tool calls (0 = hardware threads, at least 2; 64 "
                 "for keel wrap, where each forwarded call waits on one)")
      ->envname("KEEL_WORKERS")
      ->check(CLI::Range(0, 1024));
  app.add_option("--max-inflight", o.max_inflight,
                 "Most tool calls queued or running at once; beyond it a call gets a "
                 "'server busy' error result")
      ->envname("KEEL_MAX_INFLIGHT")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-inflight-per-client", o.max_inflight_per_client,
                 "Of --max-inflight, at most this many calls from one client (a stdio host, a "
                 "legacy HTTP session, or one address's modern HTTP requests), so one client "
                 "cannot starve the rest; past it that client's calls get server_busy (0 = no "
                 "share)")
      ->envname("KEEL_MAX_INFLIGHT_PER_CLIENT");
  app.add_option("--max-line-bytes", o.max_line_bytes,
                 "Longest input line accepted; a longer one gets one error and is skipped "
                 "without being buffered")
      ->envname("KEEL_MAX_LINE_BYTES")
      ->check(CLI::Range(1024, 1 << 30));
  app.add_option("--shutdown-grace", o.shutdown_grace_ms,
                 "Milliseconds in-flight calls get to finish after stdin EOF or SIGTERM "
                 "(hosts send SIGTERM 2000 ms after closing stdin)")
      ->envname("KEEL_SHUTDOWN_GRACE")
      ->check(CLI::Range(0, 600000));
  TimeoutOptions timeouts;
  timeouts.idle =
      app.add_option("--idle-timeout", o.idle_timeout_ms,
                     "Milliseconds a tool call may go without reporting progress before keel "
                     "ends it with a timeout result (0 = no idle limit). At most --max-timeout "
                     "(left unset, it follows a lower --max-timeout down; set above the default "
                     "--max-timeout, it takes that up). A default: a tool's catalog timeouts or "
                     "a --policy file replace it")
          ->envname("KEEL_IDLE_TIMEOUT")
          ->check(CLI::Range(0LL, 86400000LL));
  timeouts.max =
      app.add_option("--max-timeout", o.max_timeout_ms,
                     "Milliseconds a tool call may take in all, queued time included, whatever "
                     "its progress; then keel ends it with a timeout result (below the 60000 "
                     "ms the official SDK client waits by default). A default: a tool's catalog "
                     "timeouts or a --policy file replace it")
          ->envname("KEEL_MAX_TIMEOUT")
          ->check(CLI::Range(1LL, 86400000LL));
  app.add_option("--outbox-bytes", o.outbox_bytes,
                 "Unsent output keel holds for a slow client: beyond it the oldest progress "
                 "is dropped, and stdin is not read until the client catches up (responses "
                 "are never dropped)")
      ->envname("KEEL_OUTBOX_BYTES")
      ->check(CLI::Range(size_t{64} << 10, size_t{1} << 30));
  return timeouts;
}

// The durable state: the --db file, the idempotency ledger's memory, durable tasks, and the
// list page size (tools and tasks).
void AddStateOptions(CLI::App& app, CliOptions& o) {
  // An empty --db (or config `db = ""`) is refused, never read as "the default database":
  // the user named a file and it is not that one. An empty KEEL_DB counts as unset (CLI11
  // skips empty variables), as an empty XDG_DATA_HOME does for the default path.
  app.add_option("--db", o.db_path,
                 "Where the idempotency ledger, durable tasks and the demo backends live: a "
                 "SQLite file (default: $XDG_DATA_HOME/keel/keel.db or "
                 "~/.local/share/keel/keel.db), or postgresql://... for one PostgreSQL that "
                 "several keels share")
      ->envname("KEEL_DB")
      ->check(CLI::Validator(
          [](std::string& path) {
            return path.empty() ? std::string("must not be empty (omit --db for the default)")
                                : std::string();
          },
          "PATH"));
  app.add_option("--db-connections", o.db_connections,
                 "Most connections to --db that tool calls hold at once (a call waits up to "
                 "5 s for one, then gets ledger_busy); keel opens them as load needs and adds "
                 "three of its own (group commit, tasks, the PostgreSQL heartbeat). 0 = "
                 "--workers + 2, at most 16 on PostgreSQL: size it so that every keel's "
                 "connections fit the server's max_connections")
      ->envname("KEEL_DB_CONNECTIONS")
      ->check(CLI::Range(0, 1024));
  app.add_option("--idempotency-ttl", o.idempotency_ttl_ms,
                 "Milliseconds a finished keyed mutation is remembered; a retry within it "
                 "replays the result, after it the key is forgotten")
      ->envname("KEEL_IDEMPOTENCY_TTL")
      ->check(CLI::Range(1000LL, 365LL * 24 * 3600 * 1000));
  app.add_option("--max-tasks", o.max_tasks,
                 "Most durable tasks (tools/call with params.task) live at once in this "
                 "process; beyond it task creation gets a 'too many tasks' error")
      ->envname("KEEL_MAX_TASKS")
      ->check(CLI::Range(1, 100000));
  app.add_option("--task-max-ttl", o.task_max_ttl_ms,
                 "Longest ttl a task gets, in milliseconds from its creation (a task asking "
                 "for none gets this one); its record and result are deleted after it and "
                 "its work may not run longer (0 = unlimited: ttl null)")
      ->envname("KEEL_TASK_MAX_TTL")
      ->check(CLI::Range(0LL, 365LL * 24 * 3600 * 1000));
  app.add_option("--task-poll-interval", o.task_poll_interval_ms,
                 "pollInterval keel suggests to clients polling a task, in milliseconds")
      ->envname("KEEL_TASK_POLL_INTERVAL")
      ->check(CLI::Range(10LL, 3600000LL));
  app.add_option("--task-after", o.task_after_ms,
                 "MCP 2026-07-28 with the tasks extension declared: a call still running after "
                 "this many milliseconds becomes a durable task (the client gets the task and "
                 "polls it; the work goes on), unless its tool's taskSupport is 'forbidden' "
                 "(0 = never)")
      ->envname("KEEL_TASK_AFTER")
      ->check(CLI::Range(0LL, 3600000LL));
  app.add_option("--page-size", o.page_size, "Tools (and tasks) per tools/list (tasks/list) page")
      ->envname("KEEL_PAGE_SIZE")
      ->check(CLI::Range(1, 10000));
  app.add_option("--cache-ttl", o.cache_ttl_ms,
                 "MCP 2026-07-28 clients: ttlMs on server/discover and tools/list, in "
                 "milliseconds (how long a client may reuse them; the list changes only "
                 "when keel restarts with another catalog)")
      ->envname("KEEL_CACHE_TTL")
      ->check(CLI::Range(0LL, 7LL * 24 * 3600 * 1000));
  app.add_option("--cache-scope", o.cache_scope,
                 "MCP 2026-07-28 clients: cacheScope of those results: public (nothing in "
                 "them depends on who asks) or private")
      ->envname("KEEL_CACHE_SCOPE")
      ->check(CLI::IsMember({"public", "private"}));
}

// The process log and the MCP log messages sent to the client.
void AddLogOptions(CLI::App& app, CliOptions& o) {
  app.add_option("--log-level", o.log_level, "Process log level (stderr or --log-file)")
      ->envname("KEEL_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--log-file", o.log_file, "Append process logs to this file instead of stderr")
      ->envname("KEEL_LOG_FILE");
  app.add_option("--client-log-level", o.client_log_level,
                 "Send MCP log messages (notifications/message) at or above this level before "
                 "the client calls logging/setLevel, which then replaces it (default: none "
                 "until the client asks). For clients whose setLevel never reaches keel, such "
                 "as mcp-proxy, which answers it itself")
      ->envname("KEEL_CLIENT_LOG_LEVEL")
      ->check(CLI::IsMember(
          {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}));
}

// What keel serves and how it behaves: the policy file, the catalog, shadow mode and the
// simulated backend's faults.
void AddToolOptions(CLI::App& app, CliOptions& o) {
  app.add_option("--policy", o.policy_file,
                 "Resilience policy file (JSON, see docs/policy.md): timeouts, retries, retry "
                 "budget, breaker and shadow settings per tool. Validated completely at "
                 "start-up (exit 78 listing every problem); SIGHUP reloads it, keeping the "
                 "running version if the new one is invalid")
      ->envname("KEEL_POLICY");
  app.add_option("--catalog", o.catalog_file,
                 "Tool catalog (JSON, see docs/catalog.md): the tools keel serves with their "
                 "effect class, backend, timeouts, retry policy, idempotency key components, "
                 "approval and taskSupport. Each entry names one of keel's implementations, or "
                 "has run.command: a program keel runs for each call (an argv, never a shell; "
                 "relative paths start from the catalog's directory; see examples/deploy-api). "
                 "It may also serve resources, resource templates and prompts "
                 "(examples/runbooks). "
                 "Validated completely at start-up (exit 78 listing every problem). Default: "
                 "the built-in demo catalog (echo, charge_account, reserve_inventory, "
                 "ledger_lookup, get_deployment_job, restart_deployment_job, "
                 "lookup_deployment_operation)")
      ->envname("KEEL_CATALOG");
  app.add_flag("--shadow", o.shadow,
               "Shadow mode for every tool (OPS-1): compute retry and circuit-breaker "
               "decisions and record them as 'retry.would_have' and 'breaker.would_have' "
               "trace events, but apply none (each call makes one attempt and is never "
               "rejected). The policy's per-tool `shadow` does the same for one tool")
      ->envname("KEEL_SHADOW");
  app.add_option("--fault", o.faults,
                 "Inject a fault into the simulated deployment backend (tests, drills, demos; "
                 "repeatable): TOOL:latency=MS, TOOL:slow=MS, TOOL:fail_503=N, "
                 "TOOL:sustained_503=MS, TOOL:lose_response[=N], TOOL:start_after=N; TOOL "
                 "is get_deployment_job, restart_deployment_job or lookup_deployment_operation")
      ->envname("KEEL_FAULTS")
      ->delimiter(',')
      ->group(kTestGroup);
}

// The per-attempt trace (OBS-1) and the kill switch for writes at start-up (OPS-2).
void AddTraceAndSafetyOptions(CLI::App& app, CliOptions& o) {
  app.add_option("--trace-file", o.trace_file,
                 "Append one JSON line per event (call start/end, attempt start/end, retry "
                 "scheduled/suppressed, breaker rejects and state changes, timeouts, replays, "
                 "cancels) to this file (OpenTelemetry LogRecord shape; W3C traceparent from "
                 "_meta is honoured). Arguments and results are left out")
      ->envname("KEEL_TRACE_FILE");
  app.add_option("--trace-format", o.trace_format,
                 "How --trace-file is written: jsonl (the records above, one per line) or otlp "
                 "(OTLP/JSON as the OpenTelemetry collector's otlpjsonfile receiver reads it: "
                 "one SERVER span per MCP request, a child span per attempt, retries, breaker "
                 "decisions and timeouts as span events; the mcp.server.operation.duration "
                 "histogram goes to <trace-file>.metrics.jsonl)")
      ->envname("KEEL_TRACE_FORMAT")
      ->check(CLI::IsMember({"jsonl", "otlp"}))
      ->capture_default_str();
  app.add_flag("--trace-arguments", o.trace_arguments,
               "Also put each call's arguments in the trace (they may be sensitive)")
      ->envname("KEEL_TRACE_ARGUMENTS");
  app.add_flag("--block-writes", o.block_writes,
               "Turn the kill switch for writes on at start-up: every write tool call gets a "
               "'kill_switch' error result and nothing runs; reads keep working. It is "
               "stored in --db and stays on until `keel admin block-writes off`")
      ->envname("KEEL_BLOCK_WRITES");
}

// The tools only tests and the official conformance suite call.

void AddTestOptions(CLI::App& app, CliOptions& o) {
  app.add_flag("--test-tools", o.test_tools,
               "Also serve the test tools sleep, task_sleep, progress, latch_wait, "
               "latch_release, fail, flaky_read, flaky_write, flaky_idempotent, and ask_name, "
               "ask_two_rounds, ask_everything, which ask the client for input (a --catalog "
               "may describe them too)")
      ->envname("KEEL_TEST_TOOLS")
      ->group(kTestGroup);
  app.add_flag("--conformance-fixtures", o.conformance_fixtures,
               "Also serve the tools the official MCP conformance suite calls: "
               "test_simple_text, test_image_content, test_audio_content, "
               "test_embedded_resource, test_multiple_content_types, test_tool_with_logging, "
               "test_error_handling, test_tool_with_progress, json_schema_2020_12_tool "
               "(scripts/conformance_suite)")
      ->envname("KEEL_CONFORMANCE_FIXTURES")
      ->group(kTestGroup);
}

// Streamable HTTP: keel as a network service (server/transport/http/mcp_http.h).
void AddHttpOptions(CLI::App& app, CliOptions& o) {
  app.add_option("--http", o.http,
                 "Also serve MCP over Streamable HTTP on HOST:PORT (or PORT, on 127.0.0.1; "
                 "[::1]:PORT for IPv6). Modern (2026-07-28) clients POST each request; legacy "
                 "(2025-11-25) clients get a session from initialize. Closing a response "
                 "stream cancels a modern request")
      ->envname("KEEL_HTTP");
  app.add_option("--http-path", o.http_path, "The MCP endpoint's path")->envname("KEEL_HTTP_PATH");
  app.add_flag("--no-stdio", o.no_stdio,
               "With --http: do not serve stdin/stdout (a pure network service that runs "
               "until SIGTERM or SIGINT)")
      ->envname("KEEL_NO_STDIO");
  app.add_option("--sse-keepalive", o.sse_keepalive_ms,
                 "A comment on each open SSE response stream this often, in ms (0 = none)")
      ->envname("KEEL_SSE_KEEPALIVE")
      ->check(CLI::Range(0LL, 3600000LL));
  app.add_option("--http-allow-origin", o.http_allow_origins,
                 "A browser Origin allowed besides loopback ones (scheme://host[:port]; "
                 "repeatable). Requests with any other Origin get 403")
      ->envname("KEEL_HTTP_ALLOW_ORIGIN");
  app.add_option("--http-token-file", o.http_token_file,
                 "File whose first line is the bearer token every HTTP request must carry "
                 "(Authorization: Bearer TOKEN; 401 otherwise). Required to listen on a "
                 "non-loopback address, unless --http-insecure-no-auth")
      ->envname("KEEL_HTTP_TOKEN_FILE");
  app.add_flag("--http-insecure-no-auth", o.http_insecure_no_auth,
               "Allow a non-loopback --http address without a token (anyone who reaches "
               "the port can call every tool)")
      ->envname("KEEL_HTTP_INSECURE_NO_AUTH");
  app.add_option("--http-max-connections", o.http_max_connections,
                 "Open HTTP connections at most; past it a request gets 503")
      ->envname("KEEL_HTTP_MAX_CONNECTIONS")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  app.add_option("--http-max-sessions", o.http_max_sessions,
                 "Legacy (2025-11-25) HTTP sessions kept; past it the least recently used "
                 "ends (its next request gets 404)")
      ->envname("KEEL_HTTP_MAX_SESSIONS")
      ->check(CLI::Range(size_t{1}, size_t{1000000}));
  app.add_option("--http-idle-timeout", o.http_idle_timeout_ms,
                 "An HTTP connection that sends or reads nothing for this long is closed (slow "
                 "headers or bodies, a client that stopped reading its stream: that request "
                 "is cancelled), in ms; not while keel computes its answer")
      ->envname("KEEL_HTTP_IDLE_TIMEOUT")
      ->check(CLI::Range(1000LL, 3600000LL));
}

// Every option of `keel` that serves, in --help order (--config first).
// `keel wrap --upstream-url URL`: a Streamable HTTP upstream instead of a command.
void AddUpstreamUrlOptions(CLI::App& app, CliOptions& o, const char* group) {
  app.add_option("--upstream-url", o.upstream_url,
                 "keel wrap: the MCP endpoint of a Streamable HTTP upstream (http:// or https://; "
                 "2025-11-25 with sessions or 2026-07-28), instead of -- COMMAND")
      ->envname("KEEL_UPSTREAM_URL")
      ->check(CLI::Validator(
          [](std::string& url) -> std::string {
            if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) return "";
            return "the upstream URL must start with http:// or https://";
          },
          "URL"))
      ->group(group);
  app.add_option("--upstream-header", o.upstream_headers,
                 "keel wrap --upstream-url: an HTTP header (\"Name: value\", e.g. an "
                 "Authorization) sent with every request to the upstream; repeatable")
      ->envname("KEEL_UPSTREAM_HEADER")
      ->check(CLI::Validator(
          [](std::string& header) -> std::string {
            const size_t colon = header.find(':');
            if (colon == 0 || colon == std::string::npos) return "a header reads \"Name: value\"";
            if (header.find_first_of("\r\n") != std::string::npos) return "one line only";
            return "";
          },
          "HEADER"))
      ->group(group);
}

// `keel wrap`'s own options (the command itself comes after "--": SplitWrap).
void AddWrapOptions(CLI::App& app, CliOptions& o) {
  const char* group = "keel wrap (serving an upstream MCP server)";
  app.add_option("--upstream-env-allow", o.upstream_env_allow,
                 "keel wrap: pass only these variables of keel's environment to the upstream "
                 "(PATH and HOME always); default: the whole environment")
      ->envname("KEEL_UPSTREAM_ENV_ALLOW")
      ->group(group);
  app.add_option("--upstream-protocol", o.upstream_protocol,
                 "keel wrap: auto (probe server/discover, else initialize), legacy "
                 "(2025-11-25 initialize) or modern (2026-07-28)")
      ->envname("KEEL_UPSTREAM_PROTOCOL")
      ->check(CLI::IsMember({"auto", "legacy", "modern"}))
      ->group(group);
  app.add_option("--upstream-start-timeout", o.upstream_start_timeout_ms,
                 "keel wrap: ms the upstream has to start and answer the handshake and lists")
      ->envname("KEEL_UPSTREAM_START_TIMEOUT")
      ->check(CLI::Range(1LL, 3600000LL))
      ->group(group);
  app.add_option("--upstream-restarts", o.upstream_restarts,
                 "keel wrap: restarts of a crashed upstream allowed within "
                 "--upstream-restart-window (backoff 250 ms doubling to 8 s, jittered); then calls "
                 "answer upstream_unavailable")
      ->envname("KEEL_UPSTREAM_RESTARTS")
      ->check(CLI::Range(0, 1000))
      ->group(group);
  app.add_option("--upstream-restart-window", o.upstream_restart_window_ms,
                 "keel wrap: the window (ms) --upstream-restarts counts in")
      ->envname("KEEL_UPSTREAM_RESTART_WINDOW")
      ->check(CLI::Range(1LL, 86400000LL))
      ->group(group);
  AddUpstreamUrlOptions(app, o, group);
}

TimeoutOptions AddServeOptions(CLI::App& app, CliOptions& o) {
  app.add_option("--config", o.config_file,
                 "TOML file with the same settings as the flags (default: "
                 "$XDG_CONFIG_HOME/keel/config.toml or ~/.config/keel/config.toml when it "
                 "exists; --config '' reads none)")
      ->envname("KEEL_CONFIG");
  const TimeoutOptions timeouts = AddLimitOptions(app, o);
  AddStateOptions(app, o);
  AddLogOptions(app, o);
  AddToolOptions(app, o);
  AddTraceAndSafetyOptions(app, o);
  AddHttpOptions(app, o);
  AddWrapOptions(app, o);
  AddTestOptions(app, o);
  return timeouts;
}

// `keel catalog check FILE [--path PATH]`.
void AddCatalogCommand(CLI::App& app, CliOptions& o) {
  CLI::App* catalog =
      app.add_subcommand("catalog", "Check a tool catalog file (keel does not serve)");
  catalog->fallthrough();
  CLI::App* check = catalog->add_subcommand(
      "check",
      "Validate a catalog as keel does at start-up (fields, schemas, commands found and "
      "executable, every tool bound; with --policy, the policy too); exit 0, 66 (unreadable) "
      "or 78 listing every problem");
  check->fallthrough();
  check->add_option("file", o.catalog_check_file, "The catalog file")->required();
  check->add_option("--path", o.catalog_check_path,
                    "Look bare program names up in this PATH (the one the host starts keel "
                    "with, e.g. /usr/bin:/bin) instead of this shell's");
  catalog->require_subcommand(1);
}

// `keel call [serve flags] TOOL ['JSON']` (call_command.h).
void AddCallCommand(CLI::App& app, CliOptions& o) {
  CLI::App* call = app.add_subcommand(
      "call",
      "Run one tool through the whole pipeline (the catalog, policy, ledger and timeouts the "
      "other flags give) and print its answer; exit 0, or 1 when the tool failed");
  call->fallthrough();  // --catalog and the other serve flags may follow the subcommand
  call->add_option("tool", o.call_tool, "The tool's name")->required();
  call->add_option("arguments", o.call_arguments, "Its arguments: one JSON object");
  call->add_flag("--json", o.call_json, "Print the whole result as one JSON line");
  call->callback([&o] { o.call = true; });
}

// `keel policy show [--previous]` and `keel policy check FILE`.
void AddPolicyCommand(CLI::App& app, CliOptions& o) {
  CLI::App* policy =
      app.add_subcommand("policy", "Show or check resilience policies (keel does not serve)");
  policy->fallthrough();
  CLI::App* show =
      policy->add_subcommand("show", "Print the policy the keel on --db runs (or ran before it)");
  show->fallthrough();
  show->add_flag("--previous", o.policy_previous, "The version the current one replaced");
  show->callback([&o] { o.policy_command = "show"; });
  CLI::App* check =
      policy->add_subcommand("check", "Validate a policy file; exit 78 listing every problem");
  check->fallthrough();
  check->add_option("file", o.policy_check_file, "The policy file")->required();
  check->callback([&o] { o.policy_command = "check"; });
  policy->require_subcommand(1);
}

// `keel trace summary FILE` (OBS-2), `keel trace report FILE [-o OUT]` (ADO-4).
void AddTraceCommand(CLI::App& app, CliOptions& o) {
  CLI::App* trace_cmd = app.add_subcommand("trace", "Read a --trace-file (keel does not serve)");
  CLI::App* summary = trace_cmd->add_subcommand(
      "summary",
      "Per tool, backend and outcome: calls, intents, retries, timeouts, breaker "
      "rejects, p50/p95 duration, backend operations, calls per intent");
  summary->add_flag("--json", o.trace_summary_json,
                    "Print the same figures as one JSON object (trace_summary.h)");
  summary->add_option("file", o.trace_summary_file, "The trace file")
      ->required()
      ->check(CLI::ExistingFile);
  // ADO-4. No ExistingFile check: an unreadable FILE exits 66 (operator_commands.cc), not 64.
  CLI::App* report = trace_cmd->add_subcommand(
      "report",
      "Write the trace as one self-contained HTML page (nothing fetched): a timeline of calls "
      "with attempts, backoffs, timeouts by layer, cancels and replays; breaker states per "
      "backend; latency per tool; retries per intent. Open it in any browser");
  report->add_option("file", o.trace_report_file, "The trace file")->required();
  report->add_option("-o,--output", o.trace_report_output,
                     "Where to write the page (default: FILE.html; - for stdout)");
  trace_cmd->require_subcommand(1);
}

// `keel admin block-writes on|off|status` (OPS-2), `keel admin instances` (DIST-2).
void AddAdminCommand(CLI::App& app, CliOptions& o) {
  CLI::App* admin =
      app.add_subcommand("admin", "Operator commands on the --db file (keel does not serve)");
  admin->fallthrough();  // --db and the other options may follow the subcommand
  CLI::App* block = admin->add_subcommand(
      "block-writes",
      "Turn the kill switch for writes on or off (a running keel sees it on its next write "
      "call), or show it");
  block->fallthrough();
  block->add_option("state", o.admin_block_writes, "on, off or status")
      ->required()
      ->check(CLI::IsMember({"on", "off", "status"}));
  CLI::App* instances = admin->add_subcommand(
      "instances",
      "List the keels serving from a PostgreSQL --db, each live or gone (silent for more than "
      "15 s by the server's clock)");
  instances->fallthrough();
  instances->callback([&o] { o.admin_instances = true; });
  admin->require_subcommand(1);
}

// Parses argv with CLI11. An exit code when keel must stop (help, version: 0 after printing;
// a usage error: 64 after saying why).
std::optional<int> ParseArgv(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << UsageErrorText(app, e, argc, argv);
    return kExitUsage;
  }
  return std::nullopt;
}

// idle <= max (TMO-1). Only two values the user set (flag, KEEL_* or config file: each
// counts) conflict; a default follows the value the user did set. 64 after saying why.
std::optional<int> ReconcileTimeouts(const TimeoutOptions& timeouts, CliOptions& o) {
  if (o.idle_timeout_ms <= o.max_timeout_ms) return std::nullopt;
  if (timeouts.idle->count() == 0) {
    o.idle_timeout_ms = o.max_timeout_ms;
  } else if (timeouts.max->count() == 0) {
    o.max_timeout_ms = o.idle_timeout_ms;
  } else {
    std::cerr << "keel: --idle-timeout (" << o.idle_timeout_ms
              << " ms) must not exceed --max-timeout (" << o.max_timeout_ms << " ms)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

// `keel wrap` serves exactly one upstream: a command after "--", or --upstream-url.
std::optional<int> CheckWrapUpstream(const CliOptions& o) {
  if (!o.wrap) return std::nullopt;
  if (o.upstream_command.empty() && o.upstream_url.empty()) {
    std::cerr << "keel wrap: no upstream; usage: keel wrap [keel flags] -- COMMAND [ARGS...]\n"
                 "  or: keel wrap [keel flags] --upstream-url URL\n"
                 "  e.g. keel wrap -- npx -y @modelcontextprotocol/server-memory\n";
    return kExitUsage;
  }
  if (!o.upstream_command.empty() && !o.upstream_url.empty()) {
    std::cerr << "keel wrap: give either -- COMMAND or --upstream-url, not both (keel wraps one "
                 "upstream server)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

CliParse ParseCommandLine(int argc, const char* const* argv) {
  CliParse parse;
  CliOptions& o = parse.options;
  // `keel wrap [flags] -- COMMAND [ARGS...]`: "wrap" and everything from "--" on are taken
  // out here; the flags in between are keel's usual ones.
  std::vector<const char*> args(argv, argv + argc);
  if (args.size() > 1 && std::string_view(args[1]) == "wrap") {
    o.wrap = true;
    args.erase(args.begin() + 1);
    const auto dashes = std::find_if(args.begin() + 1, args.end(),
                                     [](const char* arg) { return std::string_view(arg) == "--"; });
    if (dashes != args.end()) {
      o.upstream_command.assign(dashes + 1, args.end());
      args.erase(dashes, args.end());
    }
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
  CLI::App app(
      "keel: an MCP server with reliable cancellation, timeouts and exactly-once "
      "mutations.\nAn MCP host launches it as a subprocess and speaks JSON-RPC on its "
      "stdin/stdout.\n\n"
      "  keel --catalog tools.json                 your commands as tools, on stdio\n"
      "  keel call --catalog tools.json TOOL '{}'  try one tool, print its answer\n"
      "  keel wrap -- npx -y @modelcontextprotocol/server-memory   guard an existing server\n"
      "\nMore examples at the end. Docs: man keel, /usr/share/doc/keel/README.md (docs/ in "
      "the source: catalog.md, policy.md, wrap.md, errors.md).",
      "keel");
  app.footer(kFooter);
  app.set_version_flag("-V,--version", KeelVersionText());
  app.option_defaults()->always_capture_default();
  const TimeoutOptions timeouts = AddServeOptions(app, o);
  AddPolicyCommand(app, o);
  AddCatalogCommand(app, o);
  AddCallCommand(app, o);
  AddTraceCommand(app, o);
  AddAdminCommand(app, o);

  parse.exit_code = ParseArgv(app, argc, argv);
  if (parse.exit_code) return parse;
  if (app.get_option("--config")->count() == 0 && std::getenv("KEEL_CONFIG") == nullptr) {
    o.config_file = ExistingDefaultConfig();
  }
  if (!o.config_file.empty()) {
    if (const int code = ApplyConfigFile(app, o.config_file); code != 0) parse.exit_code = code;
  }
  if (!parse.exit_code) {
    parse.exit_code = ReconcileTimeouts(timeouts, o);
    if (parse.exit_code) return parse;
    parse.exit_code = CheckWrapUpstream(o);
    if (parse.exit_code) return parse;
  }
  // keel wrap: a forwarded call waits on its worker for the upstream's answer, so calls in
  // flight need workers, not cores.
  if (o.workers == 0) o.workers = o.wrap ? 64 : std::max(2u, std::thread::hardware_concurrency());
  if (o.db_connections == 0) {
    o.db_connections = o.workers + 2;
    if (Database::IsPostgresUrl(o.db_path)) {
      o.db_connections = std::min<size_t>(o.db_connections, kDefaultPostgresConnections);
    }
  }
  return parse;
}

std::string DefaultDatabasePath(std::string* error) {
  std::string base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && xdg[0] == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    base = std::string(home) + "/.local/share";
  } else {
    *error = "no absolute $XDG_DATA_HOME or $HOME for the default database; pass --db PATH";
    return std::string();
  }
  const std::string dir = base + "/keel";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create " + dir + ": " + ec.message() + "; pass --db PATH";
    return std::string();
  }
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  return dir + "/keel.db";
}

}  // namespace keel
