// ForwardToUpstream: one attempt of a call that keel forwards to the server it wraps — a
// tools/call, or the resources/read, prompts/get and completion/complete keel serves as
// internal calls (surface_answer.h) — with keel's guarantees around it (WRAP-1, WRAP-4).
//
//  1. The request goes to the instance in service (UpstreamLink::Acquire, waiting while one
//     restarts, within the attempt's deadline). None: upstream_unavailable, nothing sent
//     (failure class not_sent: a retry may send it).
//  2. The upstream's progress for it becomes the call's progress (ToolContext::
//     ReportProgress: keel keeps it monotone, rate-limited, never after the answer, and
//     only a rise restarts the idle clock); its log messages for it, the call's log.
//  3. The call cancelled (by the client, a closed HTTP stream, a timeout): the upstream is
//     sent notifications/cancelled and the request is forgotten, so a late answer is
//     dropped; the attempt ends at once (its answer is discarded by the coordinator). The
//     attempt's deadline passing does the same, as attempt_timeout (ambiguous).
//  4. The connection ends before the answer: upstream_lost, rejected_transient for a read
//     (retried on the next instance), ambiguous for a write ("it may have taken effect").
//  5. A JSON-RPC error answer: upstream_error (rejected_permanent; effect none for -32600,
//     -32601 and -32602, which say the upstream did not run it). For a surface method, a
//     resources/read answered -32002 or -32602 (its one parameter is the URI) is
//     resource_not_found, keel's era-correct not-found; another -32602 is invalid_params.
//     The transport's own answer to a request it could not deliver (kUpstreamHttpFailure)
//     is not the upstream's: data.sent false -> upstream_unavailable (not_sent); an HTTP
//     status that says the upstream refused the request before running it (4xx but 408,
//     and 503) -> backend_<status> with effect none (429 and 503 transient, the others
//     permanent); anything else (5xx, no full answer) -> rule 4's upstream_lost.
//  6. A question from the upstream during the call (elicitation/create, sampling/
//     createMessage, roots/list; 2025-11-25 server-to-client requests): when the call's
//     client can answer it (ToolContext::CanAsk), the upstream request waits parked
//     (UpstreamLink::Park) and the attempt answers AskForInput with the question; the
//     call's next round (MRTR for a 2026-07-28 client, keel's own requests for a legacy one)
//     brings the answer back through tool_state "p:<name>", which is sent to the upstream,
//     and the attempt waits on for the same request's answer. A question the client cannot
//     answer is refused to the upstream with an error, and the call goes on.
//  7. A 2026-07-28 upstream's InputRequiredResult becomes AskForInput with the same
//     questions; the next round calls the upstream again with inputResponses and its
//     requestState (tool_state "s:<json>").
//  8. A result is passed on as the upstream gave it, minus resultType and the
//     io.modelcontextprotocol/ members of its _meta (keel puts its own); for a surface
//     method it is wrapped as {content: [], structuredContent: <result>}.
//  9. A tool the upstream lists with execution.taskSupport "required" (2025-11-25 tasks) is
//     called as a task: tools/call with params.task {ttl: the attempt's remaining time};
//     its CreateTaskResult is not the answer: keel asks tasks/result for the task at once
//     (it blocks until the task ends) and that is the answer, the upstream's progress under
//     the tools/call's token and its questions carried as for any call (rules 2, 6). A cancel
//     or the attempt's deadline also sends tasks/cancel for the task.
//
// Thread: a worker, inside Tool::Call.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "server/catalog/tool.h"
#include "server/upstream/upstream_link.h"

namespace keel {

struct ForwardSpec {
  std::string method;  // tools/call, resources/read, prompts/get, completion/complete
  Json params;         // without _meta (keel writes it)
  Json meta;           // members of the client's _meta to pass on (may be null)
  bool write = false;  // a write-class tool: texts and failure classes say "may have taken effect"
  bool surface = false;  // rule 8's wrapping; rule 5's not-found mapping
  std::string label;     // the tool or method, for texts
  // Whether the upstream's questions may reach the client (rules 6, 7). A keyed write's
  // attempt may not: its outcome is recorded once, under the key, when the attempt ends, and
  // a question would end it half-way. The question is then refused to the upstream (rule 6)
  // or, from a 2026-07-28 upstream, ends the attempt as upstream_error.
  bool may_ask = true;
  bool upstream_task = false;  // rule 9: the upstream requires a task for this tools/call
};

Json ForwardToUpstream(UpstreamLink& link, ToolContext& ctx, ForwardSpec spec);

}  // namespace keel
