#include "server/tools/command_result.h"

#include <string.h>

#include <string>
#include <string_view>

#include "protocol/bounded_json.h"
#include "protocol/schema_validator.h"
#include "server/policy/failure_classify.h"
#include "server/runtime/clock.h"

namespace keel {
namespace {

// stdout without trailing newlines (a command's last line usually has one).
std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// stdout as one JSON object, or null. Nesting is bounded (bounded_json.h): a command may
// print anything, and a value nested thousands deep would overflow the stack of whatever
// copies or encodes it next, so such output is never parsed; `*too_deep` tells that case.
Json ObjectOf(const std::string& text, bool truncated, bool* too_deep = nullptr) {
  if (too_deep != nullptr) *too_deep = false;
  if (truncated) return nullptr;
  BoundedJson parsed = ParseBoundedJson(text);
  if (too_deep != nullptr) *too_deep = parsed.problem == JsonProblem::kTooDeep;
  if (!parsed.value.is_object()) return nullptr;
  return std::move(parsed.value);
}

std::string WithMarker(std::string text, bool truncated, size_t cap) {
  if (truncated) text += (text.empty() ? "" : "\n") + TruncationMarker(cap);
  return text;
}

Json Failure(std::string text, Json error) { return ErrorResult(text, error); }

// The end of a failed run's stderr, at most spec.stderr_tail_bytes (stderrTail), starting at a
// line when the cut leaves one, else at a character; empty when the spec asks for none.
std::string StderrTail(const ProcessResult& run, const CommandSpec& spec) {
  if (spec.stderr_tail_bytes <= 0) return std::string();
  std::string_view text = run.stderr_data;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  const size_t cap = static_cast<size_t>(spec.stderr_tail_bytes);
  if (text.size() <= cap) return std::string(text);
  text = text.substr(text.size() - cap);
  if (const size_t line = text.find('\n');
      line != std::string_view::npos && line + 1 < text.size()) {
    text.remove_prefix(line + 1);
  } else {
    while (!text.empty() && (static_cast<unsigned char>(text.front()) & 0xC0) == 0x80) {
      text.remove_prefix(1);  // a UTF-8 continuation byte: the character began before the cut
    }
  }
  return "..." + std::string(text);
}

// `message` and `error` with the stderr tail, when there is one.
Json FailureWithStderr(std::string message, Json error, const ProcessResult& run,
                       const CommandSpec& spec) {
  const std::string tail = StderrTail(run, spec);
  if (!tail.empty()) {
    message += "\nIts stderr ends with:\n" + tail;
    error["stderr_tail"] = tail;
  }
  return Failure(std::move(message), std::move(error));
}

const char* ClassMeaning(FailureClass failure) {
  switch (failure) {
    case FailureClass::kNotSent:
      return "the command says it could not reach its backend: nothing was done";
    case FailureClass::kRejectedTransient:
      return "a temporary failure: nothing was done, and a retry may succeed";
    case FailureClass::kRejectedPermanent:
      return "a permanent failure";
    case FailureClass::kAmbiguous:
      return "the outcome is unknown: it may have taken effect";
  }
  return "";
}

// A failure the command described itself: {"error": {...}} on stdout.
Json ReportedFailure(const Json& object, const ProcessResult& run, const CommandSpec& spec,
                     const std::string& tool) {
  Json error = object.at("error");
  // Anything may be printed: a type or message that is not a string is ignored, never read
  // as one (nlohmann would throw).
  if (const auto type = error.find("type"); type == error.end() || !type->is_string()) {
    if (const auto status = error.find("status");
        status != error.end() && status->is_number_integer()) {
      error["type"] = "backend_" + std::to_string(status->get<int64_t>());
      const int64_t code = status->get<int64_t>();
      if (!error.contains("failure_class")) {
        if (code == 502) error["failure_class"] = "rejected_transient";
        if (code == 408 || code == 504) error["failure_class"] = "ambiguous";
      }
    } else {
      error["type"] = "command_error";
    }
  }
  error["exit_code"] = run.exit_code;
  // The exit status says more than a type keel does not know (a custom type, a 500): a
  // nonzero status that is not permanent keeps its class unless the error names one.
  if (!error.contains("failure_class") && run.exit_code != 0) {
    const FailureClass by_exit = ExitCodeClass(spec, run.exit_code);
    const auto by_type = ClassifyResult(ErrorResult("", error));
    if (by_exit != FailureClass::kRejectedPermanent && by_type &&
        by_type->failure == FailureClass::kRejectedPermanent) {
      error["failure_class"] = std::string(FailureClassName(by_exit));
    }
  }
  const auto message = error.find("message");
  std::string text =
      message != error.end() && message->is_string() ? message->get<std::string>() : std::string();
  if (text.empty()) {
    text = "The command for '" + tool + "' reported an error (" + error["type"].get<std::string>() +
           ").";
  }
  return Failure(text, error);
}

// exit 0: stdout is the result.
Json Success(const ProcessResult& run, const CommandSpec& spec, const Json& output_schema,
             const std::string& tool) {
  const std::string text = Trimmed(run.stdout_data);
  const size_t cap = static_cast<size_t>(spec.max_output_bytes);
  const bool must_be_json = spec.output == CommandOutput::kJson || !output_schema.is_null();
  if (spec.output == CommandOutput::kText && output_schema.is_null()) {
    return TextResult(WithMarker(text, run.stdout_truncated, cap));
  }
  bool too_deep = false;
  Json object = ObjectOf(text, run.stdout_truncated, &too_deep);
  if (object.is_null()) {
    if (!must_be_json) return TextResult(WithMarker(text, run.stdout_truncated, cap));
    const std::string why =
        run.stdout_truncated ? "its output was longer than the cap (" + std::to_string(cap) +
                                   " bytes), so it is not the JSON object this tool must return"
        : too_deep ? "its output is JSON " + JsonProblemText(JsonProblem::kTooDeep) +
                         ", more than keel reads, so it is not the JSON object this tool "
                         "must return"
                   : "its output is not one JSON object, which this tool must return";
    // It exited 0: whatever it did is done, so this is not retried (rejected_permanent).
    return Failure(
        "The command for '" + tool + "' succeeded, but " + why + ". Output:\n" +
            WithMarker(text.substr(0, 2000), text.size() > 2000, 2000),
        Json{
            {"type", "output_invalid"}, {"failure_class", "rejected_permanent"}, {"exit_code", 0}});
  }
  if (object.contains("error") && object["error"].is_object()) {
    return ReportedFailure(object, run, spec, tool);
  }
  if (!output_schema.is_null()) {
    if (auto problem = ValidateCheckedSchema(output_schema, object, "structuredContent")) {
      return Failure("The command for '" + tool +
                         "' succeeded, but its output does not match "
                         "the tool's outputSchema: " +
                         *problem,
                     Json{{"type", "output_invalid"},
                          {"failure_class", "rejected_permanent"},
                          {"exit_code", 0},
                          {"detail", *problem}});
    }
  }
  return StructuredResult(text, std::move(object));
}

}  // namespace

std::string TruncationMarker(size_t cap) {
  return "[keel: output cut at " + std::to_string(cap) +
         " bytes; the command wrote more (raise run.maxOutputBytes to keep more)]";
}

Json CommandResultOf(const ProcessResult& run, const CommandSpec& spec, const Json& output_schema,
                     const std::string& tool) {
  const int64_t elapsed = ToMillis(run.elapsed);
  switch (run.end) {
    case ProcessResult::End::kSpawnFailed:
      return Failure("keel could not start the command for '" + tool + "': " + run.spawn_error +
                         ". Nothing ran; check run.command and run.cwd in the catalog.",
                     Json{{"type", "command_not_started"},
                          {"failure_class", "rejected_permanent"},
                          {"effect", "none"},
                          {"detail", run.spawn_error}});
    case ProcessResult::End::kTimedOut:
      return Failure("The command for '" + tool + "' did not finish within the attempt's time (" +
                         std::to_string(elapsed) +
                         " ms) and was stopped; it may have taken "
                         "effect.",
                     Json{{"type", "attempt_timeout"},
                          {"layer", "attempt"},
                          {"elapsed_ms", elapsed},
                          {"failure_class", "ambiguous"}});
    case ProcessResult::End::kCancelled:
      return Failure("The command for '" + tool +
                         "' was stopped because the call was cancelled; "
                         "it may have taken effect.",
                     Json{{"type", "command_cancelled"},
                          {"failure_class", "ambiguous"},
                          {"elapsed_ms", elapsed}});
    case ProcessResult::End::kSignaled: {
      const char* name = strsignal(run.signal);
      return FailureWithStderr(
          "The command for '" + tool + "' was killed by signal " + std::to_string(run.signal) +
              " (" + (name ? name : "?") + "); it may have taken effect.",
          Json{{"type", "command_killed"}, {"failure_class", "ambiguous"}, {"signal", run.signal}},
          run, spec);
    }
    case ProcessResult::End::kExited:
      break;
  }
  if (run.exit_code == 0) return Success(run, spec, output_schema, tool);
  const std::string text = Trimmed(run.stdout_data);
  const Json object = ObjectOf(text, run.stdout_truncated);
  if (object.is_object() && object.contains("error") && object["error"].is_object()) {
    return ReportedFailure(object, run, spec, tool);
  }
  const FailureClass failure = ExitCodeClass(spec, run.exit_code);
  const char* type = run.exit_code == 75   ? "command_tempfail"
                     : run.exit_code == 69 ? "command_unavailable"
                                           : "command_failed";
  std::string message = "The command for '" + tool + "' exited with status " +
                        std::to_string(run.exit_code) + ": " + ClassMeaning(failure) + ".";
  if (!text.empty()) {
    message += " Output:\n" +
               WithMarker(text, run.stdout_truncated, static_cast<size_t>(spec.max_output_bytes));
  }
  return FailureWithStderr(message,
                           Json{{"type", type},
                                {"failure_class", std::string(FailureClassName(failure))},
                                {"exit_code", run.exit_code}},
                           run, spec);
}

std::optional<ProgressLine> ProgressLineOf(std::string_view line) {
  const Json parsed = ParseBoundedJson(line).value;
  if (parsed.is_number()) return ProgressLine{parsed.get<double>(), std::nullopt, ""};
  if (!parsed.is_object()) return std::nullopt;
  const auto progress = parsed.find("progress");
  if (progress == parsed.end() || !progress->is_number()) return std::nullopt;
  ProgressLine line_read{progress->get<double>(), std::nullopt, ""};
  if (const auto t = parsed.find("total"); t != parsed.end() && t->is_number()) {
    line_read.total = t->get<double>();
  }
  if (const auto m = parsed.find("message"); m != parsed.end() && m->is_string()) {
    line_read.message = m->get<std::string>();
  }
  return line_read;
}

Reconciled LookupResultOf(const ProcessResult& run, const Json& output_schema, std::string* why) {
  Reconciled found;
  if (run.end != ProcessResult::End::kExited || run.exit_code != 0) {
    *why = run.end == ProcessResult::End::kExited
               ? "it exited with status " + std::to_string(run.exit_code)
           : run.end == ProcessResult::End::kSpawnFailed ? "it could not start: " + run.spawn_error
                                                         : "it did not finish";
    return found;
  }
  bool too_deep = false;
  const Json object = ObjectOf(Trimmed(run.stdout_data), run.stdout_truncated, &too_deep);
  const auto happened = object.is_object() ? object.find("happened") : object.end();
  if (!object.is_object() || happened == object.end() || !happened->is_boolean()) {
    *why = too_deep ? "its output is JSON " + JsonProblemText(JsonProblem::kTooDeep)
                    : "its output is not {\"happened\": true|false, ...}";
    return found;
  }
  if (!happened->get<bool>()) {
    found.outcome = Reconciled::Outcome::kDidNotHappen;
    return found;
  }
  found.outcome = Reconciled::Outcome::kHappened;
  const auto result = object.find("result");
  if (result == object.end() || result->is_null()) {
    found.result = TextResult(
        "It happened (found by a lookup of its idempotency key); the "
        "lookup gave no result.");
  } else if (result->is_object() &&
             (output_schema.is_null() ||
              !ValidateCheckedSchema(output_schema, *result, "structuredContent"))) {
    found.result = StructuredResult(result->dump(), *result);
  } else {
    found.result = TextResult(result->is_string() ? result->get<std::string>() : result->dump());
  }
  return found;
}

}  // namespace keel
