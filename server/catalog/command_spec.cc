#include "server/catalog/command_spec.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace keel {
namespace {

bool IsEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool IsKeelName(std::string_view name) { return name.rfind("KEEL_", 0) == 0; }

std::vector<std::string> RequiredOf(const Json* schema) {
  std::vector<std::string> names;
  if (schema == nullptr || !schema->is_object()) return names;
  const auto required = schema->find("required");
  if (required == schema->end() || !required->is_array()) return names;
  for (const Json& name : *required) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

// An argv template: a non-empty array of strings whose references are allowed by `allowed`
// (it returns the problem with a reference, or empty).
template <typename Allowed>
std::optional<std::vector<std::string>> ReadArgv(ObjectReader& reader, std::string_view field,
                                                 Allowed allowed) {
  const Json* list = reader.Find(field);
  if (list == nullptr) {
    reader.Problem(field,
                   "is required: the program and its arguments, e.g. [\"./deploy\", "
                   "\"restart\", \"{job_id}\"]");
    return std::nullopt;
  }
  if (!list->is_array() || list->empty()) {
    reader.Problem(field,
                   "must be a non-empty array of strings (an argv, never a shell "
                   "string), got " +
                       Shown(*list));
    return std::nullopt;
  }
  const size_t before = reader.problem_count();
  std::vector<std::string> argv;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string where = std::string(field) + "[" + std::to_string(i) + "]";
    const Json& item = (*list)[i];
    if (!item.is_string()) {
      reader.Problem(where, "must be a string, got " + Shown(item));
      continue;
    }
    const std::string& element = item.get_ref<const std::string&>();
    if (element.find('\0') != std::string::npos) {
      reader.Problem(where, "must not contain a NUL character");
      continue;
    }
    const TemplateParse parse = ParseTemplate(element);
    if (!parse.problem.empty()) {
      reader.Problem(where, parse.problem);
      continue;
    }
    if (i == 0 && (element.empty() || !parse.refs.empty())) {
      reader.Problem(where, "the program must be a fixed, non-empty path or name");
      continue;
    }
    for (const std::string& ref : parse.refs) {
      if (std::string problem = allowed(ref); !problem.empty()) reader.Problem(where, problem);
    }
    argv.push_back(element);
  }
  if (reader.problem_count() != before) return std::nullopt;
  return argv;
}

void ReadEnv(ObjectReader& run, CommandSpec& spec) {
  const Json* object = run.Object("env");
  if (object == nullptr) return;
  ObjectReader env = run.Nested(*object, "env");
  env.OnlyFields({"pass", "set"});
  if (const Json* pass = env.Find("pass")) {
    if (!pass->is_array()) {
      env.Problem("pass", "must be an array of variable names, got " + Shown(*pass));
    } else {
      spec.env_pass.clear();
      for (size_t i = 0; i < pass->size(); ++i) {
        const Json& name = (*pass)[i];
        const std::string where = "pass[" + std::to_string(i) + "]";
        if (!name.is_string() || !IsEnvName(name.get_ref<const std::string&>())) {
          env.Problem(where, Shown(name) + " is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
        } else if (IsKeelName(name.get_ref<const std::string&>())) {
          env.Problem(where, Shown(name) + ": KEEL_ variables are set by keel for each call");
        } else {
          spec.env_pass.push_back(name.get<std::string>());
        }
      }
    }
  }
  if (const Json* set = env.Object("set")) {
    ObjectReader values = env.Nested(*set, "set");
    for (const auto& item : set->items()) {
      if (!IsEnvName(item.key())) {
        values.Problem(item.key(), "is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
      } else if (IsKeelName(item.key())) {
        values.Problem(item.key(), "KEEL_ variables are set by keel for each call");
      } else if (!item.value().is_string() ||
                 item.value().get_ref<const std::string&>().find('\0') != std::string::npos) {
        values.Problem(item.key(),
                       "must be a string without NUL characters, got " + Shown(item.value()));
      } else {
        spec.env_set[item.key()] = item.value().get<std::string>();
      }
    }
  }
}

void ReadExitCodes(ObjectReader& run, CommandSpec& spec) {
  const Json* object = run.Object("exitCodes");
  if (object == nullptr) return;
  ObjectReader codes = run.Nested(*object, "exitCodes");
  constexpr FailureClass kClasses[] = {FailureClass::kNotSent, FailureClass::kRejectedTransient,
                                       FailureClass::kRejectedPermanent, FailureClass::kAmbiguous};
  for (const auto& item : object->items()) {
    const std::string& key = item.key();
    int code = -1;
    if (!key.empty() && key.size() <= 3 &&
        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      code = std::stoi(key);
    }
    if (code < 1 || code > 255 || key[0] == '0') {
      codes.Problem(key, "must be an exit status from 1 to 255 (0 is always success)");
      continue;
    }
    if (auto index = codes.Choice(
            key, {"not_sent", "rejected_transient", "rejected_permanent", "ambiguous"}, true)) {
      spec.exit_codes[code] = kClasses[*index];
    }
  }
}

std::optional<CommandLookup> ReadLookup(ObjectReader& run, std::optional<EffectClass> effect) {
  const Json* object = run.Object("lookup");
  if (object == nullptr) return std::nullopt;
  if (effect && !IsWrite(*effect)) {
    run.Problem("lookup",
                "applies to writes only (it tells whether a write happened); this "
                "tool's effect is " +
                    std::string(EffectClassName(*effect)));
    return std::nullopt;
  }
  ObjectReader reader = run.Nested(*object, "lookup");
  const size_t before = reader.problem_count();
  reader.OnlyFields({"command", "timeoutMs"});
  CommandLookup lookup;
  auto argv = ReadArgv(reader, "command", [](const std::string& ref) {
    return ref == "idempotency_key"
               ? std::string()
               : "{" + ref +
                     "}: a lookup may reference {idempotency_key} only (it also runs "
                     "at start-up, when only the key is known)";
  });
  if (argv) lookup.argv = std::move(*argv);
  if (auto v = reader.Integer("timeoutMs", 1, kMaxLookupTimeoutMs, false)) lookup.timeout_ms = *v;
  if (reader.problem_count() != before) return std::nullopt;
  return lookup;
}

// The fields of a command object; `allowed` judges each argv reference. `lookup` is read
// only when `with_lookup` (a tool's run; a resource read has nothing to reconcile).
std::optional<CommandSpec> ReadCommandObject(
    ObjectReader& run, const std::function<std::string(const std::string&)>& allowed,
    std::optional<EffectClass> effect, bool with_lookup) {
  const size_t before = run.problem_count();
  if (with_lookup) {
    run.OnlyFields({"command", "cwd", "env", "output", "exitCodes", "killGraceMs", "maxOutputBytes",
                    "stderrTail", "lookup"});
  } else {
    run.OnlyFields({"command", "cwd", "env", "output", "exitCodes", "killGraceMs", "maxOutputBytes",
                    "stderrTail"});
  }
  CommandSpec spec;
  if (auto argv = ReadArgv(run, "command", allowed)) spec.argv = std::move(*argv);
  if (auto cwd = run.String("cwd", false)) {
    if (cwd->empty() || cwd->find('\0') != std::string::npos) {
      run.Problem("cwd", "must be a non-empty directory path");
    }
    spec.cwd = std::move(*cwd);
  }
  ReadEnv(run, spec);
  constexpr CommandOutput kOutputs[] = {CommandOutput::kAuto, CommandOutput::kText,
                                        CommandOutput::kJson};
  if (auto output = run.Choice("output", {"auto", "text", "json"}, false)) {
    spec.output = kOutputs[*output];
  }
  ReadExitCodes(run, spec);
  if (auto v = run.Integer("killGraceMs", 0, kMaxKillGraceMs, false)) spec.kill_grace_ms = *v;
  if (auto v = run.Integer("maxOutputBytes", 1024, kMaxCommandOutputBytes, false)) {
    spec.max_output_bytes = *v;
  }
  if (auto v = run.Integer("stderrTail", 0, kMaxStderrTailBytes, false))
    spec.stderr_tail_bytes = *v;
  if (with_lookup) spec.lookup = ReadLookup(run, effect);
  if (run.problem_count() != before) return std::nullopt;
  return spec;
}

}  // namespace

const std::vector<std::string>& DefaultPassedEnvironment() {
  static const std::vector<std::string> names = {"PATH", "HOME",   "LANG", "LC_ALL",
                                                 "TZ",   "TMPDIR", "USER", "LOGNAME"};
  return names;
}

FailureClass ExitCodeClass(const CommandSpec& spec, int exit_code) {
  if (const auto it = spec.exit_codes.find(exit_code); it != spec.exit_codes.end()) {
    return it->second;
  }
  if (exit_code == 75) return FailureClass::kRejectedTransient;  // EX_TEMPFAIL
  if (exit_code == 69) return FailureClass::kNotSent;            // EX_UNAVAILABLE
  return FailureClass::kRejectedPermanent;
}

TemplateParse ParseTemplate(std::string_view element) {
  TemplateParse parse;
  for (size_t i = 0; i < element.size(); ++i) {
    const char c = element[i];
    if (c == '}') {
      if (i + 1 < element.size() && element[i + 1] == '}') {
        ++i;
        continue;
      }
      parse.problem = "a lone '}' (write \"}}\" for a literal brace)";
      return parse;
    }
    if (c != '{') continue;
    if (i + 1 < element.size() && element[i + 1] == '{') {
      ++i;
      continue;
    }
    const size_t close = element.find('}', i + 1);
    if (close == std::string_view::npos) {
      parse.problem = "an unclosed '{' (write \"{{\" for a literal brace)";
      return parse;
    }
    const std::string_view name = element.substr(i + 1, close - i - 1);
    const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
    });
    if (!valid) {
      parse.problem = "\"{" + std::string(name) + "}\" is not a reference to an argument name";
      return parse;
    }
    parse.refs.emplace_back(name);
    i = close;
  }
  return parse;
}

