#include "protocol/mcp_surface_types.h"

#include <utility>

#include "protocol/cursor.h"

namespace keel {
namespace {

// params[key] when params is an object that has it and it is not null, else nullptr.
const Json* Field(const Json& params, std::string_view key) {
  if (!params.is_object()) return nullptr;
  const auto it = params.find(key);
  if (it == params.end() || it->is_null()) return nullptr;
  return &*it;
}

Decoded<size_t> DecodePageCursor(const Json& params, const char* list) {
  const Json* cursor = Field(params, "cursor");
  if (cursor == nullptr) return size_t{0};
  if (cursor->is_string()) {
    const std::string& text = cursor->get_ref<const std::string&>();
    if (text.empty()) return size_t{0};
    if (std::optional<size_t> offset = DecodeCursor(list, text)) return *offset;
  }
  return InvalidParams("invalid cursor: it was not given by this server for this list");
}

template <typename Request>
Decoded<Request> DecodePage(const Json& params, const char* list) {
  Decoded<size_t> offset = DecodePageCursor(params, list);
  if (!offset.ok()) return offset.error();
  Request request;
  request.offset = offset.value();
  return request;
}

Decoded<std::string> RequiredString(const Json& params, const char* field) {
  const Json* value = Field(params, field);
  if (value == nullptr || !value->is_string() || value->get_ref<const std::string&>().empty()) {
    return InvalidParams(std::string(field) + " (a non-empty string) is required");
  }
  return value->get<std::string>();
}

// The MRTR members of a retry (MCP 2026-07-28); the era erases them before a legacy
// request is decoded.
Decoded<InputRetry> DecodeRetry(const Json& params) {
  InputRetry retry;
  if (const Json* responses = Field(params, "inputResponses")) {
    if (!responses->is_object()) return InvalidParams("inputResponses must be an object");
    retry.input_responses = *responses;
  }
  if (const Json* state = Field(params, "requestState")) {
    if (!state->is_string()) return InvalidParams("requestState must be a string");
    retry.request_state = state->get<std::string>();
  }
  return retry;
}

// An object of string values (prompt arguments, completion context).
Decoded<std::map<std::string, std::string>> StringMap(const Json* object, const char* field) {
  std::map<std::string, std::string> values;
  if (object == nullptr) return values;
  if (!object->is_object()) return InvalidParams(std::string(field) + " must be an object");
  for (const auto& [key, value] : object->items()) {
    if (!value.is_string()) {
      return InvalidParams(std::string(field) + "." + key + " must be a string");
    }
    values.emplace(key, value.get<std::string>());
  }
  return values;
}

}  // namespace

Decoded<ListResourcesRequest> DecodeListResourcesRequest(const Json& params) {
  return DecodePage<ListResourcesRequest>(params, kResourcesCursor);
}

Decoded<ListResourceTemplatesRequest> DecodeListResourceTemplatesRequest(const Json& params) {
  return DecodePage<ListResourceTemplatesRequest>(params, kTemplatesCursor);
}

Decoded<ListPromptsRequest> DecodeListPromptsRequest(const Json& params) {
  return DecodePage<ListPromptsRequest>(params, kPromptsCursor);
}

Decoded<ReadResourceRequest> DecodeReadResourceRequest(const Json& params) {
  Decoded<std::string> uri = RequiredString(params, "uri");
  if (!uri.ok()) return uri.error();
  Decoded<InputRetry> retry = DecodeRetry(params);
  if (!retry.ok()) return retry.error();
  return ReadResourceRequest{std::move(uri.value()), std::move(retry.value())};
}

Decoded<SubscribeRequest> DecodeSubscribeRequest(const Json& params, bool subscribe) {
  Decoded<std::string> uri = RequiredString(params, "uri");
  if (!uri.ok()) return uri.error();
  return SubscribeRequest{std::move(uri.value()), subscribe};
}

Decoded<GetPromptRequest> DecodeGetPromptRequest(const Json& params) {
  Decoded<std::string> name = RequiredString(params, "name");
  if (!name.ok()) return name.error();
  auto arguments = StringMap(Field(params, "arguments"), "arguments");
  if (!arguments.ok()) return arguments.error();
  Decoded<InputRetry> retry = DecodeRetry(params);
  if (!retry.ok()) return retry.error();
  return GetPromptRequest{std::move(name.value()), std::move(arguments.value()),
                          std::move(retry.value())};
}

Decoded<CompleteRequest> DecodeCompleteRequest(const Json& params) {
  const Json* ref = Field(params, "ref");
  const Json* type = ref != nullptr ? Field(*ref, "type") : nullptr;
  if (type == nullptr || !type->is_string()) {
    return InvalidParams("ref (an object with type ref/prompt or ref/resource) is required");
  }
  CompleteRequest request;
  const char* name_field = "name";
  if (*type == "ref/prompt") {
    request.ref = CompleteRequest::Ref::kPrompt;
  } else if (*type == "ref/resource") {
    request.ref = CompleteRequest::Ref::kResource;
    name_field = "uri";
  } else {
    return InvalidParams("ref.type must be ref/prompt or ref/resource");
  }
  Decoded<std::string> ref_name = RequiredString(*ref, name_field);
  if (!ref_name.ok()) return InvalidParams(std::string("ref.") + name_field + " is required");
  request.ref_name = std::move(ref_name.value());
  const Json* argument = Field(params, "argument");
  const Json* arg_name = argument != nullptr ? Field(*argument, "name") : nullptr;
  const Json* arg_value = argument != nullptr ? Field(*argument, "value") : nullptr;
  if (arg_name == nullptr || !arg_name->is_string() || arg_value == nullptr ||
      !arg_value->is_string()) {
    return InvalidParams("argument ({name, value}, both strings) is required");
  }
  request.argument = arg_name->get<std::string>();
  request.value = arg_value->get<std::string>();
  const Json* context = Field(params, "context");
  auto chosen =
      StringMap(context != nullptr ? Field(*context, "arguments") : nullptr, "context.arguments");
  if (!chosen.ok()) return chosen.error();
  request.context = std::move(chosen.value());
  return request;
}

Json ListPageToWire(const ListItemsResult& result, const char* member, const char* list) {
  Json wire = Json::object();
  wire[member] = result.items;
  if (result.next_offset) wire["nextCursor"] = EncodeCursor(list, *result.next_offset);
  if (result.cache) {
    wire["ttlMs"] = result.cache->ttl_ms;
    wire["cacheScope"] = result.cache->scope;
  }
  return wire;
}

Json ToWire(const CompleteResult& result) {
  Json completion = {{"values", result.values}};
  if (result.total) completion["total"] = *result.total;
  completion["hasMore"] = result.has_more;
  return Json{{"completion", std::move(completion)}};
}

}  // namespace keel
