#include "server/upstream/http_upstream_transfer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/bounded_json.h"
#include "server/upstream/curl_api.h"
#include "server/upstream/upstream_transport.h"

namespace keel {
namespace {

long MillisOf(Duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

UpstreamTransfer::UpstreamTransfer(Spec spec, MessageFn on_message, JunkCount* junk)
    : spec_(std::move(spec)), on_message_(std::move(on_message)), junk_(junk) {}

UpstreamTransfer::~UpstreamTransfer() {
  if (easy_ != nullptr) Curl().easy_cleanup(easy_);
  Curl().slist_free_all(headers_);
}

std::unique_ptr<UpstreamTransfer> UpstreamTransfer::Make(Spec spec, MessageFn on_message,
                                                         JunkCount* junk, std::string* error) {
  std::unique_ptr<UpstreamTransfer> transfer(
      new UpstreamTransfer(std::move(spec), std::move(on_message), junk));
  if (!transfer->Configure()) {
    *error = "libcurl could not set up an HTTP request";
    return nullptr;
  }
  return transfer;
}

bool UpstreamTransfer::Configure() {
  easy_ = Curl().easy_init();
  if (easy_ == nullptr) return false;
  for (const std::string& header : spec_.headers) {
    curl_slist* more = Curl().slist_append(headers_, header.c_str());
    if (more == nullptr) return false;
    headers_ = more;
  }
  bool ok = Curl().easy_setopt(easy_, CURLOPT_URL, spec_.url.c_str()) == CURLE_OK;
  // Only HTTP(S), also after nothing: keel follows no redirects.
  ok = ok && Curl().easy_setopt(easy_, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK;
  Curl().easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);  // keel's threads; no SIGALRM
  Curl().easy_setopt(easy_, CURLOPT_PRIVATE, this);
  Curl().easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_);
  Curl().easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &UpstreamTransfer::OnData);
  Curl().easy_setopt(easy_, CURLOPT_WRITEDATA, this);
  Curl().easy_setopt(easy_, CURLOPT_HTTPHEADER, headers_);
  Curl().easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, MillisOf(spec_.connect_timeout));
  Curl().easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
  if (spec_.timeout > Duration::zero()) {
    Curl().easy_setopt(easy_, CURLOPT_TIMEOUT_MS, std::max(1L, MillisOf(spec_.timeout)));
  }
  switch (spec_.kind) {
    case Kind::kPost:
      Curl().easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(spec_.body.size()));
      Curl().easy_setopt(easy_, CURLOPT_POSTFIELDS, spec_.body.data());
      break;
    case Kind::kStream:
      Curl().easy_setopt(easy_, CURLOPT_HTTPGET, 1L);
      break;
    case Kind::kDelete:
      Curl().easy_setopt(easy_, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
  }
  return ok;
}

size_t UpstreamTransfer::OnData(char* data, size_t size, size_t count, void* self) {
  auto* transfer = static_cast<UpstreamTransfer*>(self);
  const size_t bytes = size * count;
  // A short count makes libcurl stop the transfer (CURLE_WRITE_ERROR): failure_ says why.
  return transfer->Take(std::string_view(data, bytes)) ? bytes : 0;
}

void UpstreamTransfer::ReadHead() {
  if (body_ != Body::kUnread) return;
  Curl().easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status_);
  const char* type = nullptr;
  Curl().easy_getinfo(easy_, CURLINFO_CONTENT_TYPE, &type);
  content_type_ = type != nullptr ? Lower(type) : std::string();
  curl_header* session = nullptr;
  if (Curl().easy_header(easy_, "Mcp-Session-Id", 0, CURLH_HEADER, -1, &session) == CURLHE_OK &&
      session != nullptr && session->value != nullptr) {
    session_header_ = session->value;
  }
  if (status_ < 200 || status_ > 299) {
    body_ = Body::kError;
  } else if (content_type_.rfind("text/event-stream", 0) == 0) {
    body_ = Body::kSse;
    sse_ = std::make_unique<SseReader>(
        spec_.max_message_bytes, [this](std::string_view data) { HandOut(data); },
        [this](size_t bytes) {
          failure_ = "an event of the response stream is over " +
                     std::to_string(spec_.max_message_bytes) + " bytes (" + std::to_string(bytes) +
                     " seen)";
        });
  } else if (content_type_.rfind("application/json", 0) == 0) {
    body_ = Body::kJson;
  } else {
    body_ = Body::kRefused;
  }
}

