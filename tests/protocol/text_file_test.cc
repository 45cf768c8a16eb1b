// ReadTextFile (protocol/text_file.h): a named file's bytes, or the system's reason it cannot
// be read; a directory is a reason, not an empty file.
#include "protocol/text_file.h"

#include <string>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "fakes/temp_dir.h"

namespace keel::text_file_test {

TEST_CASE("a file's bytes come back as they are", "[protocol]") {
  TempDir dir;
  const std::string bytes = std::string("line one\r\nno newline at the end\0after a NUL", 43);
  std::string error;
  const std::optional<std::string> text = ReadTextFile(dir.Write("a.txt", bytes), &error);
  REQUIRE(text);
  CHECK(*text == bytes);
  CHECK(ReadTextFile(dir.Write("empty.txt", ""), &error) == std::string());
  const std::string big(200000, 'x');  // more than one read
  CHECK(ReadTextFile(dir.Write("big.txt", big), &error) == big);
}

TEST_CASE("a missing file or a directory cannot be read, and the reason says why", "[protocol]") {
  TempDir dir;
  std::string error;
  CHECK_FALSE(ReadTextFile(dir.File("absent.txt"), &error));
  CHECK(error == "No such file or directory");
  error.clear();
  CHECK_FALSE(ReadTextFile(dir.path(), &error));
  CHECK(error == "Is a directory");
  REQUIRE(::mkdir(dir.File("sub").c_str(), 0700) == 0);
  error.clear();
  CHECK_FALSE(ReadTextFile(dir.File("sub/"), &error));
  CHECK(error == "Is a directory");
}

}  // namespace keel::text_file_test
