// Unit tests for server/app/cli_options.h: flags, KEEL_* environment and the --config TOML file.
// Precedence: command line > KEEL_* environment > --config file > built-in default.
// Exit codes (sysexits.h): 0 help/version, 64 bad usage, 66 config file missing, 78 bad config.
#include "server/app/cli_options.h"

#include <stdlib.h>

#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "server/app/usage_error.h"

namespace cli_options_test {

namespace {

using keel::CliParse;

// Every KEEL_* variable keel reads. Unset for the scope of a test and restored afterwards,
// so the developer's environment cannot leak in and the tests cannot leak out.
class CleanKeelEnv {
 public:
  CleanKeelEnv() {
    for (const char* name :
         {"KEEL_CONFIG", "KEEL_WORKERS", "KEEL_MAX_INFLIGHT", "KEEL_MAX_LINE_BYTES",
          "KEEL_SHUTDOWN_GRACE", "KEEL_PAGE_SIZE", "KEEL_LOG_LEVEL", "KEEL_LOG_FILE",
          "KEEL_TEST_TOOLS", "KEEL_CONFORMANCE_FIXTURES", "KEEL_CLIENT_LOG_LEVEL",
          "KEEL_IDLE_TIMEOUT", "KEEL_MAX_TIMEOUT", "XDG_CONFIG_HOME"}) {
      const char* value = getenv(name);
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
      unsetenv(name);
    }
    // No default config file of the developer's (~/.config/keel/config.toml) leaks in.
    setenv("XDG_CONFIG_HOME", "/nonexistent/keel-test-config", 1);
  }
  ~CleanKeelEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  CleanKeelEnv(const CleanKeelEnv&) = delete;
  CleanKeelEnv& operator=(const CleanKeelEnv&) = delete;

