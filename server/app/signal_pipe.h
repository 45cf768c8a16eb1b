// The signal pipe: SIGTERM, SIGINT and SIGHUP are each written as one byte (the signal
// number) to a non-blocking pipe that the event loop watches, so everything a signal causes
// runs on the loop thread (a handler may do no more than write(2)). SIGPIPE is ignored: a
// closed stdout shows up as EPIPE instead of killing keel.
//
// Thread: install once per process, on the main thread, before serving. The pipe stays open
// until exit (a signal may arrive up to the last moment); a byte that finds the pipe full
// (64 KiB of signals the loop has not read) is dropped.
#pragma once

namespace keel {

// Installs the handlers. Returns the pipe's read end, or -1 with errno set.
int InstallSignalPipe();

}  // namespace keel
