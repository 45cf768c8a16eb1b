// MimeTypeFor: the MIME type a resource read announces, chosen by the file name's last
// extension (case-insensitive) from a fixed table of common types; everything else is
// application/octet-stream. IsTextMimeType: whether a type's content may be sent as MCP
// `text` (it still has to be valid UTF-8; otherwise it goes as a base64 `blob`).
// Pure functions; reentrant.
//
// The table (text unless marked binary; a hidden file such as .env is never served at all,
// mount_path.h):
//   .txt .log .conf .cfg .ini .text           text/plain
//   .md .markdown                             text/markdown
//   .json                                     application/json
//   .yaml .yml                                text/yaml
//   .toml                                     application/toml
//   .html .htm / .css / .csv / .xml           text/html, text/css, text/csv, application/xml
//   .js .mjs / .ts                            text/javascript, text/x-typescript
//   .sh / .py / .c .h / .cc .cpp .hpp / .rs / .go   text/x-shellscript, text/x-python,
//                                             text/x-c, text/x-c++, text/x-rust, text/x-go
//   .svg                                      image/svg+xml (text: it is XML)
//   .png .jpg .jpeg .gif .webp                image/png, image/jpeg, image/gif, image/webp (binary)
//   .pdf                                      application/pdf (binary)
#pragma once

#include <string_view>

namespace keel {

std::string_view MimeTypeFor(std::string_view path);

// text/*, application/json, application/toml, application/xml, image/svg+xml, and any
// type ending in +json or +xml.
bool IsTextMimeType(std::string_view mime);

}  // namespace keel
