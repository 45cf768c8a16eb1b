#include "server/app/usage_error.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace keel {

namespace {

// Every option of `app` and of its subcommands, at every depth.
std::vector<const CLI::Option*> AllOptions(const CLI::App& app) {
  std::vector<const CLI::Option*> options = app.get_options();
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::vector<const CLI::Option*> more = AllOptions(*sub);
    options.insert(options.end(), more.begin(), more.end());
  }
  return options;
}

// The known flag nearest to `unknown`, or empty when none is near enough to be a typo.
std::string Nearest(const CLI::App& app, const std::string& unknown) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : AllOptions(app)) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  }
  std::string best;
  size_t best_distance = 0;
  for (const std::string& flag : flags) {
    size_t distance = FlagDistance(unknown, flag);
    // A flag cut short ("--max-in") is as near as a one-letter typo.
    if (unknown.size() >= 5 && flag.rfind(unknown, 0) == 0)
      distance = std::min<size_t>(distance, 1);
    if (best.empty() || distance < best_distance) {
      best = flag;
      best_distance = distance;
    }
  }
  const size_t allowed = unknown.size() <= 6 ? 1 : 2;
  return best_distance <= allowed ? best : std::string();
}

std::string ExtrasText(const CLI::App& app, const std::vector<std::string>& extras) {
  std::string text;
  bool after_unknown_flag = false;
  for (const std::string& arg : extras) {
    if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
      const std::string name = arg.substr(0, arg.find('='));
      const std::string nearest = Nearest(app, name);
      text += "keel: unknown flag " + name;
      if (!nearest.empty()) text += " (did you mean " + nearest + "?)";
      text += "\n";
      after_unknown_flag = arg.find('=') == std::string::npos;
      continue;
    }
    if (after_unknown_flag) {
      after_unknown_flag = false;  // most likely the unknown flag's value
      continue;
    }
    text += "keel: unexpected argument " + arg + "\n";
  }
  return text;
}

// "--workers: Value abc not in range 0 to 1024" -> the option named at its start, if any.
const CLI::Option* OptionNamedIn(const CLI::App& app, const std::string& message) {
  if (message.rfind("--", 0) != 0) return nullptr;
  const size_t end = message.find_first_of(": ");
  const std::string name = message.substr(0, end);
  for (const CLI::Option* option : AllOptions(app)) {
    for (const std::string& lname : option->get_lnames()) {
      if ("--" + lname == name) return option;
    }
  }
  return nullptr;
}

bool OnCommandLine(const CLI::Option& option, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    for (const std::string& lname : option.get_lnames()) {
      const std::string flag = "--" + lname;
      if (arg == flag || arg.rfind(flag + "=", 0) == 0) return true;
    }
    for (const std::string& sname : option.get_snames()) {
      if (arg.rfind("-" + sname, 0) == 0) return true;
    }
  }
  return false;
}

// The deepest subcommand the parse entered (`app` itself when none).
const CLI::App& DeepestParsed(const CLI::App& app) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  return parsed.empty() ? app : DeepestParsed(*parsed.front());
}

// "keel: unknown command catlog (did you mean catalog?)" when the first word left over is
// where a subcommand of `parent` was expected: at the top before any subcommand, or after a
// command that needs one ("keel trace sumary"); "keel: trace needs a command: summary" when
// that word is missing. Empty otherwise.
std::string UnknownCommandText(const CLI::App& app) {
  const CLI::App& parent = DeepestParsed(app);
  const bool expects_command = &parent == &app || parent.get_require_subcommand_min() > 0;
  std::vector<std::string> names;
  for (const CLI::App* sub : parent.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  if (&parent == &app) names.emplace_back("wrap");  // taken out before CLI11 parses
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  const std::vector<std::string> remaining = app.remaining(true);
  if (expects_command && &parent != &app && remaining.empty()) {
    return "keel: " + parent.get_name() + " needs a command: " + list + "\n";
  }
  if (!expects_command || remaining.empty() || remaining.front().rfind('-', 0) == 0) {
    return std::string();
  }
  const std::string& word = remaining.front();
  std::string best;
  size_t best_distance = 0;
  for (const std::string& name : names) {
    const size_t distance = FlagDistance(word, name);
    if (best.empty() || distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  std::string prefix = parent.get_name() == app.get_name() ? "" : parent.get_name() + " ";
  std::string text = "keel: unknown command " + prefix + word;
  if (!best.empty() && best_distance <= (word.size() <= 4 ? 1U : 2U)) {
    text += " (did you mean " + prefix + best + "?)";
  } else {
    text += " (commands: " + list + ")";
  }
  return text + "\n";
}

}  // namespace

size_t FlagDistance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance, two rows of the classic table plus the one before.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before = previous;
    previous = current;
  }
  return previous[b.size()];
}

std::string UsageErrorText(const CLI::App& app, const CLI::ParseError& error, int argc,
                           const char* const* argv) {
  const std::string more = "Run with --help for more information.\n";
  if (const std::string command = UnknownCommandText(app); !command.empty()) {
    return command + more;
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    const std::string text = ExtrasText(app, app.remaining(true));
    if (!text.empty()) return text + more;
  }
  std::string text = "keel: " + std::string(error.what());
  const CLI::Option* option = OptionNamedIn(app, error.what());
  if (option != nullptr && !option->get_envname().empty() && !OnCommandLine(*option, argc, argv)) {
    const char* value = std::getenv(option->get_envname().c_str());
    if (value != nullptr) text += " (from the environment variable " + option->get_envname() + ")";
  }
  return text + "\n" + more;
}

}  // namespace keel
