// The catalog's resources, resourceTemplates and prompts sections (surface_entries.h): good
// sections load with every field; each invariant violation is reported with the entry and
// the field's path; LoadCatalogFile makes their paths absolute without reading the files;
// examples/runbooks/catalog.json loads.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "server/catalog/catalog.h"
#include "server/catalog/catalog_binding.h"

namespace keel::surface_catalog_test {
namespace {

Json Runbooks() {
  return Json::parse(R"j({"name": "runbooks", "directory": "runbooks",
                         "uriPrefix": "runbook:///", "mimeType": "text/markdown"})j");
}

Json Status() {
  return Json::parse(R"j({"name": "status", "uriTemplate": "deploy://{service}/status",
                         "run": {"command": ["/bin/echo", "{service}", "{uri}"]}})j");
}

Json Incident() {
  return Json::parse(R"j({"name": "incident_report",
    "arguments": [{"name": "service", "required": true}, {"name": "severity"}],
    "messages": [{"text": "Write an incident report for {service} ({severity})."}]})j");
}

CatalogLoad LoadSections(const Json& resources, const Json& templates, const Json& prompts) {
  Json catalog = Json::object();
  if (!resources.empty()) catalog["resources"] = resources;
  if (!templates.empty()) catalog["resourceTemplates"] = templates;
  if (!prompts.empty()) catalog["prompts"] = prompts;
  CatalogLoad load = LoadCatalog(catalog.dump());
  CHECK(load.ok() == load.problems.empty());
  return load;
}

std::vector<std::string> ProblemsOfResource(const Json& resource) {
  return LoadSections(Json::array({Runbooks(), resource}), {}, {}).problems;
}
std::vector<std::string> ProblemsOfTemplate(const Json& entry) {
  return LoadSections({}, Json::array({entry}), {}).problems;
}
std::vector<std::string> ProblemsOfPrompt(const Json& prompt) {
  return LoadSections(Json::array({Runbooks()}), {}, Json::array({prompt})).problems;
}

void RequireOneProblem(const std::vector<std::string>& problems, const std::string& where,
                       const std::string& what) {
  INFO(Json(problems).dump(2));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].rfind(where + ": ", 0) == 0);
  CHECK(problems[0].find(what) != std::string::npos);
}

TEST_CASE("resources of every kind load with every field", "[catalog][surface]") {
  const Json resources = Json::parse(R"j([
    {"name": "runbooks", "title": "Runbooks", "description": "Operations runbooks",
     "directory": "runbooks", "uriPrefix": "runbook:///", "mimeType": "text/markdown",
     "maxBytes": 65536,
     "annotations": {"audience": ["user", "assistant"], "priority": 0.8,
                     "lastModified": "2025-01-12T15:00:58Z"}},
    {"name": "oncall", "uri": "file:///srv/oncall.md", "file": "/srv/oncall.md", "maxBytes": 1},
    {"name": "motd", "uri": "note://motd", "text": "Deploys are frozen on Fridays."},
    {"name": "logo", "uri": "img://logo", "blob": "iVBORw0KGgo=", "mimeType": "image/png",
     "annotations": {"priority": 1, "lastModified": "2025-01-12"}}])j");
  CatalogLoad load = LoadSections(resources, {}, {});
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  REQUIRE(load.catalog->resources.size() == 4);
  CHECK(load.catalog->tools.empty());
  const ResourceEntry& mount = load.catalog->resources[0];
  CHECK(mount.is_mount());
  CHECK(mount.title == "Runbooks");
  CHECK(mount.description == "Operations runbooks");
  CHECK(mount.directory == "runbooks");
  CHECK(mount.uri_prefix == "runbook:///");
  CHECK(mount.mime_type == "text/markdown");
  CHECK(mount.max_bytes == 65536);
  CHECK(mount.annotations.at("priority") == 0.8);
  const ResourceEntry& file = load.catalog->resources[1];
  CHECK_FALSE(file.is_mount());
  CHECK(file.file == "/srv/oncall.md");
  CHECK(file.uri == "file:///srv/oncall.md");
  CHECK(file.annotations.is_null());
  CHECK(load.catalog->resources[2].text == "Deploys are frozen on Fridays.");
  CHECK(load.catalog->resources[2].max_bytes == 1 << 20);
  CHECK(load.catalog->resources[3].blob == "iVBORw0KGgo=");
}

