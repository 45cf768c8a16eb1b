#include "server/resources/mime_type.h"

#include <cctype>
#include <string>

namespace keel {
namespace {

struct MimeEntry {
  std::string_view extension;  // lower case, without the dot
  std::string_view mime;
};

constexpr MimeEntry kMimeTable[] = {
    {"txt", "text/plain"},
    {"text", "text/plain"},
    {"log", "text/plain"},
    {"conf", "text/plain"},
    {"cfg", "text/plain"},
    {"ini", "text/plain"},
    {"md", "text/markdown"},
    {"markdown", "text/markdown"},
    {"json", "application/json"},
    {"yaml", "text/yaml"},
    {"yml", "text/yaml"},
    {"toml", "application/toml"},
    {"html", "text/html"},
    {"htm", "text/html"},
    {"css", "text/css"},
    {"csv", "text/csv"},
    {"xml", "application/xml"},
    {"js", "text/javascript"},
    {"mjs", "text/javascript"},
    {"ts", "text/x-typescript"},
    {"sh", "text/x-shellscript"},
    {"py", "text/x-python"},
    {"c", "text/x-c"},
    {"h", "text/x-c"},
    {"cc", "text/x-c++"},
    {"cpp", "text/x-c++"},
    {"hpp", "text/x-c++"},
    {"rs", "text/x-rust"},
    {"go", "text/x-go"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"pdf", "application/pdf"},
};

bool EndsWith(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

}  // namespace

std::string_view MimeTypeFor(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return "application/octet-stream";
  std::string extension(name.substr(dot + 1));
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const MimeEntry& entry : kMimeTable) {
    if (entry.extension == extension) return entry.mime;
  }
  return "application/octet-stream";
}

bool IsTextMimeType(std::string_view mime) {
  return mime.substr(0, 5) == "text/" || mime == "application/json" || mime == "application/toml" ||
         mime == "application/xml" || mime == "image/svg+xml" || EndsWith(mime, "+json") ||
         EndsWith(mime, "+xml");
}

}  // namespace keel
