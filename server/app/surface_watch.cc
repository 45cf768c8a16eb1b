#include "server/app/surface_watch.h"

#include <poll.h>

#include <string>
#include <vector>

#include <spdlog/spdlog.h>

namespace keel {

SurfaceWatch::~SurfaceWatch() {
  if (watch_) loop_.Unwatch(watch_->fd());
}

void SurfaceWatch::Follow() {
  const std::shared_ptr<Surface>& surface = session_.surface();
  const std::vector<std::string> paths =
      surface ? surface->resources().WatchedPaths() : std::vector<std::string>();
  if (watch_) {
    loop_.Unwatch(watch_->fd());
    watch_.reset();
  }
  if (paths.empty()) return;
  std::string error;
  watch_ = FileWatch::Create(FileWatch::Limits{}, &error);
  if (!watch_) {
    spdlog::warn("resource files are not watched for changes: {}", error);
    return;
  }
  for (const std::string& path : paths) {
    if (!watch_->Add(path, &error)) spdlog::warn("cannot watch {}: {}", path, error);
  }
  loop_.Watch(watch_->fd(), POLLIN, [this](short) { OnReadable(); });
}

void SurfaceWatch::OnReadable() {
  FileWatch::Changes changes = watch_->Drain();
  if (changes.overflow) {
    const std::shared_ptr<Surface>& surface = session_.surface();
    if (surface) changes.paths = surface->resources().WatchedPaths();
  }
  if (!changes.paths.empty()) session_.OnResourceFilesChanged(changes.paths);
}

}  // namespace keel
