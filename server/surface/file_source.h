// FileSource: the bytes of a catalog resource's file or of a file under a directory mount,
// as the resource readers need them: the file's content and MIME type, or why there is none,
// in the two kinds resources/read answers differently (not found: the URI names nothing
// readable; failed: it does, but the read went wrong). Built on server/resources/
// (mount_reader.h: confinement, regular files only, the size cap, a file changed while read).
//
// Thread-safety: reentrant; blocking file I/O, so worker threads only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel {

struct FileBytes {
  enum class Status { kOk, kNotFound, kFailed };
  Status status = Status::kFailed;
  std::string bytes;      // kOk
  std::string mime_type;  // kOk: guessed from the name
  std::string error;      // otherwise: what went wrong, for the answer's text
};

// A file named by absolute path (a resource's `file`).
FileBytes ReadResourceFile(const std::string& path, int64_t max_bytes);
// `relative` (decoded, from the URI) under the mount root `root`: outside the root, a
// symlink out of it, or not a regular file is not found.
FileBytes ReadMountedFile(const std::string& root, const std::string& relative, int64_t max_bytes);
struct ListedFile {
  std::string path;  // relative to the root, '/'-separated
  uint64_t size = 0;
};
// The regular files under a mount root, sorted, at most kMaxListedFiles (hidden files and
// anything outside the root skipped); empty when the root cannot be listed.
inline constexpr size_t kMaxListedFiles = 1000;
std::vector<ListedFile> ListMountedFiles(const std::string& root);
// A relative path as it appears in a URI (each byte outside RFC 3986's unreserved set and
// '/' percent-encoded), and back (nullopt: a malformed escape).
std::string PercentEncodePath(const std::string& path);
std::optional<std::string> PercentDecode(std::string_view text);

// The MIME type keel guesses for a file name.
std::string MimeTypeOfName(const std::string& name);

}  // namespace keel
