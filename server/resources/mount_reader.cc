#include "server/resources/mount_reader.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "protocol/utf8.h"
#include "server/resources/mime_type.h"
#include "server/resources/mount_path.h"

namespace keel {
namespace {

bool SameTime(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// Rule 3: what a change in place moves.
bool Unchanged(const struct stat& before, const struct stat& after) {
  return before.st_size == after.st_size && SameTime(before.st_mtim, after.st_mtim) &&
         SameTime(before.st_ctim, after.st_ctim);
}

MountReadResult Failed(MountError error, std::string message) {
  MountReadResult result;
  result.failure = {error, std::move(message)};
  return result;
}

// Reads up to `limit` bytes from `fd` into `*out`; false with errno on an error.
bool ReadUpTo(int fd, size_t limit, std::string* out) {
  out->resize(limit);
  size_t got = 0;
  while (got < limit) {
    const ssize_t n = ::read(fd, out->data() + got, limit - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out->resize(got);
  return true;
}

// One attempt of rule 3. `*changed` is set when the file moved under it.
MountReadResult ReadAttempt(const std::string& root, std::string_view relative,
                            const MountReadOptions& options, int attempt, bool* changed) {
  MountFailure failure;
  const Fd fd = OpenInMount(root, relative, &failure);
  if (!fd.open()) return Failed(failure.error, std::move(failure.message));
  const std::string path(relative);
  struct stat before {};
  if (::fstat(fd.get(), &before) != 0)
    return Failed(MountError::kIo, path + ": " + strerror(errno));
  if (!S_ISREG(before.st_mode))
    return Failed(MountError::kNotRegularFile, path + ": not a regular file");
  const auto size = static_cast<uint64_t>(before.st_size);
  if (size > options.max_bytes) {
    return Failed(MountError::kTooLarge, path + ": file is " + std::to_string(size) +
                                             " bytes, over the cap of " +
                                             std::to_string(options.max_bytes) + " bytes");
  }
  if (options.after_fstat) options.after_fstat(attempt);
  MountReadResult result;
  // One byte more than the size: a file that grew shows it without reading all of it.
  if (!ReadUpTo(fd.get(), static_cast<size_t>(size) + 1, &result.file.bytes)) {
    return Failed(MountError::kIo, path + ": " + strerror(errno));
  }
  struct stat after {};
  if (::fstat(fd.get(), &after) != 0) return Failed(MountError::kIo, path + ": " + strerror(errno));
  if (result.file.bytes.size() != size || !Unchanged(before, after)) {
    *changed = true;
    return Failed(MountError::kChangedWhileRead, path + ": changed while being read (" +
                                                     std::to_string(kReadAttempts) + " tries)");
  }
  result.file.mime_type = std::string(MimeTypeFor(relative));
  result.file.text = IsTextMimeType(result.file.mime_type) && IsValidUtf8(result.file.bytes);
  result.file.mtime_ms =
      static_cast<int64_t>(before.st_mtim.tv_sec) * 1000 + before.st_mtim.tv_nsec / 1000000;
  return result;
}

}  // namespace

MountReadResult ReadMountFile(const std::string& root, std::string_view relative,
                              const MountReadOptions& options) {
  MountReadResult result;
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    bool changed = false;
    result = ReadAttempt(root, relative, options, attempt, &changed);
    if (!changed) return result;
  }
  return result;
}

}  // namespace keel