TEST_CASE("a resource needs exactly one source and the URI field that goes with it",
          "[catalog][surface]") {
  RequireOneProblem(ProblemsOfResource(Json{{"name", "x"}, {"uri", "a:b"}}), "resources[1] (x)",
                    "needs exactly one of file, text, blob, directory (has 0)");
  RequireOneProblem(
      ProblemsOfResource(Json{{"name", "x"}, {"uri", "a:b"}, {"text", "t"}, {"file", "f"}}),
      "resources[1] (x)", "(has 2)");
  RequireOneProblem(ProblemsOfResource(Json{{"name", "x"}, {"text", "t"}}), "resources[1] (x).uri",
                    "is required");
  RequireOneProblem(ProblemsOfResource(Json{
                        {"name", "x"}, {"directory", "d"}, {"uri", "a:b"}, {"uriPrefix", "c:/"}}),
                    "resources[1] (x).uri", "uriPrefix instead");
  RequireOneProblem(
      ProblemsOfResource(Json{{"name", "x"}, {"directory", "d"}, {"uriPrefix", "c:d"}}),
      "resources[1] (x).uriPrefix", "must end with '/'");
  RequireOneProblem(ProblemsOfResource(Json{{"name", "x"}, {"uri", "no scheme"}, {"text", "t"}}),
                    "resources[1] (x).uri", "not an absolute URI");
  RequireOneProblem(ProblemsOfResource(Json{{"name", "x"}, {"uri", "a:b"}, {"blob", "abc"}}),
                    "resources[1] (x).blob", "base64");
  RequireOneProblem(
      ProblemsOfResource(Json{{"name", "x"}, {"uri", "a:b"}, {"text", "t"}, {"maxBytes", 10}}),
      "resources[1] (x).maxBytes", "file and directory resources only");
  RequireOneProblem(
      ProblemsOfResource(Json{{"name", "x"}, {"uri", "a:b"}, {"file", "f"}, {"maxBytes", 9 << 20}}),
      "resources[1] (x).maxBytes", "from 1 to 8388608");
  RequireOneProblem(ProblemsOfResource(Json{{"name", ""}, {"uri", "a:b"}, {"text", "t"}}),
                    "resources[1].name", "must not be empty");
}

TEST_CASE("unknown fields are refused in every new section and nested object",
          "[catalog][surface]") {
  Json resource = Runbooks();
  resource["mime"] = "text/plain";
  RequireOneProblem(LoadSections(Json::array({resource}), {}, {}).problems,
                    "resources[0] (runbooks).mime", "unknown field");
  Json status = Status();
  status["run"]["lookup"] = {{"command", {"/bin/true"}}};
  RequireOneProblem(ProblemsOfTemplate(status), "resourceTemplates[0] (status).run.lookup",
                    "unknown field");
  Json prompt = Incident();
  prompt["arguments"][0]["optional"] = true;
  RequireOneProblem(ProblemsOfPrompt(prompt),
                    "prompts[0] (incident_report).arguments[0] (service).optional",
                    "unknown field");
  prompt = Incident();
  prompt["messages"][0]["content"] = "x";
  RequireOneProblem(ProblemsOfPrompt(prompt), "prompts[0] (incident_report).messages[0].content",
                    "unknown field");
  RequireOneProblem(
      LoadCatalog(Json{{"prompts", Json::array({Incident()})}, {"resource", Json::array()}}.dump())
          .problems,
      "catalog.resource", "unknown field");
}

TEST_CASE("annotations are checked against MCP's shape", "[catalog][surface]") {
  auto with = [](const Json& annotations) {
    Json resource = Runbooks();
    resource["annotations"] = annotations;
    return LoadSections(Json::array({resource}), {}, {}).problems;
  };
  const std::string where = "resources[0] (runbooks).annotations.";
  RequireOneProblem(with({{"audience", {"user", "model"}}}), where + "audience[1]",
                    "not one of user, assistant");
  RequireOneProblem(with({{"audience", "user"}}), where + "audience", "must be an array");
  RequireOneProblem(with({{"priority", 1.5}}), where + "priority", "from 0 to 1");
  RequireOneProblem(with({{"priority", "high"}}), where + "priority", "from 0 to 1");
  RequireOneProblem(with({{"lastModified", "yesterday"}}), where + "lastModified", "ISO 8601");
  RequireOneProblem(with({{"lastModified", "2025-01-12T15:00:58"}}), where + "lastModified",
                    "with a zone");
  RequireOneProblem(with({{"lastModified", "2025-13-12"}}), where + "lastModified", "ISO 8601");
  RequireOneProblem(with({{"readOnly", true}}), where + "readOnly", "unknown field");
  CHECK(with({{"lastModified", "2025-01-12T15:00:58.250+01:00"}}).empty());
}

