// OutputSink: where the session's outgoing lines go. An Exchange (exchange.h) is the
// OutputSink of one exchange of a transport; the stdio transport's one exchange writes
// them through the Outbox; unit tests implement it with a recorder. The Session finds the
// sink of each line's exchange through an OutputRouter (output_router.h). Loop thread only.
// Lines are complete JSON-RPC messages without the trailing newline.
//
// Progress travels on a stream: one per request, named by the request's generation (never
// reused, unlike JSON-RPC ids and progress tokens), so two requests never share a slot.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace keel {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // A response: never dropped.
  virtual void SendResponse(std::string line) = 0;
  // A server-to-client JSON-RPC request (keel's own questions to a legacy client): never
  // dropped. By default written as a response is (a transport that frames requests
  // differently, such as an SSE stream that must stay open for the answer, overrides it).
  virtual void SendRequest(std::string line) { SendResponse(std::move(line)); }
  // Progress on `stream`: a newer line replaces the stream's unsent one. Under pressure
  // the oldest unsent progress may be dropped (the transport reports which stream).
  virtual void SendProgress(uint64_t stream, std::string line) = 0;
  // The stream's request settled without a response (cancelled): its unsent progress
  // must never be written. A line already partly written is finished.
  virtual void DiscardProgress(uint64_t stream) = 0;
  // The request that came on this exchange settled without a response (cancelled): nothing
  // more will be written for it. An exchange that carries one request ends here (an HTTP
  // response stream is closed); stdio, which carries them all, ignores it.
  virtual void EndUnanswered() {}
  // A log notification: may be dropped under pressure.
  virtual void SendLog(std::string line) = 0;
};

}  // namespace keel
