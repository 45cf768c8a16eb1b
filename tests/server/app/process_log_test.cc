// The process log's --log-file: a path whose directory is missing is refused (keel exits 73),
// never created on the way (a mistyped path must not grow a directory tree).
#include "server/app/process_log.h"

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"

namespace keel::process_log_test {
namespace {

TEST_CASE("a log file in a missing directory is refused, naming it, and nothing is created") {
  TempDir dir;
  const std::string error = ConfigureProcessLog("warn", dir.File("no/such/keel.log"));
  CHECK(error == dir.File("no/such") + ": no such directory (keel creates none)");
  CHECK_FALSE(std::filesystem::exists(dir.File("no")));
}

TEST_CASE("a log file whose directory is a file is refused") {
  TempDir dir;
  dir.Write("plain", "");
  CHECK(ConfigureProcessLog("warn", dir.File("plain/keel.log")) ==
        dir.File("plain") + " is not a directory");
}

}  // namespace
}  // namespace keel::process_log_test