TEST_CASE("a resource URI has one owner among static resources and mounts", "[catalog][surface]") {
  RequireOneProblem(
      ProblemsOfResource(Json{{"name", "x"}, {"uri", "runbook:///a.md"}, {"text", "t"}}),
      "resources[1] (x).uri", "lies under the uriPrefix of resources[0] (runbooks)");
  RequireOneProblem(
      ProblemsOfResource(Json{{"name", "x"}, {"directory", "d"}, {"uriPrefix", "runbook:///old/"}}),
      "resources[1] (x).uriPrefix", "lies under the uriPrefix of resources[0] (runbooks)");
  RequireOneProblem(
      ProblemsOfResource(Json{{"name", "x"}, {"directory", "d"}, {"uriPrefix", "runbook:///"}}),
      "resources[1] (x).uriPrefix", "is already the URI of resources[0] (runbooks)");
  const Json twice = Json::array({Json{{"name", "a"}, {"uri", "note://a"}, {"text", "1"}},
                                  Json{{"name", "b"}, {"uri", "note://a"}, {"text", "2"}}});
  RequireOneProblem(LoadSections(twice, {}, {}).problems, "resources[1] (b).uri",
                    "is already the URI of resources[0] (a)");
  const Json inside =
      Json::array({Json{{"name", "a"}, {"uri", "note://x/a"}, {"text", "1"}},
                   Json{{"name", "b"}, {"directory", "d"}, {"uriPrefix", "note://x/"}}});
  RequireOneProblem(LoadSections(inside, {}, {}).problems, "resources[1] (b).uriPrefix",
                    "would contain the URI of resources[0] (a)");
}

TEST_CASE("resource templates load with a command or a literal text and their completions",
          "[catalog][surface]") {
  const Json templates = Json::parse(R"j([
    {"name": "status", "title": "Service status", "description": "Live status",
     "uriTemplate": "deploy://{service}/status{?verbose}", "mimeType": "application/json",
     "annotations": {"audience": ["assistant"]},
     "run": {"command": ["bin/status", "{service}", "--uri={uri}"], "cwd": "bin",
             "output": "text", "maxOutputBytes": 4096},
     "complete": {"service": ["web-api", "worker"],
                  "verbose": {"command": ["bin/complete", "{argument}", "{value}"]}}},
    {"name": "greeting", "uriTemplate": "hello://{+path}", "text": "Hello {path} ({{literal}})"}])j");
  CatalogLoad load = LoadSections({}, templates, {});
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  REQUIRE(load.catalog->resource_templates.size() == 2);
  const ResourceTemplateEntry& status = load.catalog->resource_templates[0];
  CHECK(status.uri_template == "deploy://{service}/status{?verbose}");
  CHECK(status.mime_type == "application/json");
  REQUIRE(status.run);
  CHECK(status.run->argv == std::vector<std::string>{"bin/status", "{service}", "--uri={uri}"});
  CHECK(status.run->output == CommandOutput::kText);
  REQUIRE(status.completions.size() == 2);
  CHECK(status.completions[0].first == "service");
  CHECK(status.completions[0].second.values == std::vector<std::string>{"web-api", "worker"});
  CHECK(status.completions[1].first == "verbose");
  REQUIRE(status.completions[1].second.command);
  CHECK(status.completions[1].second.command->argv[2] == "{value}");
  CHECK(load.catalog->resource_templates[1].text == "Hello {path} ({{literal}})");
  CHECK_FALSE(load.catalog->resource_templates[1].run);
}

TEST_CASE("a template's run may reference only its variables and uri", "[catalog][surface]") {
  Json status = Status();
  status["run"]["command"] = {"/bin/echo", "{servce}"};
  RequireOneProblem(
      ProblemsOfTemplate(status), "resourceTemplates[0] (status).run.command[1]",
      "{servce} is not a variable of uriTemplate nor {uri} (known: {service}, {uri})");
  status = Status();
  status.erase("run");
  status["text"] = "{service} is {state}";
  RequireOneProblem(ProblemsOfTemplate(status), "resourceTemplates[0] (status).text",
                    "{state} is not a variable");
  status["text"] = "{{\"service\": \"{service}\"}}";
  CHECK(ProblemsOfTemplate(status).empty());
}

