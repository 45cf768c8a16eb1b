#include "server/tools/echo_tool.h"

namespace keel {
namespace {

class EchoTool final : public Tool {
 public:
  EchoTool() {
    spec_.name = "echo";
    spec_.title = "Echo";
    spec_.description = "Returns the given text unchanged. Use it to check that keel answers.";
    spec_.input_schema = Json::parse(R"({
      "type": "object",
      "properties": {"text": {"type": "string", "description": "Text to send back"}},
      "required": ["text"],
      "additionalProperties": false})");
    spec_.annotations =
        Json{{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}};
  }
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override {
    return TextResult(ctx.arguments().at("text").get_ref<const std::string&>());
  }

 private:
  ToolSpec spec_;
};

}  // namespace

std::unique_ptr<Tool> MakeEchoTool() { return std::make_unique<EchoTool>(); }

}  // namespace keel
