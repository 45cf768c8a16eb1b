// Resource readers: the internal tools that answer resources/read (surface_answer.h says why
// reads are calls). One per catalog resource or template; none is listed by tools/list or
// callable by tools/call. Each takes {"uri": <the URI read>} plus, for a template, its
// variables, and answers structuredContent {contents: [{uri, mimeType, text | blob}]} or
// ResourceNotFoundResult.
//
//   literal    a resource's `text` or `blob` as written
//   file       a resource's `file`, read when asked (a file created after start-up is
//              served; a missing one is not found)
//   mount      a file under a directory mount (MountedFile below: confined to the root, a
//              regular file, at most maxBytes)
//   template   a template's `text` with the URI's variables substituted
//   command    a template's `run`: a CommandTool (command_tool.h) whose arguments are the
//              variables and `uri`; its stdout is the content (surface_answer.h rule 2)
// Text goes as `text` when it is valid UTF-8 of a textual MIME type, else as base64 `blob`.
//
// Thread-safety: Call() is reentrant (workers run reads concurrently); readers hold only
// their entry.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "server/catalog/surface_entries.h"
#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"

namespace keel {

using Json = nlohmann::json;

// The content item of `uri` for `bytes` of `mime_type`: {uri, mimeType, text} or {uri,
// mimeType, blob}.
Json ContentItem(const std::string& uri, const std::string& mime_type, const std::string& bytes);

// A resource with `text`, `blob` or `file`.
std::unique_ptr<Tool> MakeStaticReader(const ResourceEntry& entry);
// A directory mount: arguments {uri, path} (path: the file's path under the root, decoded).
std::unique_ptr<Tool> MakeMountReader(const ResourceEntry& entry);
// A template with `text` or `run`.
std::unique_ptr<Tool> MakeTemplateReader(const ResourceTemplateEntry& entry,
                                         const std::vector<std::string>& variables,
                                         std::shared_ptr<LedgerService> ledger);

}  // namespace keel
