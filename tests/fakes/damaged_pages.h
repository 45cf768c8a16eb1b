// DamagePages: overwrites whole pages of a SQLite file with 0xFF bytes, the way a failing
// disk or a stray writer leaves it (an invalid b-tree page type, so SQLite reports
// SQLITE_CORRUPT when it reads one). Header-only, for tests.
//
// DamageTable() damages the root page of a table and of each of its indexes, found through a
// connection of its own that first checkpoints the WAL into the main file (so the damage is
// what every connection reads). Other connections may stay open; ones that have the pages
// cached may still see the old ones: read through a fresh connection.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ledger/database.h"

namespace keel {

// Overwrites pages `first`..`first + count - 1` (1-based, as SQLite numbers them).
inline void DamagePages(const std::string& path, int64_t first, int64_t count, int64_t page_size) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  const std::vector<char> garbage(static_cast<size_t>(page_size), static_cast<char>(0xFF));
  for (int64_t page = first; page < first + count; ++page) {
    const off_t at = static_cast<off_t>((page - 1) * page_size);
    if (::pwrite(fd, garbage.data(), garbage.size(), at) != static_cast<ssize_t>(garbage.size())) {
      ::close(fd);
      throw std::runtime_error("cannot write " + path);
    }
  }
  ::fsync(fd);
  ::close(fd);
}

inline void DamageTable(const std::string& path, const std::string& table) {
  std::vector<int64_t> roots;
  int64_t page_size = 0;
  {
    std::string error;
    auto db = Database::Open(path, &error);
    if (!db) throw std::runtime_error("cannot open " + path + ": " + error);
    if (const std::string e = db->Exec("PRAGMA wal_checkpoint(TRUNCATE)"); !e.empty()) {
      throw std::runtime_error("checkpoint: " + e);
    }
    page_size = std::stoll(db->Pragma("page_size"));
    Statement rows = db->Prepare("SELECT rootpage FROM sqlite_schema WHERE tbl_name = ?1");
    rows.Bind(1, table);
    while (rows.Step()) roots.push_back(rows.Int64(0));
  }
  if (roots.empty()) throw std::runtime_error("no table " + table + " in " + path);
  for (const int64_t root : roots) DamagePages(path, root, 1, page_size);
}

}  // namespace keel
