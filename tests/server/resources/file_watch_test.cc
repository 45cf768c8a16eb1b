// FileWatch: changed paths from inotify, coalesced, with new subdirectories watched and
// the bounds reported as overflow. Each test waits for the fd with a bounded poll (no
// sleeps): inotify queues an event before the write() or rename() that causes it returns,
// so once the fd is readable everything the test did is in the queue.
#include "server/resources/file_watch.h"

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"

namespace keel::file_watch_test {
namespace {

std::unique_ptr<FileWatch> Watching(const std::string& path, FileWatch::Limits limits = {}) {
  std::string error;
  std::unique_ptr<FileWatch> watch = FileWatch::Create(limits, &error);
  INFO(error);
  REQUIRE(watch);
  REQUIRE(watch->Add(path, &error));
  return watch;
}

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

FileWatch::Changes DrainAfterEvent(FileWatch& watch) {
  REQUIRE(Readable(watch.fd(), 5000));
  return watch.Drain();
}

bool Has(const FileWatch::Changes& changes, const std::string& path) {
  for (const std::string& p : changes.paths) {
    if (p == path) return true;
  }
  return false;
}

TEST_CASE("writing a file in a watched directory reports it once", "[file_watch]") {
  TempDir dir;
  auto watch = Watching(dir.path());
  CHECK_FALSE(Readable(watch->fd(), 0));
  {
    std::ofstream out(dir.File("a.txt"));
    for (int i = 0; i < 50; ++i) out << "line " << i << "\n" << std::flush;
  }
  const FileWatch::Changes changes = DrainAfterEvent(*watch);
  CHECK(changes.paths == std::vector<std::string>{dir.File("a.txt")});
  CHECK(changes.listing_changed);  // created
  CHECK_FALSE(changes.overflow);
  CHECK_FALSE(Readable(watch->fd(), 0));
  CHECK(watch->Drain().paths.empty());
}

TEST_CASE("modifying an existing file reports it without a listing change", "[file_watch]") {
  TempDir dir;
  dir.Write("a.txt", "1");
  auto watch = Watching(dir.path());
  std::ofstream(dir.File("a.txt"), std::ios::app) << "2";
  const FileWatch::Changes changes = DrainAfterEvent(*watch);
  CHECK(changes.paths == std::vector<std::string>{dir.File("a.txt")});
  CHECK_FALSE(changes.listing_changed);
}

TEST_CASE("deleting and renaming files report both names and a listing change", "[file_watch]") {
  TempDir dir;
  dir.Write("gone.txt", "1");
  dir.Write("old.txt", "2");
  auto watch = Watching(dir.path());
  std::filesystem::remove(dir.File("gone.txt"));
  std::filesystem::rename(dir.File("old.txt"), dir.File("new.txt"));
  const FileWatch::Changes changes = DrainAfterEvent(*watch);
  CHECK(changes.paths ==
        std::vector<std::string>{dir.File("gone.txt"), dir.File("new.txt"), dir.File("old.txt")});
  CHECK(changes.listing_changed);
}

TEST_CASE("subdirectories are watched including ones created after the watch began",
          "[file_watch]") {
  TempDir dir;
  std::filesystem::create_directories(dir.File("old/deeper"));
  auto watch = Watching(dir.path());
  CHECK(watch->watch_count() == 3);
  dir.Write("old/deeper/x.md", "x");
  CHECK(Has(DrainAfterEvent(*watch), dir.File("old/deeper/x.md")));
  // A new directory and a file written into it before Drain saw the directory: the
  // scan that adds the watch reports the file.
  std::filesystem::create_directories(dir.File("new"));
  dir.Write("new/early.txt", "e");
  const FileWatch::Changes first = DrainAfterEvent(*watch);
  CHECK(Has(first, dir.File("new")));
  CHECK(Has(first, dir.File("new/early.txt")));
  CHECK(watch->watch_count() == 4);
  dir.Write("new/late.txt", "l");
  CHECK(DrainAfterEvent(*watch).paths == std::vector<std::string>{dir.File("new/late.txt")});
}

TEST_CASE("hidden directories are not watched", "[file_watch]") {
  TempDir dir;
  std::filesystem::create_directories(dir.File(".git/objects"));
  std::filesystem::create_directories(dir.File("src"));
  auto watch = Watching(dir.path());
  CHECK(watch->watch_count() == 2);
}

TEST_CASE("a watched file replaced by rename-over is reported and stays watched", "[file_watch]") {
  TempDir dir;
  const std::string file = dir.Write("config.yaml", "a: 1");
  dir.Write("other.txt", "o");
  auto watch = Watching(file);
  dir.Write("config.yaml.tmp", "a: 2");
  std::filesystem::rename(dir.File("config.yaml.tmp"), file);
  dir.Write("other.txt", "changed");  // not watched: a sibling of the file
  const FileWatch::Changes changes = DrainAfterEvent(*watch);
  CHECK(changes.paths == std::vector<std::string>{file});
  dir.Write("config.yaml", "a: 3");
  CHECK(DrainAfterEvent(*watch).paths == std::vector<std::string>{file});
}

TEST_CASE("a directory moved out stops being watched and one moved in is watched", "[file_watch]") {
  TempDir dir;
  TempDir elsewhere;
  std::filesystem::create_directories(dir.File("watched/sub"));
  std::filesystem::create_directories(elsewhere.File("incoming"));
  elsewhere.Write("incoming/f.txt", "f");
  auto watch = Watching(dir.File("watched"));
  CHECK(watch->watch_count() == 2);
  std::filesystem::rename(dir.File("watched/sub"), elsewhere.File("sub"));
  std::filesystem::rename(elsewhere.File("incoming"), dir.File("watched/incoming"));
  const FileWatch::Changes changes = DrainAfterEvent(*watch);
  CHECK(Has(changes, dir.File("watched/sub")));
  CHECK(Has(changes, dir.File("watched/incoming")));
  CHECK(Has(changes, dir.File("watched/incoming/f.txt")));
  CHECK(watch->watch_count() == 2);
  elsewhere.Write("sub/unseen.txt", "u");
  dir.Write("watched/incoming/g.txt", "g");
  CHECK(DrainAfterEvent(*watch).paths ==
        std::vector<std::string>{dir.File("watched/incoming/g.txt")});
}

TEST_CASE("the watch budget is reported when a tree needs more watches", "[file_watch]") {
  TempDir dir;
  for (const char* sub : {"a", "b", "c"}) std::filesystem::create_directories(dir.File(sub));
  std::string error;
  auto watch = FileWatch::Create({2, 100}, &error);
  REQUIRE(watch);
  CHECK_FALSE(watch->Add(dir.path(), &error));
  CHECK(error.find("watch limit of 2") != std::string::npos);
  CHECK(watch->watch_count() == 2);
  CHECK(watch->Drain().overflow);
}

TEST_CASE("more changed paths than the bound holds report overflow", "[file_watch]") {
  TempDir dir;
  auto watch = Watching(dir.path(), {16, 3});
  for (int i = 0; i < 5; ++i) dir.Write("f" + std::to_string(i), "x");
  const FileWatch::Changes changes = DrainAfterEvent(*watch);
  CHECK(changes.paths.size() == 3);
  CHECK(changes.overflow);
  CHECK_FALSE(watch->Drain().overflow);
}

TEST_CASE("the watch fd drives a handler on the event loop", "[file_watch]") {
  TempDir dir;
  auto watch = Watching(dir.path());
  SteadyClock clock;
  EventLoop loop(clock);
  std::vector<std::string> seen;
  loop.Watch(watch->fd(), POLLIN, [&](short) {
    for (const std::string& path : watch->Drain().paths) seen.push_back(path);
  });
  dir.Write("hello.txt", "hi");
  loop.RunOnce(std::chrono::seconds(5));
  loop.Unwatch(watch->fd());
  CHECK(seen == std::vector<std::string>{dir.File("hello.txt")});
}

TEST_CASE("adding a path in a directory that does not exist fails with a reason", "[file_watch]") {
  TempDir dir;
  std::string error;
  auto watch = FileWatch::Create({}, &error);
  REQUIRE(watch);
  CHECK_FALSE(watch->Add(dir.File("no/such/file.txt"), &error));
  CHECK(error.find("no/such") != std::string::npos);
}

}  // namespace
}  // namespace keel::file_watch_test
