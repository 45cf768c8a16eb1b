// ListMount: the files of a directory mount in byte order, hidden names and non-regular
// files left out, symbolic links confined and never entered as directories, and bounds
// that report truncation.
#include "server/resources/mount_listing.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "fakes/temp_dir.h"

namespace keel::mount_listing_test {
namespace {

std::vector<std::string> Paths(const MountListing& listing) {
  std::vector<std::string> paths;
  for (const MountEntry& entry : listing.entries) paths.push_back(entry.path);
  return paths;
}

void MakeTree(const TempDir& root) {
  std::filesystem::create_directories(root.File("a/b"));
  root.Write("a-c.txt", "1");
  root.Write("a/b/deep.md", "22");
  root.Write("a/z.txt", "333");
  root.Write("B.txt", "4");
  root.Write("a.txt", "5");
}

TEST_CASE("a mount lists its regular files recursively in byte order with sizes", "[mount]") {
  TempDir root;
  MakeTree(root);
  const MountListing listing = ListMount(root.path(), 100, 10);
  REQUIRE(listing.failure.error == MountError::kNone);
  // Byte order of whole paths: "B" < "a-" < "a." < "a/" ('-' 0x2D, '.' 0x2E, '/' 0x2F).
  CHECK(Paths(listing) ==
        std::vector<std::string>{"B.txt", "a-c.txt", "a.txt", "a/b/deep.md", "a/z.txt"});
  CHECK(listing.entries[3].size == 2);
  CHECK(listing.entries[3].mtime_ms > 0);
  CHECK_FALSE(listing.truncated);
}

TEST_CASE("hidden files and directories and non-regular files are not listed", "[mount]") {
  TempDir root;
  root.Write("visible.txt", "v");
  root.Write(".env", "TOKEN=x");
  std::filesystem::create_directories(root.File(".git/objects"));
  root.Write(".git/config", "x");
  std::filesystem::create_directories(root.File("sub"));
  root.Write("sub/.hidden.md", "h");
  REQUIRE(::mkfifo(root.File("pipe").c_str(), 0600) == 0);
  const MountListing listing = ListMount(root.path(), 100, 10);
  CHECK(Paths(listing) == std::vector<std::string>{"visible.txt"});
  CHECK_FALSE(listing.truncated);
}

TEST_CASE("symbolic links to files inside are listed and links out or to directories are not",
          "[mount]") {
  TempDir outer;
  outer.Write("secret.txt", "s");
  std::filesystem::create_directories(outer.File("m/docs"));
  const std::string root = outer.File("m");
  outer.Write("m/docs/real.md", "real");
  REQUIRE(::symlink("docs/real.md", (root + "/alias.md").c_str()) == 0);
  REQUIRE(::symlink("../secret.txt", (root + "/out.txt").c_str()) == 0);
  REQUIRE(::symlink(outer.File("secret.txt").c_str(), (root + "/abs.txt").c_str()) == 0);
  REQUIRE(::symlink("docs", (root + "/docs_link").c_str()) == 0);
  REQUIRE(::symlink(".", (root + "/docs/loop").c_str()) == 0);
  REQUIRE(::symlink("missing.txt", (root + "/dangling.txt").c_str()) == 0);
  const MountListing listing = ListMount(root, 100, 10);
  CHECK(Paths(listing) == std::vector<std::string>{"alias.md", "docs/real.md"});
  CHECK(listing.entries[0].size == 4);
}

TEST_CASE("the entry bound stops at a prefix of the sorted list and reports truncation",
          "[mount]") {
  TempDir root;
  MakeTree(root);
  const MountListing listing = ListMount(root.path(), 4, 10);
  CHECK(Paths(listing) == std::vector<std::string>{"B.txt", "a-c.txt", "a.txt", "a/b/deep.md"});
  CHECK(listing.truncated);
  const MountListing exact = ListMount(root.path(), 5, 10);
  CHECK(exact.entries.size() == 5);
  CHECK_FALSE(exact.truncated);
}

TEST_CASE("the depth bound leaves deeper directories out and reports truncation", "[mount]") {
  TempDir root;
  MakeTree(root);
  const MountListing top = ListMount(root.path(), 100, 0);
  CHECK(Paths(top) == std::vector<std::string>{"B.txt", "a-c.txt", "a.txt"});
  CHECK(top.truncated);
  const MountListing one = ListMount(root.path(), 100, 1);
  CHECK(Paths(one) == std::vector<std::string>{"B.txt", "a-c.txt", "a.txt", "a/z.txt"});
  CHECK(one.truncated);
}

TEST_CASE("a missing mount root is a failure and an empty one lists nothing", "[mount]") {
  TempDir root;
  CHECK(ListMount(root.File("missing"), 10, 10).failure.error == MountError::kNotFound);
  const MountListing empty = ListMount(root.path(), 10, 10);
  CHECK(empty.failure.error == MountError::kNone);
  CHECK(empty.entries.empty());
  CHECK_FALSE(empty.truncated);
}

}  // namespace
}  // namespace keel::mount_listing_test