bool UpstreamTransfer::Take(std::string_view bytes) {
  ReadHead();
  switch (body_) {
    case Body::kSse:
      sse_->Feed(bytes);
      return failure_.empty();
    case Body::kJson:
    case Body::kError: {
      const size_t cap = body_ == Body::kJson ? spec_.max_message_bytes : kMaxErrorBody;
      if (text_.size() + bytes.size() > cap) {
        if (body_ == Body::kError) return false;  // the status says enough
        failure_ = "the response is over " + std::to_string(cap) + " bytes";
        return false;
      }
      text_.append(bytes);
      return true;
    }
    default:
      failure_ = "the upstream answered with Content-Type '" + content_type_ +
                 "' (neither application/json nor text/event-stream)";
      return false;
  }
}

void UpstreamTransfer::HandOut(std::string_view text) {
  BoundedJson parsed = ParseBoundedJson(text);
  if (!parsed.ok() || !IsJsonRpcMessage(parsed.value)) {
    const size_t n = ++junk_->lines;
    if (n <= kMaxJunkLogged || n % 1000 == 0) {
      spdlog::warn("upstream sent something that is not JSON-RPC (dropped, #{}): {:.200}", n, text);
    }
    return;
  }
  const Json& message = parsed.value;
  if (is_request() && !message.contains("method") && message.value("id", Json()) == spec_.id) {
    answered_ = true;
    answered_at_ = std::chrono::steady_clock::now();
  }
  on_message_(*this, std::move(parsed.value));
}

UpstreamTransfer::Outcome UpstreamTransfer::Finish(CURLcode code) {
  ReadHead();
  Outcome outcome;
  outcome.status = status_;
  if (status_ == 0) {
    // No HTTP response: the connection failed (refused, unresolved, TLS, timed out).
    outcome.failure = error_[0] != '\0' ? std::string(error_) : Curl().easy_strerror(code);
    outcome.sent = code != CURLE_COULDNT_CONNECT && code != CURLE_COULDNT_RESOLVE_HOST &&
                   code != CURLE_COULDNT_RESOLVE_PROXY;
    return outcome;
  }
  if (code == CURLE_OK && body_ == Body::kJson && !text_.empty()) HandOut(text_);
  if (body_ == Body::kSse) {
    if (const size_t cut = sse_->Finish(); cut > 0) {
      spdlog::warn("upstream's response stream ended in the middle of an event ({} bytes dropped)",
                   cut);
    }
  }
  if (body_ == Body::kError) {
    // Rule 3: the upstream's own JSON-RPC error for this request, if its body is one.
    BoundedJson parsed = ParseBoundedJson(text_);
    if (is_request() && parsed.ok() && IsJsonRpcMessage(parsed.value) &&
        parsed.value.contains("error") && parsed.value.value("id", Json()) == spec_.id) {
      HandOut(text_);
    }
    if (failure_.empty()) failure_ = "HTTP " + std::to_string(status_);
  }
  if (failure_.empty() && code != CURLE_OK) {
    failure_ = error_[0] != '\0' ? std::string(error_) : Curl().easy_strerror(code);
  }
  outcome.failure = failure_;
  outcome.answered = answered_;
  outcome.event_stream = body_ == Body::kSse;
  return outcome;
}

UpstreamTransfer::Outcome UpstreamTransfer::RunAlone(CURLM* multi, TimePoint deadline) {
  if (Curl().multi_add_handle(multi, easy_) != CURLM_OK) return Finish(CURLE_FAILED_INIT);
  CURLcode code = CURLE_OPERATION_TIMEDOUT;
  bool done = false;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    int running = 0;
    Curl().multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = Curl().multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy_) {
        code = msg->data.result;
        done = true;
      }
    }
    if (!done) Curl().multi_poll(multi, nullptr, 0, 50, nullptr);
  }
  Curl().multi_remove_handle(multi, easy_);
  return Finish(code);
}

}  // namespace keel
