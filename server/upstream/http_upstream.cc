#include "server/upstream/http_upstream.h"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

#include "server/upstream/curl_api.h"

namespace keel {
namespace {

constexpr Duration kIdlePoll = Millis(1000);

std::once_flag curl_once;
CURLcode curl_started = CURLE_FAILED_INIT;

bool StartsWithNoCase(const std::string& text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// The URL without user:password@, for logs.
std::string ShownUrl(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t host = scheme + 3;
  const size_t path = std::min(url.find_first_of("/?#", host), url.size());
  const size_t at = url.rfind('@', path);
  if (at == std::string::npos || at < host || at >= path) return url;
  return url.substr(0, host) + "***@" + url.substr(at + 1);
}

bool IsModernMessage(const Json& message) {
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return false;
  const auto meta = params->find("_meta");
  return meta != params->end() && meta->is_object() &&
         meta->contains("io.modelcontextprotocol/protocolVersion");
}

std::string MethodOf(const Json& message) {
  const auto method = message.find("method");
  return method != message.end() && method->is_string() ? method->get<std::string>() : "";
}

bool Succeeded(long status) { return status >= 200 && status <= 299; }

}  // namespace

// What the thread takes from the shared state in one round.
struct HttpUpstream::Intake {
  std::vector<Queued> posts;
  std::vector<Json> abandoned;
};

HttpUpstream::HttpUpstream(const UpstreamEndpoint& endpoint, UpstreamEvents events)
    : endpoint_(endpoint),
      shown_url_(ShownUrl(endpoint.url)),
      events_(std::move(events)),
      session_(endpoint.headers),
      stream_schedule_(endpoint.reconnect_id) {}

std::unique_ptr<HttpUpstream> HttpUpstream::Start(const UpstreamEndpoint& endpoint,
                                                  UpstreamEvents events, std::string* error) {
  if (!StartsWithNoCase(endpoint.url, "http://") && !StartsWithNoCase(endpoint.url, "https://")) {
    *error = "the upstream URL must start with http:// or https://";
    return nullptr;
  }
  std::call_once(curl_once, [] { curl_started = Curl().global_init(CURL_GLOBAL_DEFAULT); });
  if (curl_started != CURLE_OK) {
    *error = std::string("libcurl cannot start: ") + Curl().easy_strerror(curl_started);
    return nullptr;
  }
  std::unique_ptr<HttpUpstream> upstream(new HttpUpstream(endpoint, std::move(events)));
  if (!upstream->pool_.ok()) {
    *error = "libcurl cannot start a multi handle";
    return nullptr;
  }
  upstream->thread_ = std::thread([raw = upstream.get()] { raw->Run(); });
  return upstream;
}

HttpUpstream::~HttpUpstream() {
  if (thread_.joinable()) Shutdown(Duration::zero());
}

bool HttpUpstream::Send(const Json& message, std::string* why) {
  // Rule 4: a modern cancel is the closed stream (Abandon), not a POST.
  if (MethodOf(message) == "notifications/cancelled" && IsModernMessage(message)) return true;
  std::string body = message.dump(-1, ' ', false, Json::error_handler_t::replace);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) {
      *why = "the upstream connection is closed";
      return false;
    }
    if (queued_bytes_ + body.size() > endpoint_.max_queued_bytes) {
      *why = "the upstream is not keeping up (" + std::to_string(queued_bytes_) +
             " bytes of requests wait for it)";
      return false;
    }
    queued_bytes_ += body.size();
    queue_.push_back(Queued{message, std::move(body)});
  }
  pool_.Wake();
  return true;
}

void HttpUpstream::Abandon(const Json& id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->message.contains("method") && it->message.value("id", Json()) == id) {
        queued_bytes_ -= it->body.size();
        queue_.erase(it);
        return;  // never sent: nothing to stop
      }
    }
    abandoned_.push_back(id);
  }
  pool_.Wake();
}

void HttpUpstream::Shutdown(Duration grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    grace_ = grace;
  }
  pool_.Wake();
  if (thread_.joinable()) thread_.join();
}

