// Command-line, environment and config-file settings for keel, parsed with CLI11.
//
// Precedence (documented in --help and the README): command line > KEEL_* environment
// variables > --config FILE (TOML) > built-in defaults. CLI11 2.1.2 would put the config
// file above the environment, so keel reads the file itself after CLI11 has applied the
// command line and the environment, and fills only options that neither set.
//
// One CLI11 app holds the options of `keel` that serves and one subcommand per operator
// command (`policy`, `catalog`, `trace`, `admin`; operator_commands.h runs them), each added by its
// own function in cli_options.cc.
//
// Exit codes follow sysexits.h: 64 bad usage, 66 config file missing, 78 bad config.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace keel {

// --db-connections left at 0 on a postgresql:// --db: a PostgreSQL server has a fixed number
// of connections for every client (max_connections, 100 by default), and keels share it.
constexpr size_t kDefaultPostgresConnections = 16;

struct CliOptions {
  size_t workers = 0;  // 0 = hardware threads, at least 2
  size_t max_inflight = 256;
  size_t max_inflight_per_client = 0;  // 0: no per-client share
  size_t max_line_bytes = 16 << 20;
  long long shutdown_grace_ms = 1500;
  // Two clocks per tools/call (TMO-1): idle since the last progress (0 = no idle clock),
  // and maximum since keel accepted the call (never reset). idle <= max.
  long long idle_timeout_ms = 30000;
  long long max_timeout_ms = 55000;
  size_t outbox_bytes = 8 << 20;  // unsent output before progress is dropped / stdin paused
  size_t page_size = 100;
  long long cache_ttl_ms = 300000;
  std::string cache_scope = "public";
  std::string log_level = "warn";
  std::string log_file;
  std::string config_file;
  // The durable state (ledger, demo backends). Empty: DefaultDatabasePath().
  std::string db_path;
  // --db-connections: the pool's most (LedgerService). 0 until parsed: then --workers + 2,
  // at most kDefaultPostgresConnections on PostgreSQL.
  size_t db_connections = 0;
  long long idempotency_ttl_ms = 24LL * 3600 * 1000;
  // Durable tasks (MCP 2025-11-25 tasks/*).
  size_t max_tasks = 64;
  long long task_max_ttl_ms = 24LL * 3600 * 1000;  // 0: unlimited
  long long task_poll_interval_ms = 1000;
  long long task_after_ms = 10000;  // 0: a call never becomes a task
  bool test_tools = false;
  // Also serve the fixtures of the official MCP conformance suite (test_simple_text, ...).
  bool conformance_fixtures = false;
  // MCP log messages (notifications/message) sent before the client calls logging/setLevel:
  // at or above this level; empty: none until the client asks.
  std::string client_log_level;
  // Kill switch for writes (OPS-2): --block-writes turns the persisted switch on at start-up.
  bool block_writes = false;
  // The resilience policy file (BUD-1); empty = the built-in policy. SIGHUP reloads it.
  std::string policy_file;
  std::string catalog_file;         // empty: the built-in demo catalog
  bool shadow = false;              // OPS-1 for every tool
  std::vector<std::string> faults;  // --fault TOOL:KIND[=VALUE] (simulated backend)
  // Streamable HTTP (server/transport/http/mcp_http.h): --http HOST:PORT or PORT; empty: off.
  std::string http;
  std::string http_path = "/mcp";
  bool no_stdio = false;  // HTTP only: stdin and stdout are not the protocol
  long long sse_keepalive_ms = 15000;
  std::vector<std::string> http_allow_origins;
  std::string http_token_file;
  bool http_insecure_no_auth = false;
  size_t http_max_connections = 256;
  size_t http_max_sessions = 1024;
  long long http_idle_timeout_ms = 30000;
  // `keel policy show [--previous]` / `keel policy check FILE`: instead of serving.
  std::string policy_command;  // "", "show" or "check"
  bool policy_previous = false;
  std::string policy_check_file;
  // `keel catalog check FILE [--path PATH]`: instead of serving (catalog_check.h).
  std::string catalog_check_file;
  std::optional<std::string> catalog_check_path;  // nullopt: this process's PATH
  // `keel call [serve flags] TOOL ['JSON']` (call_command.h): one call, then exit.
  bool call = false;
  std::string call_tool;
  std::string call_arguments = "{}";
  bool call_json = false;  // print the whole CallToolResult as JSON
  // `keel trace summary FILE` (OBS-2): instead of serving.
  std::string trace_summary_file;
  // `keel trace report FILE [-o OUT]` (ADO-4): instead of serving. OUT empty: FILE + ".html";
  // "-": stdout.
  std::string trace_report_file;
  std::string trace_report_output;
  // Per-attempt trace (OBS-1): JSON lines appended to this file; empty = none.
  std::string trace_file;
  bool trace_arguments = false;
  // --trace-format (ADO-3): "jsonl" (the default) or "otlp" (OTLP/JSON spans, and metrics in
  // <trace-file>.metrics.jsonl).
  std::string trace_format = "jsonl";
  // `keel trace summary --json`: the summary as one JSON object.
  bool trace_summary_json = false;
  // `keel admin block-writes on|off|status`: an admin command instead of serving.
  std::string admin_block_writes;  // "", "on", "off" or "status"
  bool admin_instances = false;    // `keel admin instances`
  // `keel wrap [flags] -- COMMAND [ARGS...]` (server/upstream/; docs/wrap.md): serve the MCP
  // server COMMAND starts, with keel's guarantees in front of it; or `keel wrap
  // --upstream-url URL`: the one at URL (Streamable HTTP).
  bool wrap = false;
  std::vector<std::string> upstream_command;    // after "--"
  std::string upstream_url;                     // instead of a command: Streamable HTTP
  std::vector<std::string> upstream_headers;    // "Name: value", with upstream_url
  std::vector<std::string> upstream_env_allow;  // empty: keel's whole environment
  std::string upstream_protocol = "auto";       // auto, legacy, modern
  long long upstream_start_timeout_ms = 60000;
  int upstream_restarts = 5;  // per upstream_restart_window_ms; 0: never restarted
  long long upstream_restart_window_ms = 60000;
};

struct CliParse {
  CliOptions options;
  // Set when keel must exit now (help, version, an error); the message is printed already.
  std::optional<int> exit_code;
};

CliParse ParseCommandLine(int argc, const char* const* argv);

// $XDG_DATA_HOME/keel/keel.db, else $HOME/.local/share/keel/keel.db (absolute: hosts may
// start keel with cwd "/"); the directory is created (0700). Empty, with *error set, when
// neither variable gives an absolute directory or it cannot be created.
std::string DefaultDatabasePath(std::string* error);

}  // namespace keel
