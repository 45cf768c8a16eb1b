// The MCP 2025-11-25 wire shapes of durable tasks. Pure functions.
//   Task: {taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttl (number|null),
//          pollInterval}; createdAt and lastUpdatedAt are ISO 8601 UTC, always present.
//   related-task _meta: {"io.modelcontextprotocol/related-task": {"taskId": ...}}
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ledger/task_store.h"

namespace keel {

using Json = nlohmann::json;

inline constexpr std::string_view kRelatedTaskKey = "io.modelcontextprotocol/related-task";

Json TaskJson(const TaskRecord& task);
// {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
Json RelatedTaskMeta(std::string_view task_id);
// `result` (a CallToolResult, a Task result) with the related-task key added to its _meta:
// every response about a task carries it (tasks/result MUST; keel does it for all).
Json WithRelatedTask(Json result, std::string_view task_id);
// 128 bits from the kernel's CSPRNG (RandomHex), as 32 lowercase hex digits.
// Throws std::runtime_error if the kernel gives none.
std::string NewTaskId();

}  // namespace keel
