#include "server/app/call_command.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "server/app/exit_codes.h"
#include "server/app/serve.h"
#include "server/app/signal_pipe.h"

namespace keel {
namespace {

using Json = nlohmann::json;

constexpr int kExitToolFailed = 1;
constexpr int kExitInterrupted = 130;
constexpr int kInitializeId = 1;
constexpr int kCallId = 2;
constexpr int kListId = 3;
constexpr int kInvalidParams = -32602;

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The client side of the child's stdio: whole lines from its stdout, the signal pipe watched
// while waiting.
class ServerPipe {
 public:
  ServerPipe(int to_server, int from_server, int signal_fd)
      : to_(to_server), from_(from_server), signal_fd_(signal_fd) {}
  ~ServerPipe() {
    CloseInput();
    close(from_);
  }
  ServerPipe(const ServerPipe&) = delete;
  ServerPipe& operator=(const ServerPipe&) = delete;

  bool Send(const Json& message) { return to_ >= 0 && WriteAll(to_, message.dump() + "\n"); }
  // EOF on the server's stdin: it finishes and exits.
  void CloseInput() {
    if (to_ >= 0) close(to_);
    to_ = -1;
  }

  // The next line, or nullopt at end of stream. *signalled is set (and nullopt returned)
  // when a signal arrived first.
  std::optional<std::string> ReadLine(bool* signalled) {
    *signalled = false;
    for (;;) {
      if (const size_t end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      if (eof_) return std::nullopt;
      pollfd fds[2] = {{from_, POLLIN, 0}, {signal_fd_, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return std::nullopt;
      }
      if ((fds[1].revents & POLLIN) != 0) {
        char drained[64];
        while (read(signal_fd_, drained, sizeof drained) > 0) {
        }
        *signalled = true;
        return std::nullopt;
      }
      char chunk[65536];
      const ssize_t n = read(from_, chunk, sizeof chunk);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        eof_ = true;
        continue;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int to_;
  int from_;
  int signal_fd_;
  std::string buffer_;
  bool eof_ = false;
};

// Progress and log notifications, as the call runs.
void ReportNotification(const Json& message) {
  const std::string method = message.value("method", "");
  const Json params = message.value("params", Json::object());
  if (method == "notifications/progress") {
    std::cerr << "keel call: progress " << params.value("progress", Json(0)).dump();
    if (params.contains("total")) std::cerr << "/" << params["total"].dump();
    if (params.contains("message") && params["message"].is_string()) {
      std::cerr << ": " << params["message"].get<std::string>();
    }
    std::cerr << "\n";
  } else if (method == "notifications/message") {
    const Json data = params.value("data", Json());
    std::cerr << "keel call: [" << params.value("level", "info") << "] "
              << (data.is_string() ? data.get<std::string>() : data.dump()) << "\n";
  }
}

// Prints the tool's answer; its exit code.
int PrintResult(const std::string& tool, const Json& result, bool as_json) {
  const bool is_error = result.value("isError", false);
  if (as_json) {
    std::cout << result.dump() << "\n";
    return is_error ? kExitToolFailed : 0;
  }
  std::ostream& out = is_error ? std::cerr : std::cout;
  if (is_error) out << "keel call: " << tool << " answered with an error:\n";
  bool printed_text = false;
  for (const Json& item : result.value("content", Json::array())) {
    if (item.value("type", "") == "text" && item.contains("text") && item["text"].is_string()) {
      const std::string text = item["text"].get<std::string>();
      out << text << (text.empty() || text.back() != '\n' ? "\n" : "");
      printed_text = true;
    } else {
      out << item.dump() << "\n";
    }
  }
  if (!printed_text && result.contains("structuredContent")) {
    out << result["structuredContent"].dump(2) << "\n";
  }
  out.flush();
  return is_error ? kExitToolFailed : 0;
}

std::string ErrorText(const Json& error) {
  std::string text = error.value("message", std::string("error"));
  if (error.contains("code")) text += " (JSON-RPC " + error["code"].dump() + ")";
  if (error.contains("data")) text += ": " + error["data"].dump();
  return text;
}

int WaitFor(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// The exit code of a server that stopped before answering.
int ServerExit(pid_t child) {
  const int status = WaitFor(child);
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return WEXITSTATUS(status);
  std::cerr << "keel call: the server stopped before answering\n";
  return kExitSoftware;
}

// The client's side of the session: initialize, the one tools/call, its answer (and the
// tool names after an unknown tool), then the server's exit.
class CallSession {
 public:
  CallSession(ServerPipe& server, pid_t child, const CliOptions& flags, Json arguments)
      : server_(server), child_(child), flags_(flags), arguments_(std::move(arguments)) {}

  // The exit code.
  int Run() {
    server_.Send({{"jsonrpc", "2.0"},
                  {"id", kInitializeId},
                  {"method", "initialize"},
                  {"params",
                   {{"protocolVersion", "2025-11-25"},
                    {"capabilities", Json::object()},
                    {"clientInfo", {{"name", "keel-call"}, {"version", KEEL_VERSION}}}}}});
    for (;;) {
      bool signalled = false;
      const std::optional<std::string> line = server_.ReadLine(&signalled);
      if (signalled) {
        OnSignal();
      } else if (!line) {
        return OnServerExit();
      } else if (const std::optional<int> code = OnLine(*line)) {
        return *code;
      }
    }
  }

 private:
  // SIGINT/SIGTERM: cancel the call and let the server stop; a second one (or one after the
  // answer) stops the server without waiting.
  void OnSignal() {
    if (cancelled_ || settled_) {
      kill(child_, SIGTERM);
      return;
    }
    cancelled_ = true;
    server_.Send({{"jsonrpc", "2.0"},
                  {"method", "notifications/cancelled"},
                  {"params", {{"requestId", kCallId}, {"reason", "interrupted (keel call)"}}}});
    server_.CloseInput();
  }

  int OnServerExit() {
    if (settled_) {
      WaitFor(child_);
      return cancelled_ ? kExitInterrupted : code_;
    }
    if (cancelled_) {
      ServerExit(child_);
      std::cerr << "keel call: interrupted; the call was cancelled\n";
      return kExitInterrupted;
    }
    return ServerExit(child_);
  }

  // An exit code when the session must end now.
  std::optional<int> OnLine(const std::string& line) {
    const Json message = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!message.is_object()) return std::nullopt;
    if (message.contains("method")) {
      OnServerMessage(message);
      return std::nullopt;
    }
    const Json id = message.value("id", Json());
    if (id == kInitializeId) return OnInitialized(message);
    if (id == kListId) OnToolList(message);
    if (id == kCallId) OnCallAnswer(message);
    return std::nullopt;
  }

  // A notification is shown; a request is refused (keel call declares no capability).
  void OnServerMessage(const Json& message) {
    if (!message.contains("id")) {
      ReportNotification(message);
      return;
    }
    server_.Send({{"jsonrpc", "2.0"},
                  {"id", message["id"]},
                  {"error",
                   {{"code", -32601},
                    {"message", "keel call does not answer " + message.value("method", "")}}}});
  }

  std::optional<int> OnInitialized(const Json& message) {
    if (message.contains("error")) {
      std::cerr << "keel call: initialize failed: " << ErrorText(message["error"]) << "\n";
      return kExitSoftware;
    }
    server_.Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    server_.Send({{"jsonrpc", "2.0"},
                  {"id", kCallId},
                  {"method", "tools/call"},
                  {"params",
                   {{"name", flags_.call_tool},
                    {"arguments", arguments_},
                    {"_meta", {{"progressToken", "keel-call"}}}}}});
    return std::nullopt;
  }

  void OnCallAnswer(const Json& message) {
    if (message.contains("error")) {
      std::cerr << "keel call: " << flags_.call_tool << ": " << ErrorText(message["error"]) << "\n";
      code_ = kExitToolFailed;
      if (message["error"].value("code", 0) == kInvalidParams &&
          message["error"].value("message", "").rfind("Unknown tool", 0) == 0) {
        server_.Send({{"jsonrpc", "2.0"}, {"id", kListId}, {"method", "tools/list"}});
        return;  // then the names, so a typo is easy to see
      }
    } else {
      code_ =
          PrintResult(flags_.call_tool, message.value("result", Json::object()), flags_.call_json);
    }
    Settle();
  }

  void OnToolList(const Json& message) {
    std::string names;
    const Json result = message.value("result", Json::object());
    for (const Json& tool : result.value("tools", Json::array())) {
      names += (names.empty() ? "" : ", ") + tool.value("name", std::string("?"));
    }
    std::cerr << "keel call: the tools served: " << (names.empty() ? "none" : names) << "\n";
    Settle();
  }

  // The answer is out: the server reads EOF, finishes and exits; its output is read to the end.
  void Settle() {
    settled_ = true;
    server_.CloseInput();
  }

  ServerPipe& server_;
  const pid_t child_;
  const CliOptions& flags_;
  const Json arguments_;
  bool cancelled_ = false;
  bool settled_ = false;
  int code_ = kExitToolFailed;
};

}  // namespace

int RunCallCommand(const CliOptions& flags) {
  const Json arguments = Json::parse(flags.call_arguments, nullptr, /*allow_exceptions=*/false);
  if (!arguments.is_object()) {
    std::cerr << "keel call: the arguments must be one JSON object, e.g. '{\"path\": \"/tmp\"}'"
              << " (got: " << flags.call_arguments << ")\n";
    return kExitUsage;
  }
  int to_server[2];
  int from_server[2];
  if (pipe2(to_server, O_CLOEXEC) != 0 || pipe2(from_server, O_CLOEXEC) != 0) {
    std::cerr << "keel call: cannot create pipes: " << std::strerror(errno) << "\n";
    return kExitSoftware;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) {
    std::cerr << "keel call: cannot fork: " << std::strerror(errno) << "\n";
    return kExitSoftware;
  }
  if (child == 0) {  // the server: exactly `keel [serve flags]` on these pipes
    if (dup2(to_server[0], 0) < 0 || dup2(from_server[1], 1) < 0) _exit(kExitSoftware);
    for (const int fd : {to_server[0], to_server[1], from_server[0], from_server[1]}) close(fd);
    CliOptions serve_flags = flags;
    serve_flags.call = false;
    // Only the pipes: a config file's http or no-stdio (a keel service's settings) would bind
    // the service's port, or leave the pipes unread and the call waiting forever.
    serve_flags.http.clear();
    serve_flags.no_stdio = false;
    return Serve(serve_flags);
  }
  close(to_server[0]);
  close(from_server[1]);
  const int signal_fd = InstallSignalPipe();  // also ignores SIGPIPE: a dead server is EPIPE
  if (signal_fd < 0) {
    std::cerr << "keel call: cannot install signal handlers: " << std::strerror(errno) << "\n";
    kill(child, SIGTERM);
    return kExitSoftware;
  }
  ServerPipe server(to_server[1], from_server[0], signal_fd);
  return CallSession(server, child, flags, arguments).Run();
}

}  // namespace keel
