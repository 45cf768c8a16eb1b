#include "protocol/http_headers.h"

#include <cctype>
#include <cmath>
#include <cstdint>

#include "protocol/base64.h"
#include "protocol/error_codes.h"

namespace keel {

namespace {

constexpr std::string_view kSentinelOpen = "=?base64?";
constexpr std::string_view kSentinelClose = "?=";

int Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

RpcError Mismatch(std::string_view header, std::string why) {
  return RpcError{kHeaderMismatch, "Header mismatch: " + why,
                  Json{{"header", std::string(header)}}};
}

// The header `name` compared with the body's `expected`; nullopt when they agree.
std::optional<RpcError> Compare(const HeaderLookup& header, std::string_view name,
                                const std::string& expected) {
  const std::optional<std::string_view> raw = header(name);
  if (!raw) return Mismatch(name, std::string(name) + " is missing");
  const std::optional<std::string> value = DecodeHeaderValue(*raw);
  if (!value) return Mismatch(name, std::string(name) + " has an invalid value");
  if (*value != expected) {
    return Mismatch(name, std::string(name) + " does not match the request body");
  }
  return std::nullopt;
}

// How an argument's value reads in a header (rule 3); nullopt for a type headers cannot carry.
std::optional<std::string> HeaderForm(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9007199254740992.0) {
      return std::to_string(static_cast<int64_t>(d));
    }
  }
  return std::nullopt;
}

// An integer header value compared numerically ("42.0" == 42).
bool SameNumber(const std::string& header_value, const std::string& expected) {
  // Decimal only: an optional sign, digits, an optional fraction of zeros ("42.0").
  size_t i = header_value.size() > 0 && header_value[0] == '-' ? 1 : 0;
  const size_t digits_from = i;
  while (i < header_value.size() && std::isdigit(static_cast<unsigned char>(header_value[i]))) ++i;
  if (i == digits_from) return false;
  if (i < header_value.size()) {
    if (header_value[i] != '.') return false;
    for (++i; i < header_value.size(); ++i) {
      if (header_value[i] != '0') return false;
    }
  }
  try {
    size_t used = 0;
    const double h = std::stod(header_value, &used);
    if (used != header_value.size()) return false;
    return h == std::stod(expected);
  } catch (...) {
    return false;
  }
}

// The member of params a method's Mcp-Name carries (rule 2); null for other methods.
const char* NameKey(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") {
    return "taskId";
  }
  return nullptr;
}

std::string MetaVersion(const Json& params) {
  if (!params.is_object()) return "";
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return "";
  const auto v = meta->find("io.modelcontextprotocol/protocolVersion");
  return v != meta->end() && v->is_string() ? v->get<std::string>() : "";
}

std::optional<RpcError> CheckParamHeaders(const HeaderLookup& header, const Json& params,
                                          const Json& schema) {
  if (!schema.is_object()) return std::nullopt;
  const auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) return std::nullopt;
  const Json* arguments = nullptr;
  if (const auto it = params.find("arguments"); it != params.end() && it->is_object()) {
    arguments = &*it;
  }
  for (const auto& [property, spec] : props->items()) {
    if (!spec.is_object()) continue;
    const auto mark = spec.find("x-mcp-header");
    if (mark == spec.end() || !mark->is_string()) continue;
    if (arguments == nullptr) continue;
    const auto arg = arguments->find(property);
    if (arg == arguments->end() || arg->is_null()) continue;
    std::string lower = "mcp-param-" + mark->get<std::string>();
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::optional<std::string> expected = HeaderForm(*arg);
    if (!expected) continue;
    const std::optional<std::string_view> raw = header(lower);
    const std::string shown = "Mcp-Param-" + mark->get<std::string>();
    if (!raw) return Mismatch(shown, shown + " is missing");
    const std::optional<std::string> value = DecodeHeaderValue(*raw);
    if (!value) return Mismatch(shown, shown + " has an invalid value");
    const bool same = arg->is_number() ? SameNumber(*value, *expected) : *value == *expected;
    if (!same) return Mismatch(shown, shown + " does not match the request body");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int d[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=') {
        // Padding only at the very end, and only in the last two places.
        if (i + 4 != text.size() || k < 2) return std::nullopt;
        d[k] = 0;
        ++pad;
      } else {
        if (pad > 0) return std::nullopt;
        d[k] = Base64Digit(c);
        if (d[k] < 0) return std::nullopt;
      }
    }
    const uint32_t bits = (static_cast<uint32_t>(d[0]) << 18) |
                          (static_cast<uint32_t>(d[1]) << 12) | (static_cast<uint32_t>(d[2]) << 6) |
                          static_cast<uint32_t>(d[3]);
    out.push_back(static_cast<char>((bits >> 16) & 0xFF));
    if (pad < 2) out.push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(bits & 0xFF));
  }
  return out;
}