  void Set(const char* name, const char* value) { setenv(name, value, 1); }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Parses `keel <args...>`.
CliParse Parse(std::initializer_list<std::string> args) {
  std::vector<std::string> storage{"keel"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& a : storage) argv.push_back(a.c_str());
  return keel::ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

// Catch cannot print std::optional; -1 stands for "keep running".
int ExitCode(const CliParse& parse) { return parse.exit_code.value_or(-1); }

}  // namespace

TEST_CASE("without arguments every setting has its documented default") {
  CleanKeelEnv env;
  const CliParse parse = Parse({});
  CHECK(ExitCode(parse) == -1);
  const keel::CliOptions& o = parse.options;
  CHECK(o.max_inflight == 256);
  CHECK(o.max_line_bytes == 16u * 1024 * 1024);
  CHECK(o.shutdown_grace_ms == 1500);
  CHECK(o.page_size == 100);
  CHECK(o.log_level == "warn");
  CHECK(o.log_file.empty());
  CHECK(o.config_file.empty());
  CHECK_FALSE(o.test_tools);
  CHECK_FALSE(o.conformance_fixtures);
  CHECK(o.client_log_level.empty());
  CHECK(o.workers >= 2);  // 0 means hardware threads, at least 2
}

TEST_CASE("db-connections defaults to workers + 2, at most 16 on PostgreSQL, and a set value stays",
          "[DIST-3]") {
  CleanKeelEnv env;
  CHECK(Parse({"--workers", "4"}).options.db_connections == 6);
  CHECK(Parse({"--workers", "64", "--db", "/tmp/k.db"}).options.db_connections == 66);
  CHECK(Parse({"--workers", "64", "--db", "postgresql://keel@127.0.0.1/keel"})
            .options.db_connections == keel::kDefaultPostgresConnections);
  CHECK(Parse({"--workers", "4", "--db", "postgres://127.0.0.1/keel"}).options.db_connections == 6);
  CHECK(Parse({"--workers", "64", "--db-connections", "40", "--db", "postgresql:///keel"})
            .options.db_connections == 40);
  CHECK(Parse({"--db-connections", "1"}).options.db_connections == 1);
  CHECK(ExitCode(Parse({"--db-connections", "1025"})) != -1);
}

TEST_CASE("workers 0 becomes the hardware thread count but at least 2, other values stay") {
  CleanKeelEnv env;
  const CliParse zero = Parse({"--workers", "0"});
  CHECK(ExitCode(zero) == -1);
  CHECK(zero.options.workers >= 2);
  CHECK(zero.options.workers == Parse({}).options.workers);
  CHECK(Parse({"--workers", "1"}).options.workers == 1);
  CHECK(Parse({"--workers", "1024"}).options.workers == 1024);
}

TEST_CASE("every flag parses into its option") {
  CleanKeelEnv env;
  const CliParse parse = Parse({"--workers", "4", "--max-inflight", "10", "--max-line-bytes",
                                "2048", "--shutdown-grace", "0", "--page-size", "5", "--log-level",
                                "debug", "--log-file", "/tmp/keel.log", "--test-tools"});
  REQUIRE(ExitCode(parse) == -1);
  const keel::CliOptions& o = parse.options;
  CHECK(o.workers == 4);
  CHECK(o.max_inflight == 10);
  CHECK(o.max_line_bytes == 2048);
  CHECK(o.shutdown_grace_ms == 0);
  CHECK(o.page_size == 5);
  CHECK(o.log_level == "debug");
  CHECK(o.log_file == "/tmp/keel.log");
  CHECK(o.test_tools);
  CHECK(Parse({"--workers=3"}).options.workers == 3);
}

TEST_CASE("conformance fixtures and a client log level before setLevel are opt-in flags") {
  CleanKeelEnv env;
  const CliParse parse = Parse({"--conformance-fixtures", "--client-log-level", "debug"});
  REQUIRE(ExitCode(parse) == -1);
  CHECK(parse.options.conformance_fixtures);
  CHECK(parse.options.client_log_level == "debug");
  // MCP's level names, not the process log's.
  CHECK(ExitCode(Parse({"--client-log-level", "emergency"})) == -1);
  CHECK(ExitCode(Parse({"--client-log-level", "warn"})) == 64);
  env.Set("KEEL_CONFORMANCE_FIXTURES", "true");
  env.Set("KEEL_CLIENT_LOG_LEVEL", "info");
  CHECK(Parse({}).options.conformance_fixtures);
  CHECK(Parse({}).options.client_log_level == "info");
}

TEST_CASE("an unknown flag or a stray argument is bad usage, exit 64") {
  CleanKeelEnv env;
  CHECK(ExitCode(Parse({"--no-such-flag"})) == 64);
  CHECK(ExitCode(Parse({"--workers", "2", "--bogus=1"})) == 64);
  CHECK(ExitCode(Parse({"stray"})) == 64);
  CHECK(ExitCode(Parse({"--workers"})) == 64);  // missing value
}

TEST_CASE("an empty --db is bad usage (exit 64) and never the default database") {
  CleanKeelEnv env;
  CHECK(ExitCode(Parse({"--db", ""})) == 64);
  CHECK(ExitCode(Parse({"--db="})) == 64);
  keel::TempDir dir;
  CHECK(ExitCode(Parse({"--config", dir.Write("db.toml", "db = \"\"\n")})) == 78);
  // An empty KEEL_DB is an unset one (as an empty XDG_DATA_HOME is for the default path):
  // `KEEL_DB= keel` is how a shell clears it.
  const char* saved = getenv("KEEL_DB");
  const std::optional<std::string> restore =
      saved ? std::optional<std::string>(saved) : std::nullopt;
  setenv("KEEL_DB", "", 1);
  const CliParse parse = Parse({});
  if (restore) {
    setenv("KEEL_DB", restore->c_str(), 1);
  } else {
    unsetenv("KEEL_DB");
  }
  CHECK(ExitCode(parse) == -1);
  CHECK(parse.options.db_path.empty());
}

TEST_CASE("an out-of-range or malformed flag value is bad usage, exit 64") {
  CleanKeelEnv env;
  const std::vector<std::vector<std::string>> cases = {
      {"--workers", "1025"},      {"--workers", "-1"},          {"--workers", "many"},
      {"--max-inflight", "0"},    {"--max-line-bytes", "1023"}, {"--shutdown-grace", "600001"},
      {"--shutdown-grace", "-5"}, {"--page-size", "0"},         {"--page-size", "10001"},
      {"--log-level", "loud"},
  };
  for (const auto& c : cases) {
    INFO(c[0] << " " << c[1]);
    CHECK(ExitCode(Parse({c[0], c[1]})) == 64);
  }
}

TEST_CASE("asking for --help or --version exits 0") {
  CleanKeelEnv env;
  CHECK(ExitCode(Parse({"--help"})) == 0);
  CHECK(ExitCode(Parse({"-h"})) == 0);
  CHECK(ExitCode(Parse({"--version"})) == 0);
}

TEST_CASE("a KEEL_* environment variable overrides the default and is validated") {
  CleanKeelEnv env;
  env.Set("KEEL_WORKERS", "5");
  env.Set("KEEL_LOG_LEVEL", "error");
  const CliParse parse = Parse({});
  REQUIRE(ExitCode(parse) == -1);
  CHECK(parse.options.workers == 5);
  CHECK(parse.options.log_level == "error");
  env.Set("KEEL_MAX_INFLIGHT", "0");
  CHECK(ExitCode(Parse({})) == 64);
}

TEST_CASE("a config file alone sets the options it names") {
  CleanKeelEnv env;
  keel::TempDir dir;
  const std::string file = dir.Write("keel.toml", "workers = 3\nlog-level = \"info\"\n");
  const CliParse parse = Parse({"--config", file});
  REQUIRE(ExitCode(parse) == -1);
  CHECK(parse.options.workers == 3);
  CHECK(parse.options.log_level == "info");
  CHECK(parse.options.max_inflight == 256);  // unnamed settings keep their defaults
  CHECK(parse.options.config_file == file);
}

TEST_CASE("the environment beats the config file") {
  CleanKeelEnv env;
  keel::TempDir dir;
  const std::string file = dir.Write("keel.toml", "workers = 3\npage-size = 7\n");
  env.Set("KEEL_WORKERS", "5");
  const CliParse parse = Parse({"--config", file});
  REQUIRE(ExitCode(parse) == -1);
  CHECK(parse.options.workers == 5);
  CHECK(parse.options.page_size == 7);  // still from the file
}

TEST_CASE("the command line beats both the environment and the config file") {
  CleanKeelEnv env;
  keel::TempDir dir;
  const std::string file = dir.Write("keel.toml", "workers = 3\nmax-inflight = 11\n");
  const CliParse flag_over_file = Parse({"--config", file, "--workers", "9"});
  REQUIRE(ExitCode(flag_over_file) == -1);
  CHECK(flag_over_file.options.workers == 9);
  CHECK(flag_over_file.options.max_inflight == 11);

  env.Set("KEEL_WORKERS", "5");
  const CliParse flag_over_env = Parse({"--workers", "7", "--config", file});
  REQUIRE(ExitCode(flag_over_env) == -1);
  CHECK(flag_over_env.options.workers == 7);
}

TEST_CASE("KEEL_CONFIG names the config file like --config") {
  CleanKeelEnv env;
  keel::TempDir dir;
  env.Set("KEEL_CONFIG", dir.Write("keel.toml", "page-size = 42\n").c_str());
  const CliParse parse = Parse({});
  REQUIRE(ExitCode(parse) == -1);
  CHECK(parse.options.page_size == 42);
}

TEST_CASE("config keys may use underscores instead of dashes") {
  CleanKeelEnv env;
  keel::TempDir dir;
  const std::string file =
      dir.Write("keel.toml",
                "max_inflight = 12\nmax_line_bytes = 4096\nshutdown_grace = 250\n"
                "log_level = \"debug\"\ntest_tools = true\n");
  const CliParse parse = Parse({"--config", file});
  REQUIRE(ExitCode(parse) == -1);
  CHECK(parse.options.max_inflight == 12);
  CHECK(parse.options.max_line_bytes == 4096);
  CHECK(parse.options.shutdown_grace_ms == 250);
  CHECK(parse.options.log_level == "debug");
  CHECK(parse.options.test_tools);
}

TEST_CASE("a config file with an unknown key is a configuration error, exit 78") {
  CleanKeelEnv env;
  keel::TempDir dir;
  CHECK(ExitCode(Parse({"--config", dir.Write("a.toml", "workers = 3\nfrobnicate = 1\n")})) == 78);
  CHECK(ExitCode(Parse({"--config", dir.Write("b.toml", "[server]\nworkers = 3\n")})) == 78);
  CHECK(ExitCode(Parse({"--config", dir.Write("c.toml", "config = \"other.toml\"\n")})) == 78);
  CHECK(ExitCode(Parse({"--config", dir.Write("d.toml", "help = true\n")})) == 78);
}

TEST_CASE("a missing config file exits 66") {
  CleanKeelEnv env;
  keel::TempDir dir;
  CHECK(ExitCode(Parse({"--config", dir.File("absent.toml")})) == 66);
  env.Set("KEEL_CONFIG", dir.File("also_absent.toml").c_str());
  CHECK(ExitCode(Parse({})) == 66);
}

TEST_CASE("a config path that names a directory exits 66, not read as an empty file") {
  CleanKeelEnv env;
  keel::TempDir dir;
  CHECK(ExitCode(Parse({"--config", dir.path()})) == 66);
  env.Set("KEEL_CONFIG", dir.path().c_str());
  CHECK(ExitCode(Parse({})) == 66);
}

TEST_CASE("a config value of the wrong type or out of range is a configuration error, exit 78") {
  CleanKeelEnv env;
  keel::TempDir dir;
  CHECK(ExitCode(Parse({"--config", dir.Write("a.toml", "workers = \"many\"\n")})) == 78);
  CHECK(ExitCode(Parse({"--config", dir.Write("b.toml", "workers = 5000\n")})) == 78);
  CHECK(ExitCode(Parse({"--config", dir.Write("c.toml", "log-level = \"loud\"\n")})) == 78);
  CHECK(ExitCode(Parse({"--config", dir.Write("d.toml", "max-inflight = 0\n")})) == 78);
}

// TMO-1: a default follows the value the user set; only two values the user set
// (flag, KEEL_* variable or config file, in any mix) can conflict.
TEST_CASE("a max timeout below the default idle timeout lowers the idle timeout to it") {
  CleanKeelEnv env;
  keel::TempDir dir;
  const CliParse flag = Parse({"--max-timeout", "10000"});
  REQUIRE(ExitCode(flag) == -1);
  CHECK(flag.options.max_timeout_ms == 10000);
  CHECK(flag.options.idle_timeout_ms == 10000);
  const CliParse file = Parse({"--config", dir.Write("keel.toml", "max-timeout = 2000\n")});
  REQUIRE(ExitCode(file) == -1);
  CHECK(file.options.idle_timeout_ms == 2000);
  env.Set("KEEL_MAX_TIMEOUT", "5000");
  const CliParse variable = Parse({});
  REQUIRE(ExitCode(variable) == -1);
  CHECK(variable.options.max_timeout_ms == 5000);
  CHECK(variable.options.idle_timeout_ms == 5000);
}

TEST_CASE("an idle timeout above the default max timeout raises the max timeout to it") {
  CleanKeelEnv env;
  const CliParse flag = Parse({"--idle-timeout", "70000"});
  REQUIRE(ExitCode(flag) == -1);
  CHECK(flag.options.idle_timeout_ms == 70000);
  CHECK(flag.options.max_timeout_ms == 70000);
  // Below the default max nothing moves.
  CHECK(Parse({"--idle-timeout", "1000"}).options.max_timeout_ms == 55000);
  CHECK(Parse({"--max-timeout", "60000"}).options.idle_timeout_ms == 30000);
}

TEST_CASE(
    "an idle timeout above a max timeout is bad usage (exit 64) only when the user set both") {
  CleanKeelEnv env;
  keel::TempDir dir;
  CHECK(ExitCode(Parse({"--idle-timeout", "2000", "--max-timeout", "1000"})) == 64);
  CHECK(ExitCode(Parse(
            {"--config", dir.Write("a.toml", "idle-timeout = 2000\nmax-timeout = 1000\n")})) == 64);
  env.Set("KEEL_MAX_TIMEOUT", "1000");
  CHECK(ExitCode(Parse({"--idle-timeout", "2000"})) == 64);
  CHECK(ExitCode(Parse({"--config", dir.Write("b.toml", "idle-timeout = 2000\n")})) == 64);
  CHECK(ExitCode(Parse({"--idle-timeout", "1000"})) == -1);  // equal is fine
}

TEST_CASE("keel call takes the tool, its JSON arguments and serve flags on either side") {
  const CleanKeelEnv env;
  const CliParse parse = Parse(
      {"--workers", "3", "call", "--catalog", "tools.json", "date", "{\"tz\": \"UTC\"}", "--json"});
  REQUIRE(ExitCode(parse) == -1);
  CHECK(parse.options.call);
  CHECK(parse.options.call_tool == "date");
  CHECK(parse.options.call_arguments == "{\"tz\": \"UTC\"}");
  CHECK(parse.options.call_json);
  CHECK(parse.options.catalog_file == "tools.json");
  CHECK(parse.options.workers == 3);
  const CliParse bare = Parse({"call", "echo"});
  CHECK(bare.options.call_arguments == "{}");
  CHECK(ExitCode(Parse({"call"})) == 64);
}

TEST_CASE(
    "the config file under XDG_CONFIG_HOME is read when present, and --config empty reads none") {
  CleanKeelEnv env;
  keel::TempDir dir;
  env.Set("XDG_CONFIG_HOME", dir.path().c_str());
  CHECK(Parse({}).options.workers != 7);
  std::filesystem::create_directories(dir.File("keel"));
  dir.Write("keel/config.toml", "workers = 7\n");
  CHECK(Parse({}).options.workers == 7);
  CHECK(Parse({"--workers", "5"}).options.workers == 5);
  CHECK(Parse({"--config", ""}).options.workers != 7);
  env.Set("KEEL_CONFIG", "");
  CHECK(Parse({}).options.workers != 7);
}

}  // namespace cli_options_test

namespace cli_usage_errors_test {

namespace {

using cli_options_test::CleanKeelEnv;

// What ParseCommandLine wrote to std::cerr while parsing `keel <args...>`, and its exit code.
std::pair<int, std::string> ParseErr(std::initializer_list<std::string> args) {
  std::vector<std::string> storage{"keel"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& a : storage) argv.push_back(a.c_str());
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  const keel::CliParse parse = keel::ParseCommandLine(static_cast<int>(argv.size()), argv.data());
  std::cerr.rdbuf(saved);
  return {parse.exit_code.value_or(-1), captured.str()};
}

}  // namespace

TEST_CASE(
    "a misspelt flag is named with the nearest known one, and its value is not a second error") {
  CleanKeelEnv env;
  const auto [code, err] = ParseErr({"--catlog", "x.json"});
  CHECK(code == 64);
  CHECK(err.find("keel: unknown flag --catlog (did you mean --catalog?)") != std::string::npos);
  CHECK(err.find("x.json") == std::string::npos);
  CHECK(err.find("Run with --help for more information.") != std::string::npos);
}

TEST_CASE("a misspelt flag given with = gets the suggestion too") {
  CleanKeelEnv env;
  const auto [code, err] = ParseErr({"--max-inflihgt=8"});
  CHECK(code == 64);
  CHECK(err.find("unknown flag --max-inflihgt (did you mean --max-inflight?)") !=
        std::string::npos);
}

TEST_CASE("a flag near no known one gets no suggestion, and a stray argument is named") {
  CleanKeelEnv env;
  auto [code, err] = ParseErr({"--zzzzzzzzzz"});
  CHECK(code == 64);
  CHECK(err.find("keel: unknown flag --zzzzzzzzzz\n") != std::string::npos);
  std::tie(code, err) = ParseErr({"policy", "check", "p.json", "stray"});
  CHECK(code == 64);
  CHECK(err.find("keel: unexpected argument stray") != std::string::npos);
}

TEST_CASE("a misspelt command is named with the nearest known one, at the top or under another") {
  CleanKeelEnv env;
  auto [code, err] = ParseErr({"catlog", "check", "x.json"});
  CHECK(code == 64);
  CHECK(err ==
        "keel: unknown command catlog (did you mean catalog?)\n"
        "Run with --help for more information.\n");
  std::tie(code, err) = ParseErr({"trace", "sumary", "t.jsonl"});
  CHECK(err.find("keel: unknown command trace sumary (did you mean trace summary?)") !=
        std::string::npos);
  std::tie(code, err) = ParseErr({"wrpa"});
  CHECK(err.find("(did you mean wrap?)") != std::string::npos);
  std::tie(code, err) = ParseErr({"xyzzy"});
  CHECK(code == 64);
  CHECK(err.find("keel: unknown command xyzzy (commands: ") != std::string::npos);
  CHECK(err.find("call") != std::string::npos);
  std::tie(code, err) = ParseErr({"trace"});
  CHECK(code == 64);
  CHECK(err.find("keel: trace needs a command: summary") != std::string::npos);
}

TEST_CASE(
    "a bad value from a KEEL_ variable names the variable, one from the command line does not") {
  CleanKeelEnv env;
  env.Set("KEEL_WORKERS", "abc");
  auto [code, err] = ParseErr({});
  CHECK(code == 64);
  CHECK(err.find("--workers") != std::string::npos);
  CHECK(err.find("(from the environment variable KEEL_WORKERS)") != std::string::npos);
  std::tie(code, err) = ParseErr({"--workers", "xyz"});
  CHECK(code == 64);
  CHECK(err.find("--workers") != std::string::npos);
  CHECK(err.find("KEEL_WORKERS") == std::string::npos);
}

TEST_CASE("FlagDistance counts one edit for a letter dropped, added, changed or two swapped") {
  CHECK(keel::FlagDistance("--catalog", "--catalog") == 0);
  CHECK(keel::FlagDistance("--catlog", "--catalog") == 1);
  CHECK(keel::FlagDistance("--catallog", "--catalog") == 1);
  CHECK(keel::FlagDistance("--cetalog", "--catalog") == 1);
  CHECK(keel::FlagDistance("--ctaalog", "--catalog") == 1);
  CHECK(keel::FlagDistance("--db", "--http") == 4);
}

}  // namespace cli_usage_errors_test
