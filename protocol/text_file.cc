#include "protocol/text_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include <sys/stat.h>

namespace keel {

std::optional<std::string> ReadTextFile(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  struct stat st {};
  int failure = 0;
  if (::fstat(fd, &st) != 0) {
    failure = errno;
  } else if (S_ISDIR(st.st_mode)) {
    failure = EISDIR;
  } else {
    char buffer[65536];
    while (true) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        text.append(buffer, static_cast<size_t>(n));
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        failure = errno;
        break;
      }
    }
  }
  ::close(fd);
  if (failure != 0) {
    *error = std::strerror(failure);
    return std::nullopt;
  }
  return text;
}

}  // namespace keel
