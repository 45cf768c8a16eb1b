#include "protocol/json_rpc.h"

#include <cstdint>

#include "protocol/bounded_json.h"
#include "protocol/error_codes.h"
#include "protocol/utf8.h"

namespace keel {
namespace {

// A response's first allocation: enough for the envelope and a small result.
constexpr size_t kEncodeReserveBytes = 256;

DecodeError Invalid(std::string message, std::optional<Json> id = std::nullopt) {
  return DecodeError{kInvalidRequest, std::move(message), std::move(id)};
}

// Appends an id as dump() would write it. Integer ids (the common case) skip nlohmann's
// serializer, whose set-up (a shared_ptr adapter and a 512-byte indent buffer) costs more
// than printing the number.
void AppendId(std::string& out, const Json& id) {
  if (id.is_number_unsigned()) {
    out += std::to_string(id.get<uint64_t>());
  } else if (id.is_number_integer()) {
    out += std::to_string(id.get<int64_t>());
  } else {
    out += DumpCompact(id);
  }
}

}  // namespace

bool IsValidId(const Json& id) {
  return id.is_string() || id.is_number_integer();  // number_integer covers unsigned
}

std::string IdKey(const Json& id) {
  std::string key;
  AppendId(key, id);
  return key;
}

DecodeResult DecodeLine(std::string_view line) {
  if (!IsValidUtf8(line)) {
    return DecodeError{kParseError, "Parse error: the line is not valid UTF-8", std::nullopt};
  }
  // Nesting is bounded (bounded_json.h) so that no input can exhaust the stack.
  BoundedJson parsed = ParseBoundedJson(line);
  if (parsed.problem == JsonProblem::kTooDeep) {
    return DecodeError{kParseError, "Parse error: JSON " + JsonProblemText(parsed.problem),
                       std::nullopt};
  }
  if (!parsed.ok()) {
    return DecodeError{kParseError, "Parse error: the line is not valid JSON", std::nullopt};
  }
  Json root = std::move(parsed.value);
  if (root.is_array()) {
    return Invalid("Batching not supported: send one JSON-RPC message per line");
  }
  if (!root.is_object()) return Invalid("Invalid Request: a message must be a JSON object");

  std::optional<Json> id;
  const auto id_it = root.find("id");
  const bool has_id = id_it != root.end();
  if (has_id) {
    if (!IsValidId(*id_it)) {
      return Invalid("Invalid Request: id must be a string or an integer");
    }
    id = *id_it;
  }
  const auto version = root.find("jsonrpc");
  if (version == root.end() || !version->is_string() ||
      version->get_ref<const std::string&>() != "2.0") {
    return Invalid("Invalid Request: \"jsonrpc\" must be \"2.0\"", id);
  }

  Message message;
  const auto method = root.find("method");
  if (method != root.end()) {
    if (!method->is_string()) return Invalid("Invalid Request: method must be a string", id);
    message.method = method->get<std::string>();
    message.kind = has_id ? MessageKind::kRequest : MessageKind::kNotification;
    const auto params = root.find("params");
    if (params != root.end()) {
      if (!params->is_object()) {
        // MCP params are always objects. A request gets -32602; a notification, nothing.
        return DecodeError{kInvalidParams, "Invalid params: params must be an object", id,
                           /*notification=*/!has_id};
      }
      message.params = std::move(*params);
    }
    if (has_id) message.id = std::move(*id);
    return message;
  }

  const auto result = root.find("result");
  const auto error = root.find("error");
  const bool has_result = result != root.end();
  const bool has_error = error != root.end();
  if (has_id && has_result != has_error) {
    message.kind = MessageKind::kResponse;
    message.id = std::move(*id);
    if (has_result) message.result = std::move(*result);
    if (has_error) message.error = std::move(*error);
    return message;
  }
  return Invalid("Invalid Request: a message needs a method, or an id with a result or an error",
                 id);
}

std::string DumpCompact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void AppendCompact(std::string& out, const Json& value) {
  // What dump() does, minus its own string: the text goes straight to the end of `out`.
  nlohmann::detail::serializer<Json> serializer(
      nlohmann::detail::output_adapter<char, std::string>(out), ' ',
      Json::error_handler_t::replace);
  serializer.dump(value, false, false, 0);
}

std::string EncodeResult(const Json& id, const Json& result, std::string_view members) {
  std::string out;
  // Room for a small result at once: the response is built in this one string, which the
  // outbox then takes as it is.
  out.reserve(kEncodeReserveBytes + members.size());
  out += R"({"jsonrpc":"2.0","id":)";
  AppendId(out, id);
  out += R"(,"result":)";
  if (members.empty() || !result.is_object()) {
    AppendCompact(out, result);
  } else {
    out += '{';
    out += members;
    if (!result.empty()) {
      out += ',';
      const size_t brace = out.size();
      AppendCompact(out, result);
      out.erase(brace, 1);  // the result's own '{'
    } else {
      out += '}';
    }
  }
  out += '}';
  return out;
}

std::string EncodeError(const std::optional<Json>& id, int code, std::string_view message,
                        const Json& data) {
  Json error = {{"code", code}, {"message", std::string(message)}};
  if (!data.is_null()) error["data"] = data;
  std::string out = R"({"jsonrpc":"2.0",)";
  if (id) {
    out += R"("id":)";
    AppendId(out, *id);
    out += ',';
  }
  out += R"("error":)";
  out += DumpCompact(error);
  out += '}';
  return out;
}

std::string EncodeRequest(const Json& id, std::string_view method, const Json& params) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += DumpCompact(id);
  out += R"(,"method":)";
  out += DumpCompact(Json(std::string(method)));
  out += R"(,"params":)";
  out += DumpCompact(params);
  out += '}';
  return out;
}

std::string EncodeNotification(std::string_view method, const Json& params) {
  std::string out = R"({"jsonrpc":"2.0","method":)";
  out += DumpCompact(Json(std::string(method)));
  out += R"(,"params":)";
  out += DumpCompact(params);
  out += '}';
  return out;
}

}  // namespace keel