TEST_CASE("a template needs a parsable uriTemplate with variables and exactly one source",
          "[catalog][surface]") {
  auto with_template = [](const std::string& uri_template) {
    Json status = Status();
    status["uriTemplate"] = uri_template;
    status["run"]["command"] = {"/bin/true"};
    return ProblemsOfTemplate(status);
  };
  const std::string where = "resourceTemplates[0] (status).uriTemplate";
  RequireOneProblem(with_template("deploy://{service/status"), where, "unclosed '{'");
  RequireOneProblem(with_template("deploy://service}/status"), where, "'}' outside");
  RequireOneProblem(with_template("deploy://{ser vice}"), where, "bad variable name");
  RequireOneProblem(with_template("deploy://{=service}"), where, "reserved");
  RequireOneProblem(with_template("deploy://status"), where, "names no variable");
  RequireOneProblem(with_template("{service}/status"), where, "must start with a URI scheme");
  RequireOneProblem(with_template("deploy://{uri}"), where, "may not be named uri");
  CHECK(with_template("deploy://{service}{/path}{.ext}{?a,b}{&c}{#frag}").empty());
  // RFC 6570 level 4 (prefixes, explodes) is beyond what keel matches.
  CHECK_FALSE(with_template("deploy://{service}{/path*}").empty());
  Json status = Status();
  status["text"] = "t";
  RequireOneProblem(ProblemsOfTemplate(status), "resourceTemplates[0] (status)",
                    "needs exactly one of run, text");
  status["complete"] = {{"region", {"eu"}}};
  status.erase("text");
  RequireOneProblem(ProblemsOfTemplate(status), "resourceTemplates[0] (status).complete.region",
                    "is not a variable of uriTemplate");
}

TEST_CASE("two templates may not share a uriTemplate", "[catalog][surface]") {
  Json other = Status();
  other["name"] = "again";
  RequireOneProblem(LoadSections({}, Json::array({Status(), other}), {}).problems,
                    "resourceTemplates[1] (again).uriTemplate", "appears twice");
}

TEST_CASE("completions are short string lists or commands referencing argument and value",
          "[catalog][surface]") {
  Json status = Status();
  status["complete"] = {{"service", Json::array()}};
  RequireOneProblem(ProblemsOfTemplate(status), "resourceTemplates[0] (status).complete.service",
                    "non-empty array of at most 100 strings");
  status["complete"] = {{"service", {"a", 1}}};
  RequireOneProblem(ProblemsOfTemplate(status), "resourceTemplates[0] (status).complete.service[1]",
                    "must be a string");
  status["complete"] = {{"service", std::vector<std::string>(101, "x")}};
  RequireOneProblem(ProblemsOfTemplate(status), "resourceTemplates[0] (status).complete.service",
                    "at most 100");
  status["complete"] = {{"service", {{"command", {"/bin/echo", "{prefix}"}}}}};
  RequireOneProblem(ProblemsOfTemplate(status),
                    "resourceTemplates[0] (status).complete.service.command[1]",
                    "{prefix} is not a completion input (known: {argument}, {value})");
}

TEST_CASE("prompts load with arguments, completions and every kind of message",
          "[catalog][surface]") {
  const Json prompt = Json::parse(R"j({"name": "incident_report", "title": "Incident report",
    "description": "Drafts an incident report",
    "arguments": [
      {"name": "service", "description": "The service", "required": true,
       "complete": ["web-api", "worker"]},
      {"name": "severity", "complete": {"command": ["/bin/echo", "{argument}", "{value}"]}}],
    "messages": [
      {"text": "Service {service}, severity {severity}; JSON looks like {{\"a\": 1}}"},
      {"role": "assistant", "text": "Reading the runbook."},
      {"resource": "runbook:///{service}.md"},
      {"resource": {"uri": "note://template", "mimeType": "text/markdown", "text": "# {{title}}"}},
      {"image": {"file": "diagram.png"}},
      {"image": {"data": "iVBORw0KGgo=", "mimeType": "image/png"}}]})j");
  CatalogLoad load = LoadSections(Json::array({Runbooks()}), {}, Json::array({prompt}));
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  REQUIRE(load.catalog->prompts.size() == 1);
  const PromptEntry& entry = load.catalog->prompts[0];
  CHECK(entry.title == "Incident report");
  REQUIRE(entry.arguments.size() == 2);
  CHECK(entry.arguments[0].required);
  CHECK(entry.arguments[0].completion->values.size() == 2);
  CHECK_FALSE(entry.arguments[1].required);
  CHECK(entry.arguments[1].completion->command);
  REQUIRE(entry.messages.size() == 6);
  CHECK(entry.messages[0].role == "user");
  CHECK(entry.messages[1].role == "assistant");
  CHECK(entry.messages[2].kind == PromptMessage::Kind::kResource);
  CHECK(entry.messages[2].resource_uri == "runbook:///{service}.md");
  CHECK_FALSE(entry.messages[2].resource_text);
  CHECK(entry.messages[3].resource_text == "# {{title}}");
  CHECK(entry.messages[3].mime_type == "text/markdown");
  CHECK(entry.messages[4].kind == PromptMessage::Kind::kImage);
  CHECK(entry.messages[4].image_file == "diagram.png");
  CHECK(entry.messages[5].image_data == "iVBORw0KGgo=");
}

