// PrepareHttp (server/app/http_setup.h) rule 3: the --http-token-file's first line, trimmed,
// is the token; a file that cannot be read (missing, a directory) is exit 66 with the
// reason, an empty one exit 78.
#include "server/app/http_setup.h"

#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"

namespace keel::http_setup_test {
namespace {

HttpSetup WithTokenFile(const std::string& path, std::string* err) {
  CliOptions flags;
  flags.http = "127.0.0.1:0";
  flags.http_token_file = path;
  std::ostringstream out;
  HttpSetup setup = PrepareHttp(flags, out);
  *err = out.str();
  return setup;
}

}  // namespace

TEST_CASE("the token is the token file's first line without surrounding spaces", "[http]") {
  TempDir dir;
  std::string err;
  const HttpSetup setup = WithTokenFile(dir.Write("token", "  s3cret \t\r\nsecond line\n"), &err);
  CHECK_FALSE(setup.exit_code);
  REQUIRE(setup.options);
  CHECK(setup.options->guard.token == "s3cret");
  CHECK(WithTokenFile(dir.Write("bare", "bare-token"), &err).options->guard.token == "bare-token");
}

TEST_CASE("a token file that cannot be read is exit 66 with the reason, an empty one exit 78",
          "[http]") {
  TempDir dir;
  std::string err;
  CHECK(WithTokenFile(dir.File("absent"), &err).exit_code == 66);
  CHECK(err.find("No such file or directory") != std::string::npos);
  CHECK(WithTokenFile(dir.path(), &err).exit_code == 66);  // not read as an empty file
  CHECK(err.find("Is a directory") != std::string::npos);
  CHECK(WithTokenFile(dir.Write("empty", ""), &err).exit_code == 78);
  CHECK(WithTokenFile(dir.Write("blank", " \t\n"), &err).exit_code == 78);
  CHECK(err.find("is empty") != std::string::npos);
}

}  // namespace keel::http_setup_test
