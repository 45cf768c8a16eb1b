#include "server/runtime/process_attempt.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <vector>

namespace keel {
namespace {

struct ProcStat {
  char state = '?';
  int64_t pgrp = 0;
  int64_t threads = 0;
  int64_t start_ticks = 0;
};

// /proc/<pid>/stat; nullopt when the process is gone or the line cannot be read.
std::optional<ProcStat> ReadStat(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces or ')': fields 3 on
  // follow the last ')'.
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 1));
  std::vector<std::string> f{std::istream_iterator<std::string>(fields),
                             std::istream_iterator<std::string>()};
  if (f.size() < 20 || f[0].size() != 1) return std::nullopt;  // f[i] is field i + 3
  ProcStat stat;
  stat.state = f[0][0];
  stat.pgrp = std::strtoll(f[2].c_str(), nullptr, 10);
  stat.threads = std::strtoll(f[17].c_str(), nullptr, 10);
  stat.start_ticks = std::strtoll(f[19].c_str(), nullptr, 10);
  return stat;
}

// Whether some process of group `pgid` can still run code: one that is not a zombie (a
// zombie leader with threads still running counts as running). Unsure (no /proc): true.
bool AnyRunningMember(int64_t pgid) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return true;
  bool running = false;
  while (const dirent* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::optional<ProcStat> stat = ReadStat(name);
    if (!stat || stat->pgrp != pgid) continue;  // gone meanwhile, or another group
    const bool dead = (stat->state == 'Z' && stat->threads <= 1) || stat->state == 'X';
    if (!dead) {
      running = true;
      break;
    }
  }
  ::closedir(proc);
  return running;
}

}  // namespace

const std::string& BootId() {
  static const std::string* const boot_id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);  // stays empty when the file cannot be read
    return new std::string(id);
  }();
  return *boot_id;
}

LedgerAttempt StartingAttempt() {
  LedgerAttempt attempt;
  attempt.boot_id = BootId();
  return attempt;
}

LedgerAttempt SpawnedAttempt(pid_t pid) {
  LedgerAttempt attempt = StartingAttempt();
  attempt.pgid = pid;
  if (const std::optional<ProcStat> stat = ReadStat(std::to_string(pid))) {
    attempt.start_ticks = stat->start_ticks;
  }
  return attempt;
}

bool AttemptGone(const LedgerAttempt& attempt) {
  if (!attempt.boot_id.empty() && !BootId().empty() && attempt.boot_id != BootId()) return true;
  if (attempt.pgid <= 0) return false;  // started, never identified: cannot tell
  if (::kill(static_cast<pid_t>(-attempt.pgid), 0) == -1 && errno == ESRCH) return true;
  if (attempt.start_ticks > 0) {
    const std::optional<ProcStat> leader = ReadStat(std::to_string(attempt.pgid));
    if (leader && leader->start_ticks != attempt.start_ticks) return true;  // a reused id
  }
  return !AnyRunningMember(attempt.pgid);
}

bool AttemptGoneHere(const LedgerAttempt& attempt) {
  if (attempt.boot_id.empty() || attempt.boot_id != BootId()) return false;
  return AttemptGone(attempt);
}

}  // namespace keel
