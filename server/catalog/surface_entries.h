// The catalog's resources, resource templates and prompts (docs/catalog.md "Resources",
// "Prompts", "Completion"), as loaded: what keel serves besides tools. Plain data; the
// loaded values' reference is this header, the file's is docs/catalog.md.
//
// Invariants of a loaded catalog (LoadCatalog reports every violation, naming the entry and
// the field, e.g. `resources[1] (runbooks).directory: ...`):
//  1. Resource names, template names and prompt names are non-empty; prompt names are
//     unique among prompts and match ^[a-zA-Z0-9_-]{1,64}$ like tool names (hosts make
//     slash commands of them); resource URIs (and mount prefixes) are unique among
//     resources, no static URI and no other mount's prefix starts with a mount's prefix,
//     and uriTemplates are unique among templates (a read has one owner).
//  2. A resource has exactly one source: `file`, `text`, `blob` (base64) or `directory` (a
//     mount). A template has exactly one source: `run` (a command) or `text` (a literal
//     with the template's variables substituted); its uriTemplate parses
//     (protocol/uri_template.h), starts with a scheme and names at least one variable, none
//     of them called `uri`.
//  3. A command template's argv references only the template's variables and `uri` (the
//     whole URI read); its effect is always read (a read has no side effect to protect).
//  4. A mount's uriPrefix ends with '/' and its directory is a path (made absolute against
//     the catalog's directory by LoadCatalogFile, like command cwd); maxBytes per read is
//     in [1, kMaxResourceBytes]; mimeType, when given, overrides the guess for every file.
//  5. A prompt's argument names are unique and match ^[A-Za-z_][A-Za-z0-9_]*$; every
//     `{name}` in its messages names one of its arguments ("{{" and "}}" are literal braces);
//     each message is exactly one of text, image (a file or base64 data, with mimeType) or
//     resource (the URI of a static or mounted keel resource, or a literal {uri, mimeType,
//     text}).
//  6. A completion is on a prompt argument or a template variable that exists: a static
//     list of at most kMaxCompletionValues strings, or a command (argv referencing
//     `{argument}` and `{value}`), whose stdout lines are the values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/catalog/command_spec.h"

namespace keel {

using Json = nlohmann::json;

// The largest resource keel reads in one resources/read (a file or a command's output).
constexpr int64_t kMaxResourceBytes = 8 << 20;
// MCP completion: at most 100 values per answer.
constexpr size_t kMaxCompletionValues = 100;

// Where a completion's values come from.
struct CompletionSpec {
  std::vector<std::string> values;     // a static list (filtered by prefix)
  std::optional<CommandSpec> command;  // or a command: one value per stdout line
};

struct ResourceEntry {
  std::string name;
  std::string title;        // empty: none
  std::string description;  // empty: none
  // Empty: guessed from the file name (text/plain for `text`, application/octet-stream for
  // `blob`).
  std::string mime_type;
  Json annotations;  // MCP Annotations ({audience, priority, lastModified}) or null
  // Exactly one source (invariant 2).
  std::string uri;   // file, text, blob: the resource's URI
  std::string file;  // a path (absolute after LoadCatalogFile)
  std::optional<std::string> text;
  std::optional<std::string> blob;  // base64
  std::string directory;            // a mount: its root (absolute after LoadCatalogFile)
  std::string uri_prefix;           // a mount: file <rel> is <uri_prefix><rel, percent-encoded>
  int64_t max_bytes = 1 << 20;      // per read (mounts and files)
  bool is_mount() const { return !directory.empty(); }
};

struct ResourceTemplateEntry {
  std::string name;
  std::string title;
  std::string description;
  std::string uri_template;  // RFC 6570
  std::string mime_type;     // of what a read returns; empty: text/plain
  Json annotations;
  std::optional<CommandSpec> run;   // a command-backed template (its output is the content)
  std::optional<std::string> text;  // or a literal with {variables} substituted
  // Completion of the template's variables, by variable name.
  std::vector<std::pair<std::string, CompletionSpec>> completions;
};

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
  std::optional<CompletionSpec> completion;
};

struct PromptMessage {
  std::string role = "user";  // "user" or "assistant"
  enum class Kind { kText, kImage, kResource } kind = Kind::kText;
  std::string text;          // kText: with {argument} references
  std::string image_file;    // kImage: a path (absolute after LoadCatalogFile), or
  std::string image_data;    //         base64 data
  std::string mime_type;     // kImage (required with data), kResource literal
  std::string resource_uri;  // kResource: a keel resource's URI (with {argument} references)
  std::optional<std::string> resource_text;  // kResource: a literal's text (no read)
};

struct PromptEntry {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  std::vector<PromptMessage> messages;
};

}  // namespace keel
