#include "server/resources/file_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#ifdef __linux__
#include <sys/inotify.h>
#endif

#include <deque>
#include <utility>

namespace keel {

#ifdef __linux__

namespace {

constexpr uint32_t kDirEvents = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB |
                                IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
                                IN_ONLYDIR;
constexpr uint32_t kListingEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
constexpr size_t kReadBytes = 64 * 1024;

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// The names in directory `path`, split into subdirectories (not hidden, not links) and
// files; nothing when it cannot be read.
void ListDirectory(const std::string& path, std::vector<std::string>* dirs,
                   std::vector<std::string>* files) {
  DIR* stream = ::opendir(path.c_str());
  if (stream == nullptr) return;
  while (const dirent* entry = ::readdir(stream)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(::dirfd(stream), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (name.front() != '.') dirs->push_back(Join(path, name));
    } else {
      files->push_back(Join(path, name));
    }
  }
  ::closedir(stream);
}

}  // namespace

std::unique_ptr<FileWatch> FileWatch::Create(Limits limits, std::string* error) {
  Fd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd.open()) {
    *error = std::string("inotify_init1: ") + strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<FileWatch>(new FileWatch(std::move(fd), limits));
}

FileWatch::~FileWatch() = default;

bool FileWatch::Add(const std::string& given, std::string* error) {
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return AddTree(path, false, error);
  // Rule 1: a file (existing or not) through its directory.
  const std::string dir = Parent(path);
  const int wd = WatchDir(dir, error);
  if (wd < 0) return false;
  dirs_[wd].files[path.substr(path.rfind('/') + 1)] = given;
  return true;
}

int FileWatch::WatchDir(const std::string& path, std::string* error) {
  const auto known = wd_by_path_.find(path);
  if (known != wd_by_path_.end()) return known->second;
  if (dirs_.size() >= limits_.max_watches) {
    *error =
        "watch limit of " + std::to_string(limits_.max_watches) + " directories reached at " + path;
    overflow_ = true;
    return -1;
  }
  const int wd = ::inotify_add_watch(fd_.get(), path.c_str(), kDirEvents);
  if (wd < 0) {
    *error = "inotify_add_watch " + path + ": " + strerror(errno);
    return -1;
  }
  // The same directory under another name returns the same wd: keep the first name.
  Dir& dir = dirs_[wd];
  if (dir.path.empty()) dir.path = path;
  wd_by_path_[path] = wd;
  return wd;
}

bool FileWatch::AddTree(const std::string& root, bool report, std::string* error) {
  std::deque<std::string> pending{root};
  bool ok = true;
  while (!pending.empty()) {
    const std::string path = std::move(pending.front());
    pending.pop_front();
    const int wd = WatchDir(path, error);
    if (wd < 0) {
      ok = false;
      if (path == root || dirs_.size() >= limits_.max_watches) return false;
      continue;  // a subdirectory that vanished or is unreadable: skip it
    }
    dirs_[wd].tree = true;
    std::vector<std::string> dirs;
    std::vector<std::string> files;
    ListDirectory(path, &dirs, &files);
    pending.insert(pending.end(), dirs.begin(), dirs.end());
    if (report) {
      for (const std::string& file : files) Note(file);
    }
  }
  return ok;
}

void FileWatch::RemoveTree(const std::string& path) {
  for (auto it = wd_by_path_.lower_bound(path); it != wd_by_path_.end();) {
    const std::string& p = it->first;
    const bool inside =
        p == path ||
        (p.size() > path.size() && p.compare(0, path.size(), path) == 0 && p[path.size()] == '/');
    if (!inside) {
      if (p.compare(0, path.size(), path) != 0) break;  // past every path with this prefix
      ++it;
      continue;
    }
    ::inotify_rm_watch(fd_.get(), it->second);
    dirs_.erase(it->second);
    it = wd_by_path_.erase(it);
  }
}

void FileWatch::Note(const std::string& path) {
  if (changed_.count(path) != 0) return;
  if (changed_.size() >= limits_.max_changes) {
    overflow_ = true;
    return;
  }
  changed_.insert(path);
}

void FileWatch::Handle(int wd, uint32_t mask, const std::string& name) {
  const auto found = dirs_.find(wd);
  if (found == dirs_.end()) return;  // a watch already removed
  if (mask & IN_IGNORED) {           // the kernel dropped it: directory gone
    wd_by_path_.erase(found->second.path);
    dirs_.erase(found);
    return;
  }
  const Dir dir = found->second;  // a copy: AddTree and RemoveTree below change dirs_
  if (name.empty()) {             // the directory itself was deleted or moved
    if (dir.tree) Note(dir.path);
    for (const auto& [file, given] : dir.files) Note(given);
    return;
  }
  const auto file = dir.files.find(name);
  if (!dir.tree && file == dir.files.end()) return;
  const std::string path = file != dir.files.end() ? file->second : Join(dir.path, name);
  Note(path);
  if (mask & kListingEvents) listing_changed_ = true;
  if (!dir.tree || !(mask & IN_ISDIR) || name.front() == '.') return;
  if (mask & (IN_CREATE | IN_MOVED_TO)) {
    std::string error;
    AddTree(path, true, &error);  // rule 2; a failure has set overflow_ when it matters
  } else if (mask & (IN_MOVED_FROM | IN_DELETE)) {
    RemoveTree(path);
  }
}

FileWatch::Changes FileWatch::Drain() {
  alignas(inotify_event) char buffer[kReadBytes];
  for (size_t total = 0; total < kMaxDrainBytes;) {
    const ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: nothing more queued
    total += static_cast<size_t>(n);
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->mask & IN_Q_OVERFLOW) {
        overflow_ = true;
        continue;
      }
      Handle(event->wd, event->mask, event->len > 0 ? std::string(event->name) : std::string());
    }
  }
  Changes changes;
  changes.paths.assign(changed_.begin(), changed_.end());
  changes.listing_changed = std::exchange(listing_changed_, false);
  changes.overflow = std::exchange(overflow_, false);
  changed_.clear();
  return changes;
}

#else  // !__linux__

std::unique_ptr<FileWatch> FileWatch::Create(Limits, std::string* error) {
  *error = "file watching needs Linux inotify";
  return nullptr;
}
FileWatch::~FileWatch() = default;
bool FileWatch::Add(const std::string&, std::string* error) {
  *error = "file watching needs Linux inotify";
  return false;
}
FileWatch::Changes FileWatch::Drain() { return {}; }

#endif

}  // namespace keel
