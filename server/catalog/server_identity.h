// ServerIdentity: how a serving keel introduces itself, from the catalog's `server` section
// (docs/catalog.md): the serverInfo name, title and version of initialize (and of the
// 2026-07-28 serverInfo in _meta), and the instructions initialize and server/discover give
// the model. A field left out keeps keel's own: "keel", "keel reliable MCP server", keel's
// version, and instructions generated from what keel actually serves
// (session_instructions.h).
#pragma once

#include <optional>
#include <string>

namespace keel {

struct ServerIdentity {
  std::optional<std::string> name;
  std::optional<std::string> title;
  std::optional<std::string> version;
  std::optional<std::string> instructions;
};

}  // namespace keel
