// FileWatch: tells keel which served files changed on disk (for MCP's
// notifications/resources/updated and notifications/resources/list_changed), through one
// Linux inotify fd that the event loop polls: loop.Watch(watch->fd(), POLLIN,
// [&](short) { Use(watch->Drain()); }).
// Owner: whoever created it (owns the inotify fd; it closes on destruction, after the
// owner has Unwatch()ed it from the loop). Thread-safety: one thread (the loop thread);
// nothing is synchronised. Never blocks: the fd is non-blocking and Drain reads only what
// is queued. Linux only: elsewhere Create fails with an error saying so.
//
// Invariants:
//  1. Add(file) watches the file's parent directory and reports only that name there, so
//     an editor's save by rename-over, a delete and a re-create are all seen (a watch on
//     the file's inode would die with the first rename). The file need not exist yet.
//  2. Add(directory) watches it and every subdirectory below it, except hidden ones (a
//     name starting with "."; .git/ would spend the watch budget) and symbolic links
//     (never followed). A subdirectory created or moved in later is watched when Drain
//     sees it, and the files already in it are reported (they may predate the watch).
//     A subdirectory moved out or deleted stops being watched.
//  3. Drain reads every queued event and returns the changed paths, each once (a set),
//     sorted: a path is its directory's watched path + "/" + name (for Add(file): the path
//     as given). Reported: content written (IN_MODIFY, IN_CLOSE_WRITE), metadata
//     (IN_ATTRIB), created, deleted, moved in or out; a watched directory deleted or moved
//     reports its own path. `listing_changed` is set when anything was created, deleted or
//     moved (the set of files changed, not only their content).
//  4. Bounded: at most Limits::max_watches inotify watches (Add past it watches what fits
//     and returns false), at most Limits::max_changes paths held between Drains, at most
//     kMaxDrainBytes read per Drain (the fd stays readable if more is queued). Anything
//     lost to a bound — or to the kernel's own queue overflow (IN_Q_OVERFLOW) — sets
//     `overflow`: the caller must assume everything changed and rescan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/runtime/fd.h"

namespace keel {

class FileWatch {
 public:
  struct Limits {
    size_t max_watches = 1024;  // directories watched (the kernel's default per user: 8192)
    size_t max_changes = 4096;  // distinct paths held between two Drains
  };

  struct Changes {
    std::vector<std::string> paths;  // sorted, each once
    bool listing_changed = false;    // rule 3
    bool overflow = false;           // rule 4: rescan everything
  };

  // Events read per Drain: 16 reads of 64 KiB (a few thousand events).
  static constexpr size_t kMaxDrainBytes = 16 * 64 * 1024;

  // nullptr with `*error` when inotify is unavailable (not Linux, or out of instances).
  static std::unique_ptr<FileWatch> Create(Limits limits, std::string* error);
  ~FileWatch();
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  // Rules 1 and 2. False with `*error` when `path` (or, for a file, its directory) cannot
  // be watched or the watch budget ran out; what could be watched stays watched.
  bool Add(const std::string& path, std::string* error);

  // Readable (POLLIN) when events are queued; non-blocking.
  int fd() const { return fd_.get(); }

  // Rule 3: what changed since the last Drain.
  Changes Drain();

  size_t watch_count() const { return dirs_.size(); }

 private:
  struct Dir {
    std::string path;
    bool tree = false;                         // Add(directory): every name counts
    std::map<std::string, std::string> files;  // Add(file): name -> the path as given
  };

  FileWatch(Fd fd, Limits limits) : fd_(std::move(fd)), limits_(limits) {}

  // Watches `root` and its subdirectories (rule 2); with `report`, notes the files found.
  bool AddTree(const std::string& root, bool report, std::string* error);
  // Adds one inotify watch on directory `path`; -1 when it cannot (budget, errno).
  int WatchDir(const std::string& path, std::string* error);
  void RemoveTree(const std::string& path);
  void Handle(int wd, uint32_t mask, const std::string& name);
  void Note(const std::string& path);

  Fd fd_;
  Limits limits_;
  std::map<int, Dir> dirs_;                // by watch descriptor
  std::map<std::string, int> wd_by_path_;  // the inverse, for RemoveTree
  std::set<std::string> changed_;          // bounded by limits_.max_changes
  bool listing_changed_ = false;
  bool overflow_ = false;
};

}  // namespace keel
