// MhdApi: the libmicrohttpd functions keel uses, from libmicrohttpd.so.12 loaded with dlopen
// the first time an HTTP server starts (`--http`, HttpServer::Start), instead of linked. One
// code path in every build, the packaged one and the developer's.
//
// Why by hand: Debian's libmicrohttpd.a needs GnuTLS, and GnuTLS's static link needs
// p11-kit, which Debian ships only as a shared library, so libmicrohttpd cannot be linked
// statically; linked shared, it maps GnuTLS, nettle, gmp, p11-kit, libidn2 ... into every keel
// process, served by HTTP or not, and a release package could not install without them
// (ADO-1). RSS: ledger/pq_api.h gives the figures for both. The headers still come from
// libmicrohttpd-dev (types and constants); a system that serves --http installs Debian's
// libmicrohttpd12 (the .deb recommends it).
//
// MHD_start_daemon, MHD_get_daemon_info and MHD_get_connection_info are variadic: called
// through a pointer of their own (variadic) type they pass their arguments as a direct call
// does, so no MHD_start_daemon_va or MHD_OPTION_ARRAY rewrite is needed.
//
// Mhd() never fails: when libmicrohttpd cannot be loaded, MhdLoadError() says why (naming
// Debian's libmicrohttpd12) and the table is empty; HttpServer::Start checks MhdLoadError()
// first, and no other function is called without the daemon it starts.
//
// Thread-safety: Mhd() and MhdLoadError() may be called from any thread (loaded once).
#pragma once

#include <microhttpd.h>

#include <string>

namespace keel {

// Each member has the type of the libmicrohttpd function it names (so a call is checked as one).
struct MhdApi {
  decltype(&::MHD_start_daemon) start_daemon;
  decltype(&::MHD_stop_daemon) stop_daemon;
  decltype(&::MHD_quiesce_daemon) quiesce_daemon;
  decltype(&::MHD_get_daemon_info) get_daemon_info;
  decltype(&::MHD_run) run;
  decltype(&::MHD_run_wait) run_wait;
  decltype(&::MHD_get_timeout) get_timeout;
  decltype(&::MHD_get_connection_info) get_connection_info;
  decltype(&::MHD_get_connection_values_n) get_connection_values_n;
  decltype(&::MHD_suspend_connection) suspend_connection;
  decltype(&::MHD_resume_connection) resume_connection;
  decltype(&::MHD_create_response_from_buffer) create_response_from_buffer;
  decltype(&::MHD_create_response_from_callback) create_response_from_callback;
  decltype(&::MHD_add_response_header) add_response_header;
  decltype(&::MHD_queue_response) queue_response;
  decltype(&::MHD_destroy_response) destroy_response;
};

// The functions, loaded on the first call.
const MhdApi& Mhd();

// Why libmicrohttpd could not be loaded; empty when it was.
const std::string& MhdLoadError();

}  // namespace keel
