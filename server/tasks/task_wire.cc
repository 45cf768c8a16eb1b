#include "server/tasks/task_wire.h"

#include "protocol/iso_time.h"
#include "server/runtime/random_hex.h"

namespace keel {

Json TaskJson(const TaskRecord& task) {
  Json json = {{"taskId", task.task_id}, {"status", std::string(TaskStatusName(task.status))}};
  if (!task.status_message.empty()) json["statusMessage"] = task.status_message;
  json["createdAt"] = IsoTime(task.created_ms);
  json["lastUpdatedAt"] = IsoTime(task.updated_ms);
  json["ttl"] = task.ttl_ms ? Json(*task.ttl_ms) : Json(nullptr);
  json["pollInterval"] = task.poll_interval_ms;
  return json;
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