std::optional<std::vector<std::string>> ExpandArgv(const std::vector<std::string>& argv,
                                                   const Json& values, std::string* problem) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& element : argv) {
    std::string expanded;
    for (size_t i = 0; i < element.size(); ++i) {
      const char c = element[i];
      if ((c == '{' || c == '}') && i + 1 < element.size() && element[i + 1] == c) {
        expanded += c;
        ++i;
        continue;
      }
      if (c != '{') {
        expanded += c;
        continue;
      }
      const size_t close = element.find('}', i + 1);
      if (close == std::string::npos) {
        *problem = "an unclosed '{' in \"" + element + "\"";
        return std::nullopt;
      }
      const std::string name = element.substr(i + 1, close - i - 1);
      const auto it = values.is_object() ? values.find(name) : values.end();
      if (it == values.end()) {
        *problem = "no value for {" + name + "}";
        return std::nullopt;
      }
      const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
      if (text.find('\0') != std::string::npos) {
        *problem = "the value of {" + name +
                   "} contains a NUL character, which an argv "
                   "element cannot carry";
        return std::nullopt;
      }
      expanded += text;
      i = close;
    }
    out.push_back(std::move(expanded));
  }
  return out;
}

std::optional<CommandSpec> ReadRunSpec(ObjectReader& entry, const Json* input_schema,
                                       std::optional<EffectClass> effect) {
  const Json* object = entry.Object("run");
  if (object == nullptr) return std::nullopt;
  ObjectReader run = entry.Nested(*object, "run");
  const std::vector<std::string> required = RequiredOf(input_schema);
  const bool write = effect && IsWrite(*effect);
  return ReadCommandObject(
      run,
      [&](const std::string& ref) -> std::string {
        const bool required_argument =
            std::find(required.begin(), required.end(), ref) != required.end();
        if (ref == "idempotency_key" && (write || required_argument)) {
          // A write's key (it shadows an argument of that name); a read's own argument.
          return std::string();
        }
        if (ref == "idempotency_key") {
          return "{idempotency_key}: only a write tool has an idempotency key (a read may "
                 "name a required argument idempotency_key)";
        }
        if (!required_argument) {
          return "{" + ref +
                 "} must name a property listed in inputSchema's \"required\" (every "
                 "reference needs a value on every call)";
        }
        return std::string();
      },
      effect, true);
}

std::optional<CommandSpec> ReadCommandSpec(ObjectReader& entry, std::string_view field,
                                           const std::vector<std::string>& references,
                                           std::string_view described_as) {
  const Json* object = entry.Object(field);
  if (object == nullptr) return std::nullopt;
  ObjectReader run = entry.Nested(*object, field);
  std::string known;
  for (const std::string& name : references) known += (known.empty() ? "{" : ", {") + name + "}";
  return ReadCommandObject(
      run,
      [&](const std::string& ref) -> std::string {
        if (std::find(references.begin(), references.end(), ref) != references.end()) return {};
        return "{" + ref + "} is not " + std::string(described_as) + " (known: " + known + ")";
      },
      EffectClass::kRead, false);
}

}  // namespace keel
