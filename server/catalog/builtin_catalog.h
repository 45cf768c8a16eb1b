// The built-in demo catalog: keel's default tools (echo, the ledger's demo tools and the
// simulated deployment backend's) in the
// catalog format of docs/catalog.md, used when no --catalog is given. It describes the
// tools in server/tools/ (their names, descriptions and input schemas are the same; a test
// compares them) and always loads without problems (a test checks that too).
#pragma once

#include <string_view>

namespace keel {

std::string_view BuiltinCatalogJson();

}  // namespace keel
