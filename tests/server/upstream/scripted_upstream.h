// The scripted upstream (scripted_upstream.mjs, run by node) as UpstreamLink tests start
// it, and small helpers around a started link: a direct tools/call on the instance in
// service, and the files the script keeps in its directory. Header-only; test thread.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "server/upstream/upstream_link.h"

namespace keel {

// `modes`: the script's MODES (its header comment); `dir` keeps instances.log and runs.log.
inline UpstreamOptions ScriptedUpstream(const TempDir& dir, const std::string& modes = "") {
  UpstreamOptions options;
  options.command.argv = {"node", KEEL_SOURCE_DIR "/tests/server/upstream/scripted_upstream.mjs",
                          modes, dir.path()};
  const char* path = ::getenv("PATH");
  options.command.env = {std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin")};
  options.start_timeout = std::chrono::seconds(10);
  options.shutdown_grace = std::chrono::milliseconds(600);
  return options;
}

inline std::shared_ptr<UpstreamLink> StartedLink(const UpstreamOptions& options) {
  auto link = std::make_shared<UpstreamLink>(options);
  std::string error;
  const bool started = link->Start(&error);
  INFO(error);
  REQUIRE(started);
  return link;
}

inline TimePoint SecondsFromNow(int seconds) {
  return std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
}

// tools/call `tool` on `client` and its structuredContent (null when there is none or the
// call failed; `why` says how).
inline Json CallScripted(UpstreamClient& client, const std::string& tool,
                         std::string* why = nullptr) {
  std::string ignored;
  std::optional<Json> answer =
      client.Request("tools/call", Json{{"name", tool}, {"arguments", Json::object()}},
                     SecondsFromNow(10), CancellationToken(), why != nullptr ? why : &ignored);
  if (!answer) return Json();
  return answer->value("structuredContent", Json());
}

// The lines of `name` in the script's directory (0 when it does not exist).
inline size_t LinesIn(const TempDir& dir, const std::string& name) {
  std::ifstream in(dir.File(name));
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

}  // namespace keel