bool HttpUpstream::TakeWork(Intake& intake) {
  std::lock_guard<std::mutex> lock(mu_);
  intake.abandoned.swap(abandoned_);
  if (stopping_) return false;
  const size_t posts = pool_.size() - (stream_open_ ? 1 : 0);
  while (!queue_.empty() && posts + intake.posts.size() < kMaxInFlight) {
    queued_bytes_ -= queue_.front().body.size();
    intake.posts.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return true;
}

void HttpUpstream::Run() {
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
  const TransferPool::DoneFn done = [this](std::unique_ptr<UpstreamTransfer> transfer,
                                           const UpstreamTransfer::Outcome& outcome) {
    const TimePoint now = std::chrono::steady_clock::now();
    if (transfer->kind() == UpstreamTransfer::Kind::kStream) return SettleStream(outcome, now);
    Settle(*transfer, outcome, now);
  };
  while (true) {
    Intake intake;
    if (!TakeWork(intake)) break;
    for (const Json& id : intake.abandoned) pool_.StopRequest(id);
    for (Queued& queued : intake.posts) StartPost(std::move(queued));
    TimePoint now = std::chrono::steady_clock::now();
    if (!stream_open_ && stream_schedule_.Due(now)) StartStream();
    pool_.Run(done);
    if (!ended_.empty()) break;
    now = std::chrono::steady_clock::now();
    pool_.StopLingering(now);
    pool_.Wait(now, std::min(now + kIdlePoll, stream_schedule_.due()));
  }
  Stop();
}

std::unique_ptr<UpstreamTransfer> HttpUpstream::MakeTransfer(UpstreamTransfer::Spec spec) {
  spec.url = endpoint_.url;
  spec.max_message_bytes = endpoint_.max_line_bytes;
  spec.connect_timeout = std::min(spec.connect_timeout, endpoint_.connect_timeout);
  std::string error;
  std::unique_ptr<UpstreamTransfer> transfer = UpstreamTransfer::Make(
      std::move(spec),
      [this](const UpstreamTransfer& from, Json message) { OnMessage(from, std::move(message)); },
      &junk_, &error);
  if (!transfer) spdlog::error("upstream HTTP: {}", error);
  return transfer;
}

void HttpUpstream::StartPost(Queued queued) {
  UpstreamTransfer::Spec spec;
  spec.headers = session_.PostHeaders(queued.message);
  spec.body = std::move(queued.body);
  spec.method = MethodOf(queued.message);
  if (!spec.method.empty()) spec.id = queued.message.value("id", Json());
  const Json id = spec.id;
  const std::string method = spec.method;
  std::unique_ptr<UpstreamTransfer> transfer = MakeTransfer(std::move(spec));
  if (transfer && pool_.Add(std::move(transfer))) return;
  if (id.is_null()) return;
  UpstreamTransfer::Outcome refused;
  refused.failure = "libcurl could not start the request";
  refused.sent = false;
  AnswerFailed(id, method, refused);
}

void HttpUpstream::StartStream() {
  UpstreamTransfer::Spec spec;
  spec.kind = UpstreamTransfer::Kind::kStream;
  spec.headers = session_.StreamHeaders();
  std::unique_ptr<UpstreamTransfer> transfer = MakeTransfer(std::move(spec));
  stream_open_ = transfer && pool_.Add(std::move(transfer));
  stream_schedule_.Opened();
  // One that could not start is refused for good.
  if (!stream_open_) stream_schedule_.Ended(-1, false, std::chrono::steady_clock::now());
}

void HttpUpstream::OnMessage(const UpstreamTransfer& from, Json message) {
  if (from.kind() == UpstreamTransfer::Kind::kStream) {
    stream_schedule_.OnMessage();
    events_.on_message(std::move(message), Json());
    return;
  }
  if (from.is_request() && !message.contains("method") &&
      message.value("id", Json()) == from.id()) {
    session_.OnAnswer(from.method(), message, from.session_header());
  }
  events_.on_message(std::move(message), from.id());
}

void HttpUpstream::Settle(const UpstreamTransfer& transfer,
                          const UpstreamTransfer::Outcome& outcome, TimePoint now) {
  unreachable_ = outcome.status == 0 ? unreachable_ + 1 : 0;
  if (outcome.status == 404 && !session_.session_id().empty()) {
    ended_ = "at " + shown_url_ + " ended keel's session (HTTP 404 for its Mcp-Session-Id)";
    return;
  }
  if (transfer.is_request() && !outcome.answered) {
    AnswerFailed(transfer.id(), transfer.method(), outcome);
  } else if (transfer.is_request() && !outcome.failure.empty()) {
    spdlog::debug("upstream HTTP: {} answered with an error ({})", transfer.method(),
                  outcome.failure);
  } else if (!outcome.failure.empty()) {
    spdlog::warn("upstream HTTP: the POST of {} failed: {}",
                 transfer.method().empty() ? "a response" : transfer.method(), outcome.failure);
  }
  if (transfer.method() == "notifications/initialized" && Succeeded(outcome.status) &&
      !session_.modern()) {
    stream_schedule_.Wanted(now);  // rule 5
  }
  if (unreachable_ >= kMaxUnreachable) {
    ended_ = "at " + shown_url_ + " could not be reached for " + std::to_string(unreachable_) +
             " requests in a row (the last: " + outcome.failure + ")";
  }
}

void HttpUpstream::AnswerFailed(const Json& id, const std::string& method,
                                const UpstreamTransfer::Outcome& outcome) {
  std::string what = outcome.failure;
  if (what.empty()) {
    what = "the response (HTTP " + std::to_string(outcome.status) + ") ended without an answer";
  }
  Json data = Json::object();
  if (outcome.status > 0) {
    data["http_status"] = outcome.status;
  } else {
    data["transport"] = outcome.failure;
  }
  data["sent"] = outcome.sent;
  spdlog::info("upstream HTTP: {} (request {}) failed: {}", method, id.dump(), what);
  Json error = {{"code", kUpstreamHttpFailure},
                {"message", std::string(kUpstreamHttpFailurePrefix) + what}};
  error["data"] = std::move(data);
  events_.on_message(Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}}, id);
}

