// The Session's options for a serving keel: the flags as the session, its coordinator and its
// task manager take them, plus what start-up made (this process's owner name, the ledger for
// the kill switch, the trace).
//
// Thread: the main thread, at start-up. The options' writes_blocked reads the kill switch on
// the calling thread's own ledger connection, so any worker may call it.
#pragma once

#include <memory>
#include <string>

#include "server/app/cli_options.h"
#include "server/durable/ledger_service.h"
#include "server/session/session.h"
#include "server/trace/trace_log.h"

namespace keel {

// `owner` is ProcessOwner(); `trace` is the --trace-file log (null: none). A fresh
// CorrelationPrefix() names this process's calls.
SessionOptions SessionOptionsFor(const CliOptions& flags, const std::string& owner,
                                 std::shared_ptr<LedgerService> ledger, TraceLog* trace);

}  // namespace keel