TEST_CASE("a prompt message may reference only the prompt's arguments", "[catalog][surface]") {
  Json prompt = Incident();
  prompt["messages"][0]["text"] = "Report on {service} for {team}";
  RequireOneProblem(ProblemsOfPrompt(prompt), "prompts[0] (incident_report).messages[0].text",
                    "{team} is not an argument of this prompt (arguments: service, severity)");
  prompt["messages"][0]["text"] = "A lone { brace";
  RequireOneProblem(ProblemsOfPrompt(prompt), "prompts[0] (incident_report).messages[0].text",
                    "unclosed '{'");
  prompt["messages"][0]["text"] = "Literal {{braces}} are fine";
  CHECK(ProblemsOfPrompt(prompt).empty());
  prompt["messages"][0] = {{"resource", "runbook:///{team}.md"}};
  RequireOneProblem(ProblemsOfPrompt(prompt), "prompts[0] (incident_report).messages[0].resource",
                    "{team} is not an argument");
}

TEST_CASE("a prompt message is exactly one of text, image and resource, each well-formed",
          "[catalog][surface]") {
  auto with_message = [](const Json& message) {
    Json prompt = Incident();
    prompt["messages"] = Json::array({message});
    return ProblemsOfPrompt(prompt);
  };
  const std::string where = "prompts[0] (incident_report).messages[0]";
  RequireOneProblem(with_message({{"role", "user"}}), where,
                    "exactly one of text, image, resource");
  RequireOneProblem(with_message({{"text", "a"}, {"resource", "runbook:///a.md"}}), where,
                    "exactly one of");
  RequireOneProblem(with_message({{"role", "system"}, {"text", "a"}}), where + ".role",
                    "not one of user, assistant");
  RequireOneProblem(with_message({{"image", {{"data", "iVBORw0KGgo="}}}}),
                    where + ".image.mimeType", "is required with data");
  RequireOneProblem(with_message({{"image", {{"file", "a.png"}, {"mimeType", "text/plain"}}}}),
                    where + ".image.mimeType", "must be an image/ type");
  RequireOneProblem(
      with_message(
          {{"image", {{"file", "a.png"}, {"data", "iVBORw0KGgo="}, {"mimeType", "image/png"}}}}),
      where + ".image.file", "exactly one of file, data");
  RequireOneProblem(with_message({{"resource", "https://example.com/a"}}), where + ".resource",
                    "not the URI of a resource of this catalog");
  RequireOneProblem(with_message({{"resource", "runbook:///"}}), where + ".resource",
                    "not the URI of a resource");
  RequireOneProblem(with_message({{"resource", {{"uri", "note://a"}}}}), where + ".resource.text",
                    "is required");
}

TEST_CASE("prompt and argument names are checked and unique", "[catalog][surface]") {
  Json prompt = Incident();
  prompt["arguments"][1]["name"] = "service";
  prompt["messages"][0]["text"] = "Report on {service}";
  RequireOneProblem(ProblemsOfPrompt(prompt), "prompts[0] (incident_report).arguments[1].name",
                    "already the name of another argument");
  prompt = Incident();
  prompt["arguments"][1]["name"] = "2nd";
  const std::vector<std::string> bad = ProblemsOfPrompt(prompt);
  REQUIRE_FALSE(bad.empty());
  CHECK(bad[0].rfind("prompts[0] (incident_report).arguments[1].name: ", 0) == 0);
  prompt = Incident();
  prompt["name"] = "incident report";
  RequireOneProblem(ProblemsOfPrompt(prompt), "prompts[0] (incident report).name",
                    "must match ^[a-zA-Z0-9_-]{1,64}$");
  RequireOneProblem(LoadSections({}, {}, Json::array({Incident(), Incident()})).problems,
                    "prompts[1] (incident_report).name", "already the name of another prompt");
  prompt = Incident();
  prompt["messages"] = Json::array();
  RequireOneProblem(ProblemsOfPrompt(prompt), "prompts[0] (incident_report).messages",
                    "non-empty array");
}

