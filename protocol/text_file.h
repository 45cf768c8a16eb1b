// ReadTextFile: the whole content of a file that a flag names (--config, --catalog, --policy,
// --http-token-file), or why it cannot be read.
//
// Contract: on success, returns the file's bytes as they are (no decoding, no newline
// handling). Otherwise returns nullopt and sets *error to the system's reason
// (strerror: "No such file or directory", "Permission denied", "Is a directory", ...).
// A directory is an error: std::ifstream "opens" one on Linux and reads nothing, so a
// directory named where a file belongs would otherwise read as an empty file.
//
// Not for large or growing files: it reads everything into memory at once.
#pragma once

#include <optional>
#include <string>

namespace keel {

std::optional<std::string> ReadTextFile(const std::string& path, std::string* error);

}  // namespace keel
