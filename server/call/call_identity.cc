#include "server/call/call_identity.h"

#include "server/catalog/tool.h"

namespace keel {

CallIdentity NewCallIdentity(Tool& tool, const Json& arguments, const Json& meta) {
  CallIdentity identity;
  identity.tool_name = tool.spec().name;
  identity.tool = &tool;
  CallKey key = CallKeyOf(meta, arguments);
  identity.idempotency_key = std::move(key.key);
  identity.key_problem = std::move(key.problem);
  return identity;
}

}  // namespace keel
