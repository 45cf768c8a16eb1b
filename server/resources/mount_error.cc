#include "server/resources/mount_error.h"

namespace keel {

const char* MountErrorName(MountError error) {
  switch (error) {
    case MountError::kNone:
      return "ok";
    case MountError::kNotFound:
      return "not found";
    case MountError::kOutsideMount:
      return "outside the mount";
    case MountError::kNotRegularFile:
      return "not a regular file";
    case MountError::kTooLarge:
      return "too large";
    case MountError::kChangedWhileRead:
      return "changed while being read";
    case MountError::kIo:
      return "I/O error";
  }
  return "?";
}

}  // namespace keel
