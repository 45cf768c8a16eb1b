#include "server/runtime/process_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>

#include <vector>

#include "server/runtime/nonblocking.h"

namespace keel {
namespace {

// Pipes live above this number in keel (invariant 1).
constexpr int kMinParentFd = 10;

// Both ends of the child's four pipes; the child's ends are closed once it runs.
struct PipeSet {
  Fd stdin_read, stdin_write;
  Fd stdout_read, stdout_write;
  Fd stderr_read, stderr_write;
  Fd progress_read, progress_write;
};

bool MakePipes(PipeSet& p, std::string* error) {
  return MakePipe(&p.stdin_read, &p.stdin_write, error) &&
         MakePipe(&p.stdout_read, &p.stdout_write, error) &&
         MakePipe(&p.stderr_read, &p.stderr_write, error) &&
         MakePipe(&p.progress_read, &p.progress_write, error);
}

// The child's fds: 0-3 from the pipes, its working directory, nothing else open.
void InitFileActions(posix_spawn_file_actions_t* actions, const PipeSet& p,
                     const std::string& cwd) {
  posix_spawn_file_actions_init(actions);
  posix_spawn_file_actions_adddup2(actions, p.stdin_read.get(), 0);
  posix_spawn_file_actions_adddup2(actions, p.stdout_write.get(), 1);
  posix_spawn_file_actions_adddup2(actions, p.stderr_write.get(), 2);
  posix_spawn_file_actions_adddup2(actions, p.progress_write.get(), 3);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(actions, cwd.c_str());
  // Everything else keel has open (protocol fd, database fds, other runs' pipes) goes.
  posix_spawn_file_actions_addclosefrom_np(actions, 4);
}

// A new process group (id = the child's pid), no blocked signal, every disposition default.
void InitAttributes(posix_spawnattr_t* attr) {
  posix_spawnattr_init(attr);
  posix_spawnattr_setflags(attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(attr, 0);
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  posix_spawnattr_setsigmask(attr, &no_signals);
  posix_spawnattr_setsigdefault(attr, &all_signals);  // keel ignores SIGPIPE; the child must not
}

// The char* array exec wants, pointing into `strings` (which must outlive it).
std::vector<char*> NullTerminated(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// posix_spawn(p)'s return value: 0, or the errno of the failed step or exec.
int Spawn(const ProcessSpec& spec, const PipeSet& pipes, pid_t* pid) {
  posix_spawn_file_actions_t actions;
  InitFileActions(&actions, pipes, spec.cwd);
  posix_spawnattr_t attr;
  InitAttributes(&attr);
  std::vector<char*> argv = NullTerminated(spec.argv);
  std::vector<char*> envp = NullTerminated(spec.env);
  const bool path_lookup = spec.argv[0].find('/') == std::string::npos;
  const int rc = path_lookup ? posix_spawnp(pid, argv[0], &actions, &attr, argv.data(), envp.data())
                             : posix_spawn(pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

}  // namespace

bool MakePipe(Fd* read_end, Fd* write_end, std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + strerror(errno);
    return false;
  }
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, kMinParentFd);
    if (moved < 0) {
      *error = std::string("fcntl: ") + strerror(errno);
      return false;
    }
    end = Fd(moved);
  }
  *read_end = std::move(ends[0]);
  *write_end = std::move(ends[1]);
  return true;
}

SpawnedChild SpawnChild(const ProcessSpec& spec) {
  SpawnedChild child;
  PipeSet pipes;
  if (!MakePipes(pipes, &child.error)) return child;
  pid_t pid = -1;
  if (const int rc = Spawn(spec, pipes, &pid); rc != 0) {
    child.error = "cannot run '" + spec.argv[0] + "'";
    if (!spec.cwd.empty()) child.error += " in '" + spec.cwd + "'";
    child.error += std::string(": ") + strerror(rc);
    return child;
  }
  child.pid = pid;
  // The child's ends (stdin_read, *_write) close with `pipes`: they belong to the child now.
  child.pipes.stdin_write = std::move(pipes.stdin_write);
  child.pipes.stdout_read = std::move(pipes.stdout_read);
  child.pipes.stderr_read = std::move(pipes.stderr_read);
  child.pipes.progress_read = std::move(pipes.progress_read);
  for (const Fd* fd : {&child.pipes.stdin_write, &child.pipes.stdout_read, &child.pipes.stderr_read,
                       &child.pipes.progress_read}) {
    SetNonBlocking(fd->get());
  }
  return child;
}

}  // namespace keel
