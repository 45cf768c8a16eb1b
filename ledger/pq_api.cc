#include "ledger/pq_api.h"

#include <dlfcn.h>

#include <mutex>

namespace keel {

namespace {

constexpr const char* kPqLibrary = "libpq.so.5";

std::string pq_load_error;  // written once, under the call_once

template <typename Fn>
bool BindPq(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (*fn != nullptr) return true;
  pq_load_error = std::string(kPqLibrary) + " has no " + name + " (Debian's libpq5 has it)";
  return false;
}

PqApi LoadPq() {
  // Never closed: keel uses it until it exits.
  void* library = dlopen(kPqLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    pq_load_error =
        std::string("cannot load ") + kPqLibrary +
        ", the PostgreSQL client library (install Debian's libpq5: apt install libpq5): " +
        (why != nullptr ? why : "unknown error");
    return PqApi{};
  }
  PqApi api{};
  const bool ok =
      BindPq(library, "PQconnectdb", &api.connectdb) && BindPq(library, "PQfinish", &api.finish) &&
      BindPq(library, "PQreset", &api.reset) && BindPq(library, "PQstatus", &api.status) &&
      BindPq(library, "PQtransactionStatus", &api.transaction_status) &&
      BindPq(library, "PQerrorMessage", &api.error_message) &&
      BindPq(library, "PQsetNoticeProcessor", &api.set_notice_processor) &&
      BindPq(library, "PQexec", &api.exec) && BindPq(library, "PQprepare", &api.prepare) &&
      BindPq(library, "PQexecPrepared", &api.exec_prepared) &&
      BindPq(library, "PQclear", &api.clear) &&
      BindPq(library, "PQresultStatus", &api.result_status) &&
      BindPq(library, "PQresultErrorMessage", &api.result_error_message) &&
      BindPq(library, "PQresultErrorField", &api.result_error_field) &&
      BindPq(library, "PQcmdStatus", &api.cmd_status) &&
      BindPq(library, "PQcmdTuples", &api.cmd_tuples) &&
      BindPq(library, "PQntuples", &api.ntuples) && BindPq(library, "PQgetvalue", &api.getvalue) &&
      BindPq(library, "PQgetlength", &api.getlength) &&
      BindPq(library, "PQgetisnull", &api.getisnull);
  return ok ? api : PqApi{};
}

}  // namespace

const PqApi& Pq() {
  static std::once_flag once;
  static PqApi api;
  std::call_once(once, [] { api = LoadPq(); });
  return api;
}

const std::string& PqLoadError() {
  Pq();
  return pq_load_error;
}

}  // namespace keel
