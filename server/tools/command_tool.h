// CommandTool: a catalog entry with `run`: each attempt of a call runs the
// entry's command as a child process (process_runner.h), with every guarantee of keel's call
// path — cancellation and timeouts kill the child's whole process group, fd-3 progress feeds
// the call's progress and idle clock, the exit status classifies the failure for the retry
// executor and the breaker, and a keyed write runs at most once per idempotency key under the
// ledger, with the entry's `lookup` command to reconcile an ambiguous outcome
// (remote_write.h).
//
// What the child gets (docs/catalog.md "Command-backed tools"):
//  argv     run.command with {argument} and {idempotency_key} expanded (never a shell)
//  stdin    the call's arguments as one line of JSON, then end of file
//  cwd      run.cwd (default: the catalog file's directory)
//  env      only run.env.pass variables from keel's environment (default PATH, HOME, LANG,
//           LC_ALL, TZ, TMPDIR, USER, LOGNAME), then run.env.set, then KEEL_TOOL,
//           KEEL_INTENT_ID (keel's id of the call, the same on every attempt), KEEL_ATTEMPT
//           (1, 2, ...), KEEL_ATTEMPT_ID, KEEL_DEADLINE_MS (milliseconds left for this
//           attempt), KEEL_REQUEST_ID (the JSON-RPC id as JSON text; empty for a task),
//           KEEL_TASK_ID (tasks only) and, for a keyed write, KEEL_IDEMPOTENCY_KEY
//  fds      0, 1, 2 and 3 (progress: one JSON object per line, {"progress": 40, "total":
//           100, "message": "..."}, or a bare number); nothing else of keel's
// stderr lines are logged (at most kMaxLoggedStderrLines per attempt), never sent.
//
// Thread-safety: Call() and LookupKey() are reentrant (workers run calls concurrently).
#pragma once

#include <memory>
#include <string>

#include "server/catalog/command_spec.h"
#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"

namespace keel {

constexpr size_t kMaxLoggedStderrLines = 50;

class CommandTool final : public Tool {
 public:
  // `ledger` may be null only for reads (a write's key needs the ledger).
  CommandTool(ToolSpec spec, CommandSpec command, std::shared_ptr<LedgerService> ledger);

  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override;
  // A task's call after a restart: the ledger's stored outcome for its key, else the lookup.
  Reconciled Reconcile(const Json& arguments, const Json& meta) override;

  bool has_lookup() const { return command_.lookup.has_value(); }
  // Runs the lookup command for `key` (within lookup.timeoutMs; never cancelled).
  Reconciled LookupKey(const std::string& key) const;
  // The start-up pass over this tool's unsettled ledger rows (remote_write.h). Returns how
  // many were settled; 0 without a lookup.
  size_t ReconcileAtStartup(const std::string& self);

 private:
  Json RunOnce(ToolContext& ctx, const std::vector<std::string>& argv,
               const std::string& key) const;
  std::vector<std::string> Environment(const ToolContext* ctx, const std::string& key) const;

  ToolSpec spec_;
  CommandSpec command_;
  std::shared_ptr<LedgerService> ledger_;
};

}  // namespace keel