TEST_CASE("a catalog without tools loads when it serves prompts", "[catalog][surface]") {
  CatalogLoad load = LoadCatalog(Json{{"prompts", Json::array({Incident()})}}.dump());
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  CHECK(load.catalog->tools.empty());
  CHECK(load.catalog->prompts.size() == 1);
  load = LoadCatalog(Json{{"tools", Json::array()}, {"prompts", Json::array({Incident()})}}.dump());
  CHECK(load.ok());
}

TEST_CASE("a catalog whose every section is empty is refused", "[catalog][surface]") {
  const CatalogLoad load =
      LoadCatalog(R"j({"tools": [], "resources": [], "resourceTemplates": [], "prompts": []})j");
  CHECK(load.problems ==
        std::vector<std::string>{"catalog: serves nothing: at least one of tools, resources, "
                                 "resourceTemplates and prompts must be a non-empty array"});
}

TEST_CASE("LoadCatalogFile makes resource paths absolute without reading the files",
          "[catalog][surface]") {
  TempDir dir;
  const Json catalog = {
      {"resources", Json::array({Runbooks(), Json{{"name", "later"},
                                                  {"uri", "file:///later"},
                                                  {"file", "notes/later.md"}}})},
      {"resourceTemplates", Json::array({Status()})},
      {"prompts",
       Json::array({Json{{"name", "p"},
                         {"messages", Json::array({Json{{"image", {{"file", "img/a.png"}}}}})}}})}};
  const std::string path = dir.Write("catalog.json", catalog.dump());
  const CatalogLoad load = LoadCatalogFile(path);
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  const std::string base = std::filesystem::path(dir.path()).lexically_normal().string();
  CHECK(load.catalog->resources[0].directory == base + "/runbooks");
  CHECK(load.catalog->resources[1].file == base + "/notes/later.md");
  CHECK(load.catalog->resource_templates[0].run->cwd == base);
  CHECK(load.catalog->prompts[0].messages[0].image_file == base + "/img/a.png");
  // Neither file exists: the mount root is a warning, the file nothing at all.
  REQUIRE(load.warnings.size() == 1);
  CHECK(load.warnings[0].find("resources[0] (runbooks).directory: " + base + "/runbooks") == 0);
}

TEST_CASE("LoadCatalogFile checks a template's command like a tool's", "[catalog][surface]") {
  TempDir dir;
  Json status = Status();
  status["run"]["command"] = {"bin/missing", "{service}"};
  status["complete"] = {{"service", {{"command", {"/bin/echo"}}, {"cwd", "nowhere"}}}};
  const std::string path =
      dir.Write("catalog.json", Json{{"resourceTemplates", Json::array({status})}}.dump());
  const CatalogLoad load = LoadCatalogFile(path);
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.problems.size() == 2);
  CHECK(load.problems[0].rfind("resourceTemplates[0] (status).run.command[0]: ", 0) == 0);
  CHECK(load.problems[1].rfind("resourceTemplates[0] (status).complete.service.cwd: ", 0) == 0);
}

TEST_CASE("the runbooks example catalog loads from its file", "[catalog][surface]") {
  const auto path =
      std::filesystem::path(__FILE__).parent_path() / "../../../examples/runbooks/catalog.json";
  const CatalogLoad load = LoadCatalogFile(path.string());
  INFO(Json(load.problems).dump(2) + Json(load.warnings).dump(2));
  REQUIRE(load.ok());
  CHECK(load.warnings.empty());
  CHECK(load.catalog->resources.size() >= 1);
  CHECK(load.catalog->resource_templates.size() == 1);
  REQUIRE(load.catalog->prompts.size() == 1);
  CHECK(load.catalog->prompts[0].name == "incident_report");
}

}  // namespace
}  // namespace keel::surface_catalog_test
