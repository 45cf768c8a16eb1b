// SpawnChild: starts one command for RunProcess, set up as process_runner.h describes (items
// 1 and 2): argv executed without a shell (looked up in keel's PATH when argv[0] has no '/'),
// a new process group whose id is the child's pid, fds 0-3 wired to fresh pipes (stdin,
// stdout, stderr, progress), every other fd of keel closed in the child, exactly spec.env, an
// empty signal mask and every signal disposition the default. Why posix_spawn and not
// fork+exec: see process_runner.h.
//
// Invariants:
//  1. Every pipe is created close-on-exec, with both ends >= kMinParentFd, so a concurrent
//     spawn never inherits another run's pipes and no end is already the fd (0..3) it is
//     dup2'ed to in the child (dup2 onto itself would keep close-on-exec set).
//  2. On success keel holds only its own ends, non-blocking; the child's ends are closed in
//     keel (holding them would hide EOF). On failure every pipe is closed and pid is -1.
//
// Thread-safety: may be called concurrently from several threads; no global state.
#pragma once

#include <string>

#include <sys/types.h>

#include "server/runtime/fd.h"
#include "server/runtime/process_runner.h"

namespace keel {

// keel's ends of a child's pipes.
struct ChildPipes {
  Fd stdin_write;
  Fd stdout_read;
  Fd stderr_read;
  Fd progress_read;
};

struct SpawnedChild {
  pid_t pid = -1;  // -1: not started, see error
  ChildPipes pipes;
  std::string error;  // "cannot run 'x' in 'dir': No such file or directory", "pipe: ..."
};

// spec.argv must not be empty.
SpawnedChild SpawnChild(const ProcessSpec& spec);

// A close-on-exec pipe whose ends are both >= kMinParentFd (invariant 1); false and `error`
// set when it cannot be made.
bool MakePipe(Fd* read_end, Fd* write_end, std::string* error);

}  // namespace keel
