#include "server/resources/mount_listing.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include <sys/stat.h>

#include "server/resources/mount_path.h"
#include "server/runtime/fd.h"

namespace keel {
namespace {

struct Child {
  std::string key;  // name, plus "/" for a directory: rule 1's order
  std::string name;
  bool directory = false;
  uint64_t size = 0;
  int64_t mtime_ms = 0;
};

int64_t MtimeMs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

class Lister {
 public:
  Lister(const std::string& root, size_t max_entries, int max_depth)
      : root_(root), max_entries_(max_entries), max_depth_(std::min(max_depth, kMaxListDepth)) {}

  // Lists directory `dir` (an fd this call owns) whose path below the root is `prefix`.
  // False once max_entries is reached: the walk stops.
  bool List(Fd dir, const std::string& prefix, int depth) {
    std::vector<Child> children = Read(dir.get(), prefix);
    std::sort(children.begin(), children.end(),
              [](const Child& a, const Child& b) { return a.key < b.key; });
    for (const Child& child : children) {
      if (!child.directory) {
        if (listing_.entries.size() == max_entries_) {
          listing_.truncated = true;
          return false;
        }
        listing_.entries.push_back({prefix + child.name, child.size, child.mtime_ms});
        continue;
      }
      if (depth >= max_depth_) {
        listing_.truncated = true;
        continue;
      }
      Fd sub(
          ::openat(dir.get(), child.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.open()) {
        listing_.truncated = true;
        continue;
      }
      if (!List(std::move(sub), prefix + child.name + "/", depth + 1)) return false;
    }
    return true;
  }

  MountListing Take() { return std::move(listing_); }

 private:
  // The listable children of directory `dir_fd` (rules 2 and 3), unsorted.
  std::vector<Child> Read(int dir_fd, const std::string& prefix) {
    std::vector<Child> children;
    // fdopendir takes the fd it is given; the caller's stays open for its openat calls.
    const int dup_fd = ::dup(dir_fd);
    DIR* stream = dup_fd >= 0 ? ::fdopendir(dup_fd) : nullptr;
    if (stream == nullptr) {
      if (dup_fd >= 0) ::close(dup_fd);
      listing_.truncated = true;
      return children;
    }
    size_t seen = 0;
    while (const dirent* entry = ::readdir(stream)) {
      if (entry->d_name[0] == '.') continue;  // ".", ".." and hidden names
      if (++seen > kMaxDirectoryEntries) {
        listing_.truncated = true;
        break;
      }
      std::optional<Child> child = Classify(dir_fd, prefix, entry->d_name);
      if (child) children.push_back(std::move(*child));
    }
    ::closedir(stream);
    return children;
  }

  std::optional<Child> Classify(int dir_fd, const std::string& prefix, const char* name) {
    struct stat st {};
    if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    if (S_ISDIR(st.st_mode)) return Child{std::string(name) + "/", name, true, 0, 0};
    if (S_ISLNK(st.st_mode)) {
      // Rule 3: the link's target under mount_path.h's confinement.
      MountFailure failure;
      const Fd target = OpenInMount(root_, prefix + name, &failure);
      if (!target.open() || ::fstat(target.get(), &st) != 0) return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    return Child{name, name, false, static_cast<uint64_t>(st.st_size), MtimeMs(st)};
  }

  const std::string& root_;
  const size_t max_entries_;
  const int max_depth_;
  MountListing listing_;
};

}  // namespace

MountListing ListMount(const std::string& root, size_t max_entries, int max_depth) {
  Fd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.open()) {
    MountListing listing;
    const MountError error = errno == ENOENT ? MountError::kNotFound : MountError::kIo;
    listing.failure = {error, "mount root " + root + ": " + strerror(errno)};
    return listing;
  }
  Lister lister(root, max_entries, max_depth);
  lister.List(std::move(root_fd), "", 0);
  return lister.Take();
}

}  // namespace keel
