// MimeTypeFor and IsTextMimeType: the type a resource read announces, and whether its
// content may go as text.
#include "server/resources/mime_type.h"

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::mime_type_test {
namespace {

TEST_CASE("common extensions map to their MIME types case-insensitively", "[mime]") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"a.txt", "text/plain"},
      {"notes/readme.md", "text/markdown"},
      {"x.json", "application/json"},
      {"c.yaml", "text/yaml"},
      {"c.yml", "text/yaml"},
      {"pyproject.toml", "application/toml"},
      {"run.sh", "text/x-shellscript"},
      {"tool.py", "text/x-python"},
      {"app.log", "text/plain"},
      {"nginx.conf", "text/plain"},
      {"setup.ini", "text/plain"},
      {"index.html", "text/html"},
      {"data.csv", "text/csv"},
      {"logo.png", "image/png"},
      {"photo.jpg", "image/jpeg"},
      {"photo.JPEG", "image/jpeg"},
      {"anim.gif", "image/gif"},
      {"icon.svg", "image/svg+xml"},
      {"paper.pdf", "application/pdf"},
      {"README.MD", "text/markdown"},
      {"archive.tar.gz", "application/octet-stream"},
      {"Makefile", "application/octet-stream"},
      {"dir.d/noext", "application/octet-stream"},
      {"trailing.", "application/octet-stream"},
  };
  for (const auto& [path, mime] : table) {
    INFO(path);
    CHECK(MimeTypeFor(path) == mime);
  }
}

TEST_CASE("text types are text and images other than SVG and PDFs are binary", "[mime]") {
  for (const char* mime : {"text/plain", "text/markdown", "text/yaml", "application/json",
                           "application/toml", "image/svg+xml", "application/ld+json"}) {
    INFO(mime);
    CHECK(IsTextMimeType(mime));
  }
  for (const char* mime :
       {"image/png", "image/jpeg", "image/gif", "application/pdf", "application/octet-stream"}) {
    INFO(mime);
    CHECK_FALSE(IsTextMimeType(mime));
  }
}

}  // namespace
}  // namespace keel::mime_type_test
