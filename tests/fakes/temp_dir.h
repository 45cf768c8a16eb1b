// TempDir: a fresh directory under /tmp (mkdtemp), removed with its contents on destruction.
// Header-only; one per test case.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace keel {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/keel_test_XXXXXX";
    if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // The path of `name` inside the directory.
  std::string File(const std::string& name) const { return path_ + "/" + name; }

  // Writes `contents` to `name` inside the directory and returns its path.
  std::string Write(const std::string& name, const std::string& contents) const {
    const std::string file = File(name);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << contents;
    if (!out) throw std::runtime_error("cannot write " + file);
    return file;
  }

 private:
  std::string path_;
};

}  // namespace keel
