// Process logging (spdlog) for operators: stderr by default, or a file. Never stdout,
// which carries the protocol only. Call InstallStderrLogger() first thing in main():
// spdlog's default logger writes to stdout until it is replaced.
// Any thread may log. On stderr a line never waits: one that does not fit is dropped and
// counted, and the count is reported once stderr has room (StderrSink). A --log-file is
// written directly (a disk may be slow, but it drains).
#pragma once

#include <string>

namespace keel {

// Installs a stderr logger at `warn`. Cannot fail.
void InstallStderrLogger();

// Applies the operator's choice: level (trace|debug|info|warn|error|off) and an optional
// file (appended; its directory must exist). Returns an empty string, or why the file could
// not be opened.
std::string ConfigureProcessLog(const std::string& level, const std::string& file);

}  // namespace keel
