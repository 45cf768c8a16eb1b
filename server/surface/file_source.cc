#include "server/surface/file_source.h"

#include "server/resources/mime_type.h"
#include "server/resources/mount_listing.h"
#include "server/resources/mount_reader.h"

namespace keel {
namespace {

// Directories below a mount root listed by resources/list.
constexpr int kMaxListedDepth = 16;

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

FileBytes FromMount(const MountReadResult& read) {
  FileBytes out;
  if (read.ok()) {
    out.status = FileBytes::Status::kOk;
    out.bytes = read.file.bytes;
    out.mime_type = read.file.mime_type;
    return out;
  }
  // A directory, FIFO, socket or device under a mount is no resource: not found, like a
  // path that names nothing (mount_error.h keeps it apart for the logs).
  const bool not_found = MeansResourceNotFound(read.failure.error) ||
                         read.failure.error == MountError::kNotRegularFile;
  out.status = not_found ? FileBytes::Status::kNotFound : FileBytes::Status::kFailed;
  out.error = read.failure.message;
  return out;
}

}  // namespace

FileBytes ReadResourceFile(const std::string& path, int64_t max_bytes) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) {
    return FileBytes{FileBytes::Status::kNotFound, "", "", path + ": not a file path"};
  }
  const std::string root = slash == 0 ? "/" : path.substr(0, slash);
  MountReadOptions options;
  options.max_bytes = static_cast<uint64_t>(max_bytes);
  return FromMount(ReadMountFile(root, path.substr(slash + 1), options));
}

FileBytes ReadMountedFile(const std::string& root, const std::string& relative, int64_t max_bytes) {
  MountReadOptions options;
  options.max_bytes = static_cast<uint64_t>(max_bytes);
  return FromMount(ReadMountFile(root, relative, options));
}

std::vector<ListedFile> ListMountedFiles(const std::string& root) {
  std::vector<ListedFile> files;
  for (const MountEntry& entry : ListMount(root, kMaxListedFiles, kMaxListedDepth).entries) {
    files.push_back(ListedFile{entry.path, entry.size});
  }
  return files;
}

std::string PercentEncodePath(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (IsUnreserved(u) || c == '/') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = HexValue(text[i + 1]);
    const int low = HexValue(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

std::string MimeTypeOfName(const std::string& name) { return std::string(MimeTypeFor(name)); }

}  // namespace keel
