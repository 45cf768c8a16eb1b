// UpstreamTransfer: one HTTP exchange between keel and a Streamable HTTP upstream (`keel wrap
// --upstream-url`), a libcurl easy handle that HttpUpstream runs in its multi handle: a POST
// carrying one message, the legacy GET stream, or the DELETE that ends a legacy session. It
// reads the response as it arrives and hands out the JSON-RPC messages in it.
// HttpUpstream's thread only.
//
//  1. A 2xx response of Content-Type application/json is one message, read whole (at most
//     max_message_bytes) and handed out when the response ends; text/event-stream is framed
//     by SseReader (sse_reader.h) and each event's message is handed out as it arrives. A
//     body over the bound (or an event over it) stops the transfer: Outcome().failure says so.
//  2. What is not a JSON-RPC 2.0 object is dropped and logged (the first kMaxJunkLogged of
//     the connection, then one in a thousand).
//  3. A response that is not 2xx: its body (at most kMaxErrorBody bytes) is read, and a
//     JSON-RPC error response in it for this request's id is handed out (the upstream's own
//     error: -32601 for an unknown method, -32022, ...). Any other content type on a 2xx is a
//     failure.
//  4. The response's head (status, content type, Mcp-Session-Id) is read before any message
//     of it is handed out, so the session a response opens is known when keel reacts to it.
//  5. Finish(code), once libcurl says the transfer is done, gives the Outcome: the HTTP status
//     (0: no response came at all), what went wrong (empty: nothing), and whether the answer
//     to this request was handed out.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "server/runtime/clock.h"
#include "server/upstream/sse_reader.h"

namespace keel {

using Json = nlohmann::json;

// Rule 3: an error page is read for its JSON-RPC error only.
inline constexpr size_t kMaxErrorBody = 64 * 1024;

class UpstreamTransfer {
 public:
  enum class Kind { kPost, kStream, kDelete };
  struct Spec {
    Kind kind = Kind::kPost;
    std::string url;
    std::vector<std::string> headers;  // "Name: value"
    std::string body;                  // kPost: the message
    Json id;                           // kPost of a request: its id; else null
    std::string method;                // kPost: the message's method; empty for a response
    size_t max_message_bytes = 16 << 20;
    Duration connect_timeout = Millis(10000);
    Duration timeout = Duration::zero();  // the whole transfer; zero: none
  };
  struct Outcome {
    long status = 0;  // 0: no HTTP response
    std::string failure;
    bool answered = false;
    bool event_stream = false;  // the response was text/event-stream
    // False only when the request certainly never reached the upstream (no connection
    // could be made: refused, name not resolved).
    bool sent = true;
  };
  using MessageFn = std::function<void(const UpstreamTransfer& transfer, Json message)>;
  // Counts the junk of one connection (rule 2) across its transfers.
  struct JunkCount {
    size_t lines = 0;
  };

  // Null, with *error, when libcurl cannot make a handle.
  static std::unique_ptr<UpstreamTransfer> Make(Spec spec, MessageFn on_message, JunkCount* junk,
                                                std::string* error);
  ~UpstreamTransfer();
  UpstreamTransfer(const UpstreamTransfer&) = delete;
  UpstreamTransfer& operator=(const UpstreamTransfer&) = delete;

  CURL* easy() const { return easy_; }
  Kind kind() const { return spec_.kind; }
  const Json& id() const { return spec_.id; }
  const std::string& method() const { return spec_.method; }
  bool is_request() const { return spec_.kind == Kind::kPost && !spec_.id.is_null(); }
  const std::string& session_header() const { return session_header_; }
  // When the answer was handed out; nullopt before.
  std::optional<TimePoint> answered_at() const { return answered_at_; }
  // Rule 5.
  Outcome Finish(CURLcode code);
  // Runs this transfer alone in `multi` (which has no other) until it ends or `deadline`
  // (blocking); then Finish.
  Outcome RunAlone(CURLM* multi, TimePoint deadline);

 private:
  enum class Body { kUnread, kJson, kSse, kError, kRefused };
  UpstreamTransfer(Spec spec, MessageFn on_message, JunkCount* junk);
  bool Configure();
  static size_t OnData(char* data, size_t size, size_t count, void* self);
  bool Take(std::string_view bytes);
  void ReadHead();
  void HandOut(std::string_view text);

  const Spec spec_;
  MessageFn on_message_;
  JunkCount* junk_;
  CURL* easy_ = nullptr;
  curl_slist* headers_ = nullptr;
  char error_[CURL_ERROR_SIZE] = {};
  Body body_ = Body::kUnread;
  long status_ = 0;
  std::string content_type_;
  std::string session_header_;
  std::string text_;  // kJson, kError: the body so far
  std::unique_ptr<SseReader> sse_;
  std::string failure_;
  bool answered_ = false;
  std::optional<TimePoint> answered_at_;
};

}  // namespace keel
