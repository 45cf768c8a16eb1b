#include "server/resources/mount_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <deque>
#include <utility>
#include <vector>

namespace keel {
namespace {

MountFailure Refuse(MountError error, std::string_view path, std::string_view why) {
  return {error, std::string(path) + ": " + std::string(why)};
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

// The errno of a failed openat as a MountFailure (ELOOP is handled by the caller).
MountFailure FromErrno(int err, std::string_view path) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
      return Refuse(MountError::kNotFound, path, "no such file");
    case ENXIO:  // a socket
    case ENODEV:
      return Refuse(MountError::kNotRegularFile, path, "not a regular file");
    default:
      return Refuse(MountError::kIo, path, strerror(err));
  }
}

// The state of one walk: the directories held from the root down, and what is left.
class Walk {
 public:
  Walk(std::string_view path, Fd root) : path_(path) { dirs_.push_back(std::move(root)); }

  Fd Run(std::deque<std::string> pending, MountFailure* failure) {
    pending_ = std::move(pending);
    while (!pending_.empty()) {
      std::string name = std::move(pending_.front());
      pending_.pop_front();
      if (name.empty() || name == ".") continue;  // only from a link target ("a//b", "./b")
      if (name == "..") {
        if (dirs_.size() == 1) return Fail(failure, MountError::kOutsideMount, "leaves the mount");
        dirs_.pop_back();
        continue;
      }
      if (name.front() == '.') return Fail(failure, MountError::kNotFound, "hidden name");
      const bool last = pending_.empty();
      const int flags = last ? O_RDONLY | O_NONBLOCK | O_NOCTTY : O_RDONLY | O_DIRECTORY;
      const int fd = ::openat(dirs_.back().get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        if (last) return Fd(fd);
        dirs_.emplace_back(fd);
        continue;
      }
      const int err = errno;
      // O_NOFOLLOW on a link: ELOOP on Linux, EMLINK on FreeBSD; with O_DIRECTORY some
      // systems say ENOTDIR. readlinkat tells a link from the rest.
      if (err != ELOOP && err != EMLINK && err != ENOTDIR) {
        *failure = FromErrno(err, path_);
        return Fd();
      }
      if (!FollowLink(name, failure)) return Fd();
    }
    // The path ended on a ".." or "." from a link target: a directory.
    return Fail(failure, MountError::kNotRegularFile, "a directory");
  }

 private:
  Fd Fail(MountFailure* failure, MountError error, std::string_view why) {
    *failure = Refuse(error, path_, why);
    return Fd();
  }

  // Rule 3: splices the target of link `name` in front of what is left.
  bool FollowLink(const std::string& name, MountFailure* failure) {
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(dirs_.back().get(), name.c_str(), target, sizeof target);
    if (n < 0) {
      *failure = errno == EINVAL ? Refuse(MountError::kNotFound, path_, "no such file")
                                 : FromErrno(errno, path_);
      return false;
    }
    if (++hops_ > kMaxSymlinkHops) {
      Fail(failure, MountError::kNotFound, "too many symbolic links (a loop?)");
      return false;
    }
    const std::string_view link(target, static_cast<size_t>(n));
    if (link.empty() || link.front() == '/') {
      Fail(failure, MountError::kOutsideMount, "a symbolic link to an absolute path");
      return false;
    }
    std::vector<std::string> parts = SplitPath(link);
    pending_.insert(pending_.begin(), parts.begin(), parts.end());
    return true;
  }

  std::string_view path_;
  std::vector<Fd> dirs_;
  std::deque<std::string> pending_;
  int hops_ = 0;
};

}  // namespace

MountFailure CheckMountPath(std::string_view relative) {
  if (relative.empty()) return Refuse(MountError::kNotFound, relative, "empty path");
  if (relative.size() > kMaxPathBytes) return Refuse(MountError::kNotFound, "(path)", "too long");
  if (relative.front() == '/') return Refuse(MountError::kOutsideMount, relative, "absolute path");
  if (relative.find('\0') != std::string_view::npos) {
    return Refuse(MountError::kNotFound, "(path)", "NUL in path");
  }
  if (relative.find('\\') != std::string_view::npos) {
    return Refuse(MountError::kNotFound, relative, "backslash in path");
  }
  for (const std::string& part : SplitPath(relative)) {
    if (part == "..") return Refuse(MountError::kOutsideMount, relative, "\"..\" in path");
    if (part.empty() || part == ".") {
      return Refuse(MountError::kNotFound, relative, "empty or \".\" component");
    }
    if (part.front() == '.') return Refuse(MountError::kNotFound, relative, "hidden name");
  }
  return {};
}

Fd OpenInMount(const std::string& root, std::string_view relative, MountFailure* failure) {
  *failure = CheckMountPath(relative);
  if (failure->error != MountError::kNone) return Fd();
  Fd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.open()) {
    *failure = {MountError::kIo, "mount root " + root + ": " + strerror(errno)};
    return Fd();
  }
  std::vector<std::string> parts = SplitPath(relative);
  Walk walk(relative, std::move(root_fd));
  Fd fd = walk.Run(std::deque<std::string>(parts.begin(), parts.end()), failure);
  if (fd.open()) *failure = {};
  return fd;
}

}  // namespace keel
