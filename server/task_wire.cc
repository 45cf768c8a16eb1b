#include "server/task_wire.h"

#include <sys/random.h>

#include <cerrno>
#include <stdexcept>

#include "server/ledger_service.h"

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

std::string NewTaskId() {
  unsigned char bytes[16];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed: no secure random bytes for a task id");
    }
    filled += static_cast<size_t>(n);
  }
  constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(32);
  for (unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 0xF];
  }
  return id;
}

}  // namespace keel
