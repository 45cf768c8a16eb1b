// ReadMountFile and OpenInMount: confinement to the mount root (paths, "..", symbolic
// links), refusal of what is not a regular file (a FIFO without blocking), the size cap
// decided by fstat, and no torn read when the file changes under the reader (the
// after_fstat seam changes it at exactly that point).
#include "server/resources/mount_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "fakes/temp_dir.h"
#include "server/resources/mount_path.h"

namespace keel::mount_reader_test {
namespace {

constexpr uint64_t kCap = 1 << 20;

MountReadResult Read(const TempDir& root, const std::string& relative, uint64_t cap = kCap) {
  return ReadMountFile(root.path(), relative, MountReadOptions{cap, {}});
}

void Append(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

TEST_CASE("a file under the mount is read whole with its MIME type", "[mount]") {
  TempDir root;
  std::filesystem::create_directories(root.File("docs/guide"));
  root.Write("docs/guide/intro.md", "# Intro\n");
  const MountReadResult result = Read(root, "docs/guide/intro.md");
  REQUIRE(result.ok());
  CHECK(result.file.bytes == "# Intro\n");
  CHECK(result.file.mime_type == "text/markdown");
  CHECK(result.file.text);
  CHECK(result.file.mtime_ms > 0);
}

TEST_CASE("a text type that is not valid UTF-8 and a binary type are both marked binary",
          "[mount]") {
  TempDir root;
  root.Write("latin1.txt", "caf\xE9");
  root.Write("pixel.png", "\x89PNG\r\n");
  root.Write("empty.txt", "");
  CHECK_FALSE(Read(root, "latin1.txt").file.text);
  CHECK(Read(root, "latin1.txt").file.mime_type == "text/plain");
  CHECK_FALSE(Read(root, "pixel.png").file.text);
  CHECK(Read(root, "pixel.png").file.bytes == "\x89PNG\r\n");
  CHECK(Read(root, "empty.txt").ok());
  CHECK(Read(root, "empty.txt").file.text);
}

TEST_CASE("dot-dot components are refused as outside the mount before any I/O", "[mount]") {
  TempDir outer;
  outer.Write("secret.txt", "s");
  std::filesystem::create_directories(outer.File("mount/sub"));
  const std::string root = outer.File("mount");
  for (const char* path : {"../secret.txt", "sub/../../secret.txt", "sub/..", ".."}) {
    INFO(path);
    const MountReadResult result = ReadMountFile(root, path, {kCap, {}});
    CHECK(result.failure.error == MountError::kOutsideMount);
    CHECK(MeansResourceNotFound(result.failure.error));
  }
  CHECK(CheckMountPath("/etc/passwd").error == MountError::kOutsideMount);
}

TEST_CASE("malformed and hidden paths are refused as not found", "[mount]") {
  TempDir root;
  root.Write(".env", "TOKEN=x");
  std::filesystem::create_directories(root.File(".git"));
  root.Write(".git/config", "x");
  root.Write("a.txt", "a");
  for (const std::string& path :
       {std::string(""), std::string("./a.txt"), std::string("a.txt/"), std::string("x//a.txt"),
        std::string("a\\b.txt"), std::string("a.txt\0.png", 10), std::string(".env"),
        std::string(".git/config"), std::string(kMaxPathBytes + 1, 'a'), std::string("nope.txt")}) {
    INFO(path);
    CHECK(Read(root, path).failure.error == MountError::kNotFound);
  }
}

TEST_CASE("a symbolic link out of the mount is refused", "[mount]") {
  TempDir outer;
  outer.Write("secret.txt", "s");
  std::filesystem::create_directories(outer.File("mount"));
  const std::string root = outer.File("mount");
  REQUIRE(::symlink("../secret.txt", (root + "/up.txt").c_str()) == 0);
  REQUIRE(::symlink(outer.File("secret.txt").c_str(), (root + "/abs.txt").c_str()) == 0);
  REQUIRE(::symlink("..", (root + "/parent").c_str()) == 0);
  for (const char* path : {"up.txt", "abs.txt", "parent/secret.txt"}) {
    INFO(path);
    const MountReadResult result = ReadMountFile(root, path, {kCap, {}});
    CHECK(result.failure.error == MountError::kOutsideMount);
    CHECK(result.file.bytes.empty());
  }
}

TEST_CASE("a symbolic link inside the mount is followed and a loop is refused", "[mount]") {
  TempDir root;
  std::filesystem::create_directories(root.File("v2"));
  root.Write("v2/notes.txt", "v2 notes");
  REQUIRE(::symlink("v2", root.File("latest").c_str()) == 0);
  REQUIRE(::symlink("../v2/notes.txt", root.File("v2/self.txt").c_str()) == 0);
  REQUIRE(::symlink("loop_b", root.File("loop_a").c_str()) == 0);
  REQUIRE(::symlink("loop_a", root.File("loop_b").c_str()) == 0);
  REQUIRE(::symlink("v2/.hidden", root.File("to_hidden").c_str()) == 0);
  CHECK(Read(root, "latest/notes.txt").file.bytes == "v2 notes");
  CHECK(Read(root, "v2/self.txt").file.bytes == "v2 notes");
  CHECK(Read(root, "loop_a").failure.error == MountError::kNotFound);
  CHECK(Read(root, "to_hidden").failure.error == MountError::kNotFound);
  CHECK(Read(root, "latest").failure.error == MountError::kNotRegularFile);
}

TEST_CASE("a FIFO is refused as not a regular file without blocking", "[mount]") {
  TempDir root;
  REQUIRE(::mkfifo(root.File("pipe").c_str(), 0600) == 0);
  // No writer ever opens the FIFO: a blocking open would hang this test forever.
  const MountReadResult result = Read(root, "pipe");
  CHECK(result.failure.error == MountError::kNotRegularFile);
  CHECK_FALSE(MeansResourceNotFound(result.failure.error));
}

TEST_CASE("a directory and a socket are refused as not regular files", "[mount]") {
  TempDir root;
  std::filesystem::create_directories(root.File("sub"));
  CHECK(Read(root, "sub").failure.error == MountError::kNotRegularFile);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(sock >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = root.File("sock");
  REQUIRE(path.size() < sizeof addr.sun_path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  REQUIRE(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  CHECK(Read(root, "sock").failure.error == MountError::kNotRegularFile);
  ::close(sock);
}

TEST_CASE("a 2 GB sparse file is refused by its size without being read", "[mount]") {
  TempDir root;
  const int fd = ::open(root.File("huge.bin").c_str(), O_CREAT | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, off_t{2} << 30) == 0);
  ::close(fd);
  bool read_started = false;
  const MountReadResult result =
      ReadMountFile(root.path(), "huge.bin", {kCap, [&](int) { read_started = true; }});
  CHECK(result.failure.error == MountError::kTooLarge);
  CHECK(result.failure.message ==
        "huge.bin: file is 2147483648 bytes, over the cap of 1048576 bytes");
  CHECK_FALSE(read_started);
}

TEST_CASE("a file exactly at the cap is read and one byte over is refused", "[mount]") {
  TempDir root;
  root.Write("ten.txt", "0123456789");
  CHECK(Read(root, "ten.txt", 10).ok());
  CHECK(Read(root, "ten.txt", 9).failure.error == MountError::kTooLarge);
}

TEST_CASE("a file replaced by rename while being read yields one whole version", "[mount]") {
  TempDir root;
  const std::string v1 = R"({"version":1})";
  const std::string v2 = R"({"version":2,"more":true})";
  root.Write("data.json", v1);
  root.Write("next.tmp", v2);
  int calls = 0;
  const MountReadResult result = ReadMountFile(
      root.path(), "data.json",
      {kCap, [&](int attempt) {
         ++calls;
         if (attempt == 0) {
           REQUIRE(std::rename(root.File("next.tmp").c_str(), root.File("data.json").c_str()) == 0);
         }
       }});
  REQUIRE(result.ok());
  // Linux updates the replaced inode's ctime when the rename unlinks it, so the first try
  // is void and the second reads the new file; a file system that does not would give the
  // whole old content. Never a mix.
  CHECK((result.file.bytes == v2 ? calls == 2 : result.file.bytes == v1));
  CHECK((result.file.bytes == v1 || result.file.bytes == v2));
}

TEST_CASE("a file appended to mid-read is read again and succeeds when it settles", "[mount]") {
  TempDir root;
  root.Write("app.log", "line 1\n");
  int calls = 0;
  const MountReadResult result =
      ReadMountFile(root.path(), "app.log", {kCap, [&](int attempt) {
                                               ++calls;
                                               if (attempt == 0)
                                                 Append(root.File("app.log"), "line 2\n");
                                             }});
  REQUIRE(result.ok());
  CHECK(calls == 2);
  CHECK(result.file.bytes == "line 1\nline 2\n");
}

TEST_CASE("a file that keeps growing mid-read is reported as changed, never torn", "[mount]") {
  TempDir root;
  root.Write("app.log", "line 1\n");
  const MountReadResult result = ReadMountFile(
      root.path(), "app.log", {kCap, [&](int) { Append(root.File("app.log"), "more\n"); }});
  CHECK(result.failure.error == MountError::kChangedWhileRead);
  CHECK(result.failure.message == "app.log: changed while being read (2 tries)");
  CHECK(result.file.bytes.empty());
  CHECK_FALSE(MeansResourceNotFound(result.failure.error));
}

TEST_CASE("a file truncated mid-read is reported as changed", "[mount]") {
  TempDir root;
  root.Write("data.csv", "a,b\n1,2\n3,4\n");
  // Halves the file on every try: a size change, whatever the timestamps' granularity.
  const MountReadResult result = ReadMountFile(
      root.path(), "data.csv",
      {kCap, [&](int) {
         const auto size = std::filesystem::file_size(root.File("data.csv"));
         REQUIRE(::truncate(root.File("data.csv").c_str(), static_cast<off_t>(size / 2)) == 0);
       }});
  CHECK(result.failure.error == MountError::kChangedWhileRead);
}

TEST_CASE("a file that vanishes between tries is not found", "[mount]") {
  TempDir root;
  root.Write("tmp.txt", "x");
  const MountReadResult result =
      ReadMountFile(root.path(), "tmp.txt", {kCap, [&](int) {
                                               Append(root.File("tmp.txt"), "y");
                                               std::filesystem::remove(root.File("tmp.txt"));
                                             }});
  CHECK(result.failure.error == MountError::kNotFound);
}

TEST_CASE("a mount root that does not exist is an I/O error naming the root", "[mount]") {
  const MountReadResult result = ReadMountFile("/nonexistent/keel/root", "a.txt", {kCap, {}});
  CHECK(result.failure.error == MountError::kIo);
  CHECK(result.failure.message.find("/nonexistent/keel/root") != std::string::npos);
  CHECK(std::string(MountErrorName(MountError::kOutsideMount)) == "outside the mount");
}

}  // namespace
}  // namespace keel::mount_reader_test
