// CommandSpec: how a catalog entry's `run` field (docs/catalog.md "Command-backed
// tools") says to run a tool as a child process, and the argv template it uses.
//
// The template language (argv elements, never a shell string): "{name}" is replaced by the
// value of argument `name` (a string verbatim; any other JSON value as its compact JSON
// text), "{idempotency_key}" by the call's idempotency key, "{{" and "}}" by literal braces.
// A reference may sit inside a longer element ("--job={job_id}"). Whatever a value holds
// (spaces, quotes, `;`, `$(...)`), it stays inside its one argv element: no shell ever sees it.
//
// Invariants of a parsed CommandSpec (ReadRunSpec reports every violation, naming the field):
//  1. command and lookup.command are non-empty arrays of strings without NUL characters whose
//     templates parse; command[0] and lookup.command[0] contain no reference;
//  2. every reference in `command` names a property listed in inputSchema's `required` (so it
//     always has a value), or is idempotency_key on a write tool (the call's key, which
//     shadows an argument of that name); `lookup.command` may
//     reference idempotency_key only (at start-up the arguments are not known, only the key);
//  3. lookup only on write tools;
//  4. exit_codes maps codes 1..255 only (0 is always success);
//  5. env.pass names and env.set names match ^[A-Za-z_][A-Za-z0-9_]*$ and do not start with
//     KEEL_ (keel's own variables cannot be overridden); env.set values have no NUL.
// Thread-safety: pure functions and plain data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/catalog/object_reader.h"
#include "server/policy/policy_types.h"

namespace keel {

using Json = nlohmann::json;

// The names keel passes through from its own environment when `env.pass` is absent.
const std::vector<std::string>& DefaultPassedEnvironment();

// What to make of a command's stdout.
enum class CommandOutput {
  kAuto,  // a JSON object becomes structuredContent (and its text); anything else is text
  kText,  // always one text block
  kJson,  // must be a JSON object (else the call fails with output_invalid)
};

struct CommandLookup {
  std::vector<std::string> argv;  // template; only {idempotency_key} may be referenced
  int64_t timeout_ms = 10000;
};

struct CommandSpec {
  std::vector<std::string> argv;  // template
  std::string cwd;  // as written; LoadCatalogFile makes it absolute (default: catalog's dir)
  std::vector<std::string> env_pass = DefaultPassedEnvironment();
  std::map<std::string, std::string> env_set;
  CommandOutput output = CommandOutput::kAuto;
  std::map<int, FailureClass> exit_codes;  // over the defaults of ExitCodeClass
  int64_t kill_grace_ms = 2000;
  int64_t max_output_bytes = 1 << 20;  // stdout and stderr each
  // stderrTail: at most this many bytes from the end of a failed run's stderr go into its
  // error text and structuredContent.error.stderr_tail (a nonzero exit or a signal); 0: none,
  // stderr is only logged (it may hold what an agent should not see).
  int64_t stderr_tail_bytes = 0;
  std::optional<CommandLookup> lookup;
};

// Limits of the numeric fields.
constexpr int64_t kMaxKillGraceMs = 60000;
constexpr int64_t kMaxCommandOutputBytes = 8 << 20;  // a result line stays under 10 MiB
constexpr int64_t kMaxLookupTimeoutMs = 600000;
constexpr int64_t kMaxStderrTailBytes = 65536;

// The failure class of a nonzero exit status: the spec's mapping, else the defaults 75
// (EX_TEMPFAIL) rejected_transient, 69 (EX_UNAVAILABLE) not_sent, anything else
// rejected_permanent.
FailureClass ExitCodeClass(const CommandSpec& spec, int exit_code);

// Reads `run` of a catalog entry. `input_schema` may be null or malformed (its own problems
// are reported elsewhere); `effect` is nullopt when the entry's effect is invalid.
std::optional<CommandSpec> ReadRunSpec(ObjectReader& entry, const Json* input_schema,
                                       std::optional<EffectClass> effect);

// Reads a command object at `field` of `entry` (a resource template's `run`, a completion's
// `complete`): the fields of `run` except `lookup`, with the same invariants except 2 and 3:
// every argv reference must be one of `references`; `described_as` names them in a problem
// ("a variable of uriTemplate"). Absent: nullopt, no problem.
std::optional<CommandSpec> ReadCommandSpec(ObjectReader& entry, std::string_view field,
                                           const std::vector<std::string>& references,
                                           std::string_view described_as);

// The references of one template element, in order ("{a}-{b}" -> a, b), or a problem.
struct TemplateParse {
  std::vector<std::string> refs;
  std::string problem;  // empty when the element parses
};
TemplateParse ParseTemplate(std::string_view element);

// Expands a template. `values` maps a reference to its value (arguments, plus
// "idempotency_key" when the call has one). Fails (returns nullopt, *problem set) when a
// reference has no value or a value holds a NUL character (argv cannot carry one).
std::optional<std::vector<std::string>> ExpandArgv(const std::vector<std::string>& argv,
                                                   const Json& values, std::string* problem);

}  // namespace keel
