// echo {text}: returns its text unchanged. Always on; the smallest end-to-end check that
// a host can reach keel. Reentrant, read-only.
#pragma once

#include <memory>

#include "server/catalog/tool.h"

namespace keel {

std::unique_ptr<Tool> MakeEchoTool();

}  // namespace keel
