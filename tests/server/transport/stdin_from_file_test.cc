// `keel < transcript.jsonl` (DC-2): with a regular file on stdin — always readable, no
// pipe — keel serves every line, lets in-flight work finish after EOF, and exits 0.
// Runs the real binary through the shell, the way a person pipes a transcript into it.
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "fakes/temp_dir.h"

namespace keel::stdin_from_file_test {
namespace {

TEST_CASE("a transcript file on stdin is served in full and keel exits 0 at its end") {
  TempDir dir;
  const std::string in = dir.path() + "/session.jsonl";
  const std::string out = dir.path() + "/out.jsonl";
  {
    std::ofstream f(in);
    f << R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
         "\n"
      << R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
         "\n"
      << R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":100}}})"
         "\n"
      << R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"last"}}})";
    // No newline after the last line: it is still a line.
  }
  const std::string command = "KEEL_DB=" + dir.path() + "/keel.db " + std::string(KEEL_BINARY) +
                              " --test-tools < " + in + " > " + out + " 2>/dev/null";
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  std::ifstream f(out);
  std::string line;
  std::set<std::string> answered;
  while (std::getline(f, line)) {
    const auto message = nlohmann::json::parse(line);
    if (message.contains("id")) answered.insert(message["id"].dump());
  }
  CHECK(answered == std::set<std::string>{"0", "1", "2"});
}

}  // namespace
}  // namespace keel::stdin_from_file_test
