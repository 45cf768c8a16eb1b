#include "server/catalog/tool.h"

#include "protocol/bounded_json.h"
#include "protocol/client_capabilities.h"
#include "protocol/schema_validator.h"
#include "server/input/input_round.h"

namespace keel {

std::string_view TaskSupportName(TaskSupport support) {
  switch (support) {
    case TaskSupport::kForbidden:
      return "forbidden";
    case TaskSupport::kOptional:
      return "optional";
    case TaskSupport::kRequired:
      return "required";
  }
  return "forbidden";
}

Json IntentArguments(const Json& arguments, const std::vector<std::string>& components) {
  if (components.empty() || !arguments.is_object()) return arguments;
  Json intent = Json::object();
  for (const std::string& name : components) {
    if (const auto it = arguments.find(name); it != arguments.end()) intent[name] = *it;
  }
  for (const char* always : {"approval_id", "idempotencyKey"}) {
    if (const auto it = arguments.find(always); it != arguments.end()) intent[always] = *it;
  }
  return intent;
}

Json ToolContext::intent_arguments() const { return IntentArguments(arguments_, key_components_); }

const Json* ToolContext::InputResponse(const std::string& key) const {
  if (!identity_.input || !identity_.input->answers.is_object()) return nullptr;
  const auto it = identity_.input->answers.find(key);
  return it == identity_.input->answers.end() ? nullptr : &*it;
}

bool ToolContext::CanAsk(const Json& input_request) const {
  if (!identity_.input || !identity_.task_id.empty()) return false;
  return MissingCapabilities(Json{{"q", input_request}}, identity_.input->client_capabilities)
      .empty();
}

const std::string& ToolContext::tool_state() const {
  static const std::string kNone;
  return identity_.input ? identity_.input->tool_state : kNone;
}

Json BoundedResult(Json result, const std::string& tool) {
  if (!JsonTooDeep(result)) return result;
  // `result` is destroyed here without recursion (nlohmann destroys values iteratively).
  return ErrorResult("Tool '" + tool + "' ran, but its result is " +
                         JsonProblemText(JsonProblem::kTooDeep) +
                         ", more than keel sends, so the result was dropped.",
                     Json{{"type", "result_too_deep"},
                          {"failure_class", "rejected_permanent"},
                          {"max_depth", kMaxJsonDepth}});
}

Json ForOutputSchema(const ToolSpec& spec, Json result) {
  if (spec.output_schema.is_null() || !spec.validate_arguments || !result.is_object() ||
      !result.value("isError", false)) {
    return result;
  }
  const auto content = result.find("structuredContent");
  if (content == result.end()) return result;
  // The registry checked the schema at registration.
  if (!ValidateCheckedSchema(spec.output_schema, *content, "structuredContent")) return result;
  Json moved = std::move(*content);
  result.erase("structuredContent");
  Json& meta = result["_meta"];
  if (!meta.is_object()) meta = Json::object();
  if (moved.is_object() && moved.contains("error") && moved.size() == 1) {
    meta["dev.keel/error"] = std::move(moved["error"]);
  } else {
    meta["dev.keel/structuredContent"] = std::move(moved);
  }
  return result;
}

}  // namespace keel
