// StdioFd: keel's own handle on a stdio stream it inherited (the protocol's stdin and
// stdout, and stderr for the process log), for reads and writes that never block the
// thread making them, without changing the flags of the open file description keel shares
// with its parent. Setting O_NONBLOCK there (as keel once did) outlives keel: on a terminal
// the next program then fails with EAGAIN (BP-1), and on a pipe shared by stdout and
// stderr it makes another writer's writes fail.
//
// How each kind of file is handled (TakeStdio):
//  - a pipe or a character device (a terminal, /dev/null): reopened through /proc/self/fd/N,
//    which on Linux opens a new description of the same pipe or device; its O_NONBLOCK is
//    keel's alone (kOwn);
//  - a socket (Node.js gives its children socketpairs): a duplicate; every call passes
//    MSG_DONTWAIT, which makes one call non-blocking without touching any flag (kSocket);
//  - a regular file (`keel < transcript.jsonl > out`) or anything else: a duplicate, as is.
//    A file never makes a read or write wait for a peer, and reopening it would lose its
//    offset and O_APPEND (kFile);
//  - a pipe or device that cannot be reopened (no /proc; the terminal of another user): a
//    duplicate, as is; a call goes ahead only once poll() says it will not wait, and a write
//    is cut to PIPE_BUF bytes, which a pipe with room takes whole (kPollFirst).
// The descriptor is close-on-exec and lives as long as the process (nothing closes it).
// A value type: copies share the descriptor. The functions are as thread-safe as the
// underlying system calls; callers serialise writes that must not interleave.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

namespace keel {

struct StdioFd {
  enum class Kind { kOwn, kSocket, kFile, kPollFirst };
  int fd = -1;  // -1: the stream could not be taken (errno says why)
  Kind kind = Kind::kOwn;
};

// Takes `inherited_fd` (0, 1 or 2) for reading (O_RDONLY) or writing (O_WRONLY).
StdioFd TakeStdio(int inherited_fd, int access);

// read()/writev() that never wait: -1 with errno EAGAIN when nothing can be moved now; other
// errors and counts as the system calls report them (a socket write never raises SIGPIPE).
ssize_t ReadSome(const StdioFd& in, void* buffer, size_t size);
ssize_t WriteSome(const StdioFd& out, const iovec* iov, int count);

}  // namespace keel
