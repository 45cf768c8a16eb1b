#include "server/session/session_instructions.h"

#include <string_view>

namespace keel {
namespace {

constexpr std::string_view kFailures =
    "Tool failures come back as results with isError and, where keel knows more, "
    "structuredContent.error.type (invalid_arguments, server_busy, timeout) to act on. "
    "A call that reports no progress for the idle timeout, or runs past the maximum "
    "timeout, ends with a timeout result. A call cancelled with notifications/cancelled "
    "is never answered.";
constexpr std::string_view kKeys =
    " Mutating tools take an idempotency key (an idempotencyKey argument or "
    "_meta[\"dev.keel/idempotency-key\"]): retry with the same key and arguments and the "
    "mutation runs once";
constexpr std::string_view kLookup = "; ledger_lookup tells what happened to a key.";
constexpr std::string_view kLegacyTasks =
    " Tools marked execution.taskSupport optional or required can run as durable tasks "
    "(params.task): poll tasks/get, fetch tasks/result, stop them with tasks/cancel; a "
    "task outlives the connection and a restart of keel.";
constexpr std::string_view kExtensionTasks =
    " With the tasks extension declared, tools marked taskSupport required answer with a "
    "task, and a call still running after a while becomes one: poll tasks/get for its "
    "result, stop it with tasks/cancel; a task outlives the connection and a restart of "
    "keel.";

}  // namespace

std::string InstructionsFor(const WireForm& wire, const std::string& upstream,
                            const std::optional<std::string>& configured,
                            const ToolRegistry& tools) {
  std::string instructions = upstream.empty() ? std::string() : upstream + "\n\n";
  if (configured) return instructions + *configured;
  bool writes = false;
  bool lookup = false;
  bool tasks = false;
  for (const auto& tool : tools.tools()) {
    const ToolSpec& spec = tool->spec();
    writes = writes || IsWrite(spec.effect);
    lookup = lookup || spec.name == "ledger_lookup";
    tasks = tasks || spec.task_support != TaskSupport::kForbidden;
  }
  instructions += kFailures;
  if (writes) {
    instructions += kKeys;
    instructions += lookup ? kLookup : std::string_view(".");
  }
  if (tasks && !IsModern(wire)) instructions += kLegacyTasks;
  if (tasks && IsModern(wire) && wire.tasks) instructions += kExtensionTasks;
  return instructions;
}

}  // namespace keel
