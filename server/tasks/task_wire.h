// The wire shapes of durable tasks, one row rendered in two dialects. Pure functions.
//
// MCP 2025-11-25 (SEP-1686, legacy sessions):
//   Task: {taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttl (number|null),
//          pollInterval}; createdAt and lastUpdatedAt are ISO 8601 UTC, always present.
//   related-task _meta: {"io.modelcontextprotocol/related-task": {"taskId": ...}}
// MCP 2026-07-28 tasks extension (SEP-2663, reference/mcp-2026-07-28.md §6):
//   Task: {taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttlMs (number|null),
//          pollIntervalMs}; CreateTaskResult is the Task with resultType "task" (flat);
//   tasks/get adds the outcome inline: `result` for completed, `error` for failed, and for
//   input_required the questions still outstanding: `inputRequests` (key -> {method, params}).
//   Status: the extension keeps `failed` for JSON-RPC errors. A stored `failed` whose
//   outcome is a tool result with isError (the tool failed, or timed out) is `completed`
//   with that result, exactly what the call would have answered; keel's own errors stay
//   `failed`, with an error {code -32603, message, data: the structured error}: its
//   interruptions (a restart or shutdown: structuredContent.error.type "interrupted") and a
//   tool that threw (type "internal_error": no result of the tool's, a server failure; a
//   plain call answers it as an isError result, there being no task to fail).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ledger/task_store.h"

namespace keel {

using Json = nlohmann::json;

inline constexpr std::string_view kRelatedTaskKey = "io.modelcontextprotocol/related-task";

// How a task is spoken of: by the request that asks (tasks/*), or, for what keel sends on
// its own (a creation's answer), by the request that made it.
enum class TaskDialect { kLegacy, kExtension };
// A task made by a 2026-07-28 request: its stored request's _meta names the version
// (MarkExtensionRequest; admission keeps only the _meta keys keel reads, so the creator
// marks it).
bool IsExtensionTask(const TaskRecord& task);
// Marks `params` ({name, arguments, _meta?}), a task's request, as made by a 2026-07-28
// request.
void MarkExtensionRequest(Json& params);

Json TaskJson(const TaskRecord& task);
// The extension's Task, its CreateTaskResult, and its DetailedTask (tasks/get).
Json ExtensionTaskJson(const TaskRecord& task);
Json ExtensionCreateTaskResult(const TaskRecord& task);
Json ExtensionDetailedTask(const TaskRecord& task);
// {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
Json RelatedTaskMeta(std::string_view task_id);
// `result` (a CallToolResult, a Task result) with the related-task key added to its _meta:
// every response about a task carries it (tasks/result MUST; keel does it for all).
Json WithRelatedTask(Json result, std::string_view task_id);
// 128 bits from the kernel's CSPRNG (RandomHex), as 32 lowercase hex digits.
// Throws std::runtime_error if the kernel gives none.
std::string NewTaskId();

}  // namespace keel
