// Random identifiers from the kernel's CSPRNG (getrandom): task ids (which must be
// unguessable on stdio, MCP 2025-11-25 tasks) and W3C trace and span ids.
// Thread-safety: pure; any thread.
#pragma once

#include <cstddef>
#include <string>

namespace keel {

// `bytes` (at most 32) random bytes as 2*bytes lowercase hex digits. Throws
// std::runtime_error if the kernel gives none (getrandom unsupported).
std::string RandomHex(size_t bytes);

}  // namespace keel
