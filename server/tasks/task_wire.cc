#include "server/tasks/task_wire.h"

#include "protocol/error_codes.h"
#include "protocol/iso_time.h"
#include "protocol/mcp_envelope.h"
#include "protocol/mcp_version.h"
#include "server/runtime/random_hex.h"

namespace keel {
namespace {

// The structured error of a keel interruption (task_recovery.cc, a shutdown before the work
// started) or of a tool that threw (CallRunner: type internal_error), or null.
const Json* KeelError(const TaskRecord& task) {
  if (!task.result.is_object()) return nullptr;
  const auto structured = task.result.find("structuredContent");
  if (structured == task.result.end() || !structured->is_object()) return nullptr;
  const auto error = structured->find("error");
  if (error == structured->end() || !error->is_object()) return nullptr;
  const auto type = error->find("type");
  if (type == error->end() || (*type != "interrupted" && *type != "internal_error")) return nullptr;
  return &*error;
}

// The text of a result's first content block; empty when it has none.
std::string FirstBlockText(const Json& result) {
  const auto content = result.find("content");
  if (content == result.end() || !content->is_array() || content->empty()) return std::string();
  const Json& block = content->front();
  const auto text = block.find("text");
  return text != block.end() && text->is_string() ? text->get<std::string>() : std::string();
}

// The extension's status of a row (the header's Status rule).
std::string_view ExtensionStatus(const TaskRecord& task) {
  if (task.status == TaskStatus::kFailed && !task.error.is_object() && KeelError(task) == nullptr &&
      task.result.is_object()) {
    return "completed";
  }
  return TaskStatusName(task.status);
}

// A Task in either dialect: the same fields, with the dialect's status and the names of its
// ttl and poll interval members.
Json TaskFields(const TaskRecord& task, std::string_view status, const char* ttl_key,
                const char* poll_key) {
  Json json = {{"taskId", task.task_id}, {"status", std::string(status)}};
  if (!task.status_message.empty()) json["statusMessage"] = task.status_message;
  json["createdAt"] = IsoTime(task.created_ms);
  json["lastUpdatedAt"] = IsoTime(task.updated_ms);
  json[ttl_key] = task.ttl_ms ? Json(*task.ttl_ms) : Json(nullptr);
  json[poll_key] = task.poll_interval_ms;
  return json;
}

}  // namespace

bool IsExtensionTask(const TaskRecord& task) {
  if (!task.request.is_object()) return false;
  const auto meta = task.request.find("_meta");
  return meta != task.request.end() && meta->is_object() &&
         meta->contains(std::string(kMetaProtocolVersion));
}

void MarkExtensionRequest(Json& params) {
  Json& meta = params["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta[std::string(kMetaProtocolVersion)] = std::string(kModernProtocolVersion);
}

Json ExtensionTaskJson(const TaskRecord& task) {
  return TaskFields(task, ExtensionStatus(task), "ttlMs", "pollIntervalMs");
}

Json ExtensionCreateTaskResult(const TaskRecord& task) {
  Json json = ExtensionTaskJson(task);
  json["resultType"] = "task";
  return json;
}

Json ExtensionDetailedTask(const TaskRecord& task) {
  Json json = ExtensionTaskJson(task);
  const std::string status = json["status"].get<std::string>();
  if (status == "input_required") {
    json["inputRequests"] = task.input_requests.is_object() ? task.input_requests : Json::object();
  } else if (status == "completed" && task.result.is_object()) {
    json["result"] = task.result;
  } else if (status == "failed") {
    if (task.error.is_object()) {
      json["error"] = task.error;
    } else {
      const Json* keel_error = KeelError(task);
      std::string message = task.status_message;
      if (message.empty()) message = FirstBlockText(task.result);
      if (message.empty()) message = "Task failed";
      json["error"] = {{"code", kInternalError},
                       {"message", std::move(message)},
                       {"data", keel_error != nullptr ? *keel_error : Json::object()}};
    }
  }
  return json;
}

Json TaskJson(const TaskRecord& task) {
  return TaskFields(task, TaskStatusName(task.status), "ttl", "pollInterval");
}

Json RelatedTaskMeta(std::string_view task_id) {
  return Json{{std::string(kRelatedTaskKey), {{"taskId", std::string(task_id)}}}};
}

Json WithRelatedTask(Json result, std::string_view task_id) {
  Json& meta = result["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta[std::string(kRelatedTaskKey)] = {{"taskId", std::string(task_id)}};
  return result;
}

std::string NewTaskId() { return RandomHex(16); }

}  // namespace keel
