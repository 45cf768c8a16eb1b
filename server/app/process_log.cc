#include "server/app/process_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include "server/app/stderr_sink.h"
#include "server/transport/stdio_fd.h"

namespace keel {

void InstallStderrLogger() {
  auto sink = std::make_shared<StderrSink>(TakeStdio(STDERR_FILENO, O_WRONLY));
  auto logger = std::make_shared<spdlog::logger>("keel", std::move(sink));
  logger->set_pattern("keel %L %Y-%m-%dT%H:%M:%S.%e %v");
  logger->set_level(spdlog::level::warn);  // quiet by default: hosts surface any stderr
  spdlog::set_default_logger(logger);
}

std::string ConfigureProcessLog(const std::string& level, const std::string& file) {
  if (!file.empty()) {
    // spdlog would create missing directories: a mistyped path must fail instead.
    const std::filesystem::path directory = std::filesystem::path(file).parent_path();
    std::error_code ec;
    if (!directory.empty() && !std::filesystem::is_directory(directory, ec)) {
      return directory.string() + (std::filesystem::exists(directory, ec)
                                       ? " is not a directory"
                                       : ": no such directory (keel creates none)");
    }
    try {
      auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, /*truncate=*/false);
      auto logger = std::make_shared<spdlog::logger>("keel-file", sink);
      logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %L [%t] %v");
      logger->flush_on(spdlog::level::info);
      spdlog::set_default_logger(logger);
    } catch (const spdlog::spdlog_ex& e) {
      return e.what();
    }
  }
  spdlog::set_level(spdlog::level::from_str(level));
  return std::string();
}

}  // namespace keel