void HttpUpstream::SettleStream(const UpstreamTransfer::Outcome& outcome, TimePoint now) {
  stream_open_ = false;
  if (stream_schedule_.Ended(outcome.status, outcome.event_stream, now)) {
    spdlog::debug(
        "upstream HTTP: the GET stream ended ({}); opened again in {} ms",
        outcome.failure.empty() ? "by the upstream" : outcome.failure,
        std::chrono::duration_cast<std::chrono::milliseconds>(stream_schedule_.due() - now)
            .count());
    return;
  }
  spdlog::info(
      "upstream HTTP: no GET stream ({}): what the upstream says outside requests does not "
      "reach keel",
      outcome.failure.empty() ? "HTTP " + std::to_string(outcome.status) : outcome.failure);
}

void HttpUpstream::EndSession(Duration grace) {
  UpstreamTransfer::Spec spec;
  spec.kind = UpstreamTransfer::Kind::kDelete;
  spec.headers = session_.DeleteHeaders();
  spec.connect_timeout = grace;
  spec.timeout = grace;
  std::unique_ptr<UpstreamTransfer> transfer = MakeTransfer(std::move(spec));
  if (!transfer) return;
  const UpstreamTransfer::Outcome outcome =
      transfer->RunAlone(pool_.multi(), std::chrono::steady_clock::now() + grace);
  spdlog::debug(
      "upstream HTTP: DELETE of the session: {}",
      outcome.failure.empty() ? "HTTP " + std::to_string(outcome.status) : outcome.failure);
}

void HttpUpstream::Stop() {
  bool by_keel = false;
  Duration grace{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    by_keel = stopping_;
    grace = grace_;
    closed_ = true;
    queue_.clear();
    queued_bytes_ = 0;
    abandoned_.clear();
  }
  pool_.StopAll();
  stream_open_ = false;
  // Rule 7: a session the upstream ended, or one it cannot be reached for, is not DELETEd.
  if (by_keel && ended_.empty() && !session_.session_id().empty() && grace > Duration::zero()) {
    EndSession(grace);
  }
  events_.on_closed(ended_.empty() ? "at " + shown_url_ + " was disconnected (keel stopped)"
                                   : ended_);
}

}  // namespace keel
