// KillSwitchAnswer: what a write-class call answers when the kill switch (OPS-2) stops it:
// one isError result, structuredContent.error.type "kill_switch", naming the tool and its
// effect class, and saying that nothing ran. The same answer whoever decided it: the call
// runner before the tool starts, or a tool that reads the switch inside its own write
// transaction (ToolSpec::kill_switch_in_transaction).
//
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "ledger/kill_switch.h"
#include "server/catalog/tool.h"

namespace keel {

using Json = nlohmann::json;

Json KillSwitchAnswer(const ToolSpec& spec, const KillSwitchState& state);

}  // namespace keel
