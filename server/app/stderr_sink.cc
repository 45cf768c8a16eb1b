#include "server/app/stderr_sink.h"

#include <cerrno>
#include <utility>

namespace keel {

bool StderrSink::Write(std::string_view text) {
  iovec iov{const_cast<char*>(text.data()), text.size()};
  ssize_t n;
  do {
    n = WriteSome(out_, &iov, 1);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return false;
  if (static_cast<size_t>(n) < text.size()) pending_.assign(text.substr(static_cast<size_t>(n)));
  return true;
}

bool StderrSink::CatchUp() {
  if (!pending_.empty()) {
    const std::string rest = std::exchange(pending_, std::string());
    if (!Write(rest)) pending_ = rest;
    if (!pending_.empty()) return false;
  }
  if (dropped_ == 0) return true;
  const std::string text = fmt::format("{} log line(s) dropped: stderr was full", dropped_);
  spdlog::memory_buf_t report;
  formatter_->format(spdlog::details::log_msg("", spdlog::level::warn, text), report);
  if (!Write({report.data(), report.size()})) return false;
  dropped_ = 0;
  return pending_.empty();
}

void StderrSink::sink_it_(const spdlog::details::log_msg& msg) {
  if (!CatchUp()) {
    ++dropped_;
    return;
  }
  spdlog::memory_buf_t line;
  formatter_->format(msg, line);
  if (!Write({line.data(), line.size()})) ++dropped_;
}

void StderrSink::flush_() { CatchUp(); }

}  // namespace keel
