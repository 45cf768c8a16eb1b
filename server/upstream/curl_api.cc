#include "server/upstream/curl_api.h"

#include <dlfcn.h>

#include <mutex>

namespace keel {

namespace {

std::string load_error;  // written once, under the call_once

CURLcode NoGlobalInit(long) { return CURLE_FAILED_INIT; }
const char* NoStrerror(CURLcode) { return load_error.c_str(); }
CURL* NoEasyInit() { return nullptr; }
curl_slist* NoSlistAppend(curl_slist*, const char*) { return nullptr; }
void NoSlistFreeAll(curl_slist*) {}
CURLM* NoMultiInit() { return nullptr; }

CurlApi Unavailable() {
  CurlApi api{};
  api.global_init = &NoGlobalInit;
  api.easy_strerror = &NoStrerror;
  api.easy_init = &NoEasyInit;
  api.slist_append = &NoSlistAppend;
  api.slist_free_all = &NoSlistFreeAll;
  api.multi_init = &NoMultiInit;
  return api;
}

template <typename Fn>
bool Bind(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (*fn != nullptr) return true;
  load_error = std::string("libcurl.so.4 has no ") + name + " (libcurl 7.85 or later is needed)";
  return false;
}

CurlApi Load() {
  // Never closed: keel uses it until it exits.
  void* library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    load_error = std::string("cannot load libcurl.so.4 (install libcurl4): ") +
                 (why != nullptr ? why : "unknown error");
    return Unavailable();
  }
  CurlApi api{};
  const bool ok = Bind(library, "curl_global_init", &api.global_init) &&
                  Bind(library, "curl_easy_strerror", &api.easy_strerror) &&
                  Bind(library, "curl_easy_init", &api.easy_init) &&
                  Bind(library, "curl_easy_cleanup", &api.easy_cleanup) &&
                  Bind(library, "curl_easy_setopt", &api.easy_setopt) &&
                  Bind(library, "curl_easy_getinfo", &api.easy_getinfo) &&
                  Bind(library, "curl_easy_header", &api.easy_header) &&
                  Bind(library, "curl_slist_append", &api.slist_append) &&
                  Bind(library, "curl_slist_free_all", &api.slist_free_all) &&
                  Bind(library, "curl_multi_init", &api.multi_init) &&
                  Bind(library, "curl_multi_cleanup", &api.multi_cleanup) &&
                  Bind(library, "curl_multi_add_handle", &api.multi_add_handle) &&
                  Bind(library, "curl_multi_remove_handle", &api.multi_remove_handle) &&
                  Bind(library, "curl_multi_perform", &api.multi_perform) &&
                  Bind(library, "curl_multi_info_read", &api.multi_info_read) &&
                  Bind(library, "curl_multi_poll", &api.multi_poll) &&
                  Bind(library, "curl_multi_wakeup", &api.multi_wakeup);
  return ok ? api : Unavailable();
}

}  // namespace

const CurlApi& Curl() {
  static std::once_flag once;
  static CurlApi api;
  std::call_once(once, [] { api = Load(); });
  return api;
}

const std::string& CurlLoadError() {
  Curl();
  return load_error;
}

}  // namespace keel
