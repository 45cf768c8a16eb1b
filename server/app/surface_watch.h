// SurfaceWatch: keeps the session's resources in step with the disk — the files and the
// mounted directories of the surface in force are watched (server/resources/file_watch.h),
// and each batch of changes goes to Session::OnResourceFilesChanged (mounts listed again,
// list_changed and resources/updated sent). A kernel queue overflow counts as every watched
// path changed.
//
// Thread: loop thread only. Owner: the server; it unwatches its fd before it goes.
// Without inotify (or when it cannot start) changes are simply not noticed: logged once.
#pragma once

#include <memory>

#include "server/resources/file_watch.h"
#include "server/runtime/event_loop.h"
#include "server/session/session.h"

namespace keel {

class SurfaceWatch {
 public:
  SurfaceWatch(EventLoop& loop, Session& session) : loop_(loop), session_(session) {}
  ~SurfaceWatch();
  SurfaceWatch(const SurfaceWatch&) = delete;
  SurfaceWatch& operator=(const SurfaceWatch&) = delete;

  // Watches the paths of the session's surface now (after start-up and every reload).
  void Follow();

 private:
  void OnReadable();

  EventLoop& loop_;
  Session& session_;
  std::unique_ptr<FileWatch> watch_;
};

}  // namespace keel
