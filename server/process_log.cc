#include "server/process_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include "server/stderr_sink.h"
#include "server/stdio_fd.h"

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
