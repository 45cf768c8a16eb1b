// Catalog paths: what LoadCatalogFile does to a loaded catalog once it knows the file's
// directory. Every relative path becomes absolute against that directory: a command's cwd
// (tools, resource templates, completions; the default cwd is the directory itself), a
// resource's `file` and `directory`, a prompt image's `file`.
//
// What is checked here, and why the line falls where it does:
//  - commands are code: each command's cwd must be a directory, a command[0] with a '/' an
//    executable file, and a bare command[0] an executable file in a directory of keel's PATH
//    (what posix_spawnp will search), now: a typo, or a program outside the short PATH hosts
//    start keel with, is a start-up error, not a failing call hours later;
//  - files are data: a resource's file and an image file are neither read nor stat'ed here,
//    so a catalog may name files created after keel starts; a missing one is an error of the
//    read that needs it. A directory mount whose root does not exist is a warning only.
// Thread-safety: touches the file system (stat, access); runs once at start-up.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "server/catalog/catalog.h"

namespace keel {

// Adds a problem per command check that fails, and a warning per missing mount root.
void ResolveCatalogPaths(const std::filesystem::path& base, Catalog& catalog,
                         std::vector<std::string>* problems, std::vector<std::string>* warnings);

}  // namespace keel