std::optional<std::string> DecodeHeaderValue(std::string_view raw) {
  const std::string_view value = Trim(raw);
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7F) return std::nullopt;
  }
  if (value.size() >= kSentinelOpen.size() + kSentinelClose.size() &&
      value.substr(0, kSentinelOpen.size()) == kSentinelOpen &&
      value.substr(value.size() - kSentinelClose.size()) == kSentinelClose) {
    return DecodeBase64(value.substr(kSentinelOpen.size(),
                                     value.size() - kSentinelOpen.size() - kSentinelClose.size()));
  }
  return std::string(value);
}

std::optional<RpcError> CheckRequestHeaders(const HeaderLookup& header, std::string_view method,
                                            const Json& params, const Json* input_schema) {
  if (auto e = Compare(header, "mcp-protocol-version", MetaVersion(params))) {
    e->data["header"] = "MCP-Protocol-Version";
    e->message =
        "Header mismatch: MCP-Protocol-Version is missing or does not match the "
        "request body";
    return e;
  }
  if (auto e = Compare(header, "mcp-method", std::string(method))) {
    e->data["header"] = "Mcp-Method";
    return e;
  }
  const char* name_key = NameKey(method);
  if (name_key != nullptr && params.is_object()) {
    const auto it = params.find(name_key);
    // A missing or mistyped name is the method's own -32602, answered after this check.
    if (it != params.end() && it->is_string()) {
      if (auto e = Compare(header, "mcp-name", it->get<std::string>())) {
        e->data["header"] = "Mcp-Name";
        return e;
      }
    }
  }
  if (method == "tools/call" && input_schema != nullptr && params.is_object()) {
    return CheckParamHeaders(header, params, *input_schema);
  }
  return std::nullopt;
}

std::string EncodeHeaderValue(std::string_view value) {
  bool plain = true;
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7E) plain = false;
  }
  if (!value.empty() && (value.front() == ' ' || value.back() == ' ')) plain = false;
  const bool looks_encoded = value.size() >= kSentinelOpen.size() + kSentinelClose.size() &&
                             value.substr(0, kSentinelOpen.size()) == kSentinelOpen &&
                             value.substr(value.size() - kSentinelClose.size()) == kSentinelClose;
  if (plain && !looks_encoded) return std::string(value);
  return std::string(kSentinelOpen) + Base64Encode(value) + std::string(kSentinelClose);
}

std::vector<std::pair<std::string, std::string>> ModernRequestHeaders(std::string_view method,
                                                                      const Json& params,
                                                                      const Json* input_schema) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (std::string version = MetaVersion(params); !version.empty()) {
    headers.emplace_back("MCP-Protocol-Version", EncodeHeaderValue(version));
  }
  headers.emplace_back("Mcp-Method", EncodeHeaderValue(method));
  const char* name_key = NameKey(method);
  if (name_key != nullptr && params.is_object()) {
    const auto it = params.find(name_key);
    if (it != params.end() && it->is_string()) {
      headers.emplace_back("Mcp-Name", EncodeHeaderValue(it->get<std::string>()));
    }
  }
  if (method != "tools/call" || input_schema == nullptr || !input_schema->is_object()) {
    return headers;
  }
  const auto props = input_schema->find("properties");
  const auto arguments = params.is_object() ? params.find("arguments") : params.end();
  if (props == input_schema->end() || !props->is_object() || arguments == params.end() ||
      !arguments->is_object()) {
    return headers;
  }
  for (const auto& [property, spec] : props->items()) {
    const auto mark = spec.is_object() ? spec.find("x-mcp-header") : spec.end();
    if (!spec.is_object() || mark == spec.end() || !mark->is_string()) continue;
    const auto arg = arguments->find(property);
    if (arg == arguments->end() || arg->is_null()) continue;
    if (std::optional<std::string> form = HeaderForm(*arg)) {
      headers.emplace_back("Mcp-Param-" + mark->get<std::string>(), EncodeHeaderValue(*form));
    }
  }
  return headers;
}

}  // namespace keel
