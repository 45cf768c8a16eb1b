#include "server/call/kill_switch_answer.h"

#include <string>

#include "protocol/tool_result.h"

namespace keel {

Json KillSwitchAnswer(const ToolSpec& spec, const KillSwitchState& state) {
  const std::string& name = spec.name;
  if (state.unreadable) {
    return ErrorResult(
        "Writes are refused: keel cannot read its kill switch from the database (" +
            state.updated_by + "), and refuses writes until it can, so '" + name +
            "' did not run and changed nothing. Reads still work; retry once the database "
            "answers.",
        Json{{"type", "kill_switch"},
             {"reason", "unreadable"},
             {"tool", name},
             {"effect", std::string(EffectClassName(spec.effect))}});
  }
  return ErrorResult(
      "Writes are blocked: keel's kill switch is on, so '" + name +
          "' did not run and changed nothing. Reads still work. An operator turns it off with "
          "`keel admin block-writes off`.",
      Json{{"type", "kill_switch"},
           {"tool", name},
           {"effect", std::string(EffectClassName(spec.effect))}});
}

}  // namespace keel
