#include "server/transport/http/mhd_api.h"

#include <dlfcn.h>

#include <mutex>

namespace keel {

namespace {

constexpr const char* kMhdLibrary = "libmicrohttpd.so.12";

std::string mhd_load_error;  // written once, under the call_once

template <typename Fn>
bool BindMhd(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (*fn != nullptr) return true;
  mhd_load_error =
      std::string(kMhdLibrary) + " has no " + name + " (libmicrohttpd 0.9.75 or later is needed)";
  return false;
}

MhdApi LoadMhd() {
  // Never closed: keel uses it until it exits.
  void* library = dlopen(kMhdLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    mhd_load_error = std::string("cannot load ") + kMhdLibrary +
                     ", the HTTP server library (install Debian's libmicrohttpd12: apt install "
                     "libmicrohttpd12): " +
                     (why != nullptr ? why : "unknown error");
    return MhdApi{};
  }
  MhdApi api{};
  const bool ok =
      BindMhd(library, "MHD_start_daemon", &api.start_daemon) &&
      BindMhd(library, "MHD_stop_daemon", &api.stop_daemon) &&
      BindMhd(library, "MHD_quiesce_daemon", &api.quiesce_daemon) &&
      BindMhd(library, "MHD_get_daemon_info", &api.get_daemon_info) &&
      BindMhd(library, "MHD_run", &api.run) && BindMhd(library, "MHD_run_wait", &api.run_wait) &&
      BindMhd(library, "MHD_get_timeout", &api.get_timeout) &&
      BindMhd(library, "MHD_get_connection_info", &api.get_connection_info) &&
      BindMhd(library, "MHD_get_connection_values_n", &api.get_connection_values_n) &&
      BindMhd(library, "MHD_suspend_connection", &api.suspend_connection) &&
      BindMhd(library, "MHD_resume_connection", &api.resume_connection) &&
      BindMhd(library, "MHD_create_response_from_buffer", &api.create_response_from_buffer) &&
      BindMhd(library, "MHD_create_response_from_callback", &api.create_response_from_callback) &&
      BindMhd(library, "MHD_add_response_header", &api.add_response_header) &&
      BindMhd(library, "MHD_queue_response", &api.queue_response) &&
      BindMhd(library, "MHD_destroy_response", &api.destroy_response);
  return ok ? api : MhdApi{};
}

}  // namespace

const MhdApi& Mhd() {
  static std::once_flag once;
  static MhdApi api;
  std::call_once(once, [] { api = LoadMhd(); });
  return api;
}

const std::string& MhdLoadError() {
  Mhd();
  return mhd_load_error;
}

}  // namespace keel
