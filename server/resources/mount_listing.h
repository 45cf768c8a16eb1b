// ListMount: the files a directory mount serves — what resources/list shows for it.
// Thread-safety: a function of the file system; any thread. Blocks on disk I/O, bounded by
// its limits, so a caller on the loop thread keeps them small or uses a worker.
//
// Rules:
//  1. Entries are the regular files under the root, recursively, as '/'-separated paths
//     relative to the root, sorted by byte order of the whole path ("a-b" before "a/b").
//     The walk visits each directory's entries in that order (a directory sorts as its
//     name plus "/"), so stopping early yields exactly the first entries of the full list.
//  2. Skipped, silently: hidden names (starting with "."), files and directories alike —
//     so .git/ and .env are never listed (mount_path.h refuses to read them too); FIFOs,
//     sockets, devices; symbolic links that do not resolve, under mount_path.h's rules, to
//     a regular file inside the root.
//  3. A symbolic link to a regular file inside the root is listed under the link's own
//     path with the target's size and mtime (reading that path reads the target). A
//     symbolic link to a directory is never entered, inside the root or not: no loops, and
//     each file is listed once, where it lives.
//  4. Bounds: at most `max_entries` files; directories at most `max_depth` levels below
//     the root are entered (0: the root's own files only; capped at kMaxListDepth); at most
//     kMaxDirectoryEntries names read per directory. Hitting any bound sets `truncated`:
//     the list is a correct prefix (or subset, for the depth and directory bounds), not
//     the whole.
//  5. A directory that cannot be opened below the root is skipped and sets `truncated`;
//     only a root that cannot be opened is a failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/resources/mount_error.h"

namespace keel {

// Deeper trees are not listed past this (each level holds a directory fd open).
constexpr int kMaxListDepth = 64;
// Names read from one directory: bounds memory for a directory of millions of files.
constexpr size_t kMaxDirectoryEntries = 100000;

struct MountEntry {
  std::string path;  // relative to the root, '/'-separated
  uint64_t size = 0;
  int64_t mtime_ms = 0;  // since the Unix epoch
};

struct MountListing {
  MountFailure failure;  // set only when the root itself cannot be opened
  std::vector<MountEntry> entries;
  bool truncated = false;  // rule 4/5: some files may be missing
};

MountListing ListMount(const std::string& root, size_t max_entries, int max_depth);

}  // namespace keel
