// CurlApi: the libcurl functions keel uses, from libcurl.so.4 loaded with dlopen the first
// time they are needed (keel wrap --upstream-url), instead of linked.
//
// Why by hand: linking libcurl maps it and everything it needs (OpenSSL, Kerberos, LDAP,
// SSH, RTMP, ...) into every keel process, served by stdio or HTTP, wrapping or not:
// scripts/bench --wrap measured keel's RSS 13.7 MB before libcurl was linked and 17.0 MB
// after (issue 22's goal is 16 MB), most of it OpenSSL's libcrypto. Only an HTTP upstream
// needs it. The headers still come from libcurl4-openssl-dev (the types and constants); at
// run time a package that installs keel depends on libcurl4 (or libcurl4t64).
//
// Curl() never fails: when libcurl cannot be loaded, the table's constructors fail cleanly
// (global_init returns CURLE_FAILED_INIT, easy_init and multi_init return null, slist_append
// returns null), easy_strerror and LoadError() say why, and nothing else is called, since
// keel calls the others only on a handle those returned.
//
// Thread-safety: Curl() may be called from any thread (loaded once).
#pragma once

#include <string>

#include <curl/curl.h>

namespace keel {

struct CurlApi {
  CURLcode (*global_init)(long flags);
  const char* (*easy_strerror)(CURLcode code);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL* easy);
  CURLcode (*easy_setopt)(CURL* easy, CURLoption option, ...);
  CURLcode (*easy_getinfo)(CURL* easy, CURLINFO info, ...);
  CURLHcode (*easy_header)(CURL* easy, const char* name, size_t index, unsigned int origin,
                           int request, curl_header** header);
  curl_slist* (*slist_append)(curl_slist* list, const char* text);
  void (*slist_free_all)(curl_slist* list);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM* multi);
  CURLMcode (*multi_add_handle)(CURLM* multi, CURL* easy);
  CURLMcode (*multi_remove_handle)(CURLM* multi, CURL* easy);
  CURLMcode (*multi_perform)(CURLM* multi, int* running);
  CURLMsg* (*multi_info_read)(CURLM* multi, int* left);
  CURLMcode (*multi_poll)(CURLM* multi, curl_waitfd* extra, unsigned int extra_count,
                          int timeout_ms, int* ready);
  CURLMcode (*multi_wakeup)(CURLM* multi);
};

// The functions, loaded on the first call.
const CurlApi& Curl();

// Why libcurl could not be loaded; empty when it was.
const std::string& CurlLoadError();

}  // namespace keel
