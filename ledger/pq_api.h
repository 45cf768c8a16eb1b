// PqApi: the libpq functions keel uses, from libpq.so.5 loaded with dlopen the first time a
// `--db postgresql://...` connects (PgDatabase::Connect), instead of linked. One code path in
// every build, the packaged one and the developer's.
//
// Why by hand: libpq cannot be linked statically on Debian (its libpq.a needs OpenSSL, GSSAPI
// and LDAP archives Debian does not ship), and linking it shared maps it and what it needs
// (OpenSSL, Kerberos, LDAP, GnuTLS, ...) into every keel process, on SQLite or not: a release
// package could then not install without them (ADO-1). RSS of an idle keel (stdio, SQLite
// --db, after initialize; VmHWM in /proc/PID/status): 14.4 MB with libpq and libmicrohttpd
// linked, 9.1 MB with both loaded on use, 7.9 MB for the release binary (scripts/package:
// libstdc++, SQLite, RE2 and Boost.Context linked statically). The headers still come from
// libpq-dev (the types and constants); at run time a system that uses PostgreSQL installs
// Debian's libpq5 (the .deb recommends it).
//
// Pq() never fails: when libpq cannot be loaded, PqLoadError() says why (naming Debian's
// libpq5) and the table is empty; PgDatabase::Connect checks PqLoadError() first, and no
// other function is called without a connection it made.
//
// Thread-safety: Pq() and PqLoadError() may be called from any thread (loaded once).
#pragma once

#include <string>

#include <libpq-fe.h>

namespace keel {

// Each member has the type of the libpq function it names (so a call is checked as one).
struct PqApi {
  decltype(&::PQconnectdb) connectdb;
  decltype(&::PQfinish) finish;
  decltype(&::PQreset) reset;
  decltype(&::PQstatus) status;
  decltype(&::PQtransactionStatus) transaction_status;
  decltype(&::PQerrorMessage) error_message;
  decltype(&::PQsetNoticeProcessor) set_notice_processor;
  decltype(&::PQexec) exec;
  decltype(&::PQprepare) prepare;
  decltype(&::PQexecPrepared) exec_prepared;
  decltype(&::PQclear) clear;
  decltype(&::PQresultStatus) result_status;
  decltype(&::PQresultErrorMessage) result_error_message;
  decltype(&::PQresultErrorField) result_error_field;
  decltype(&::PQcmdStatus) cmd_status;
  decltype(&::PQcmdTuples) cmd_tuples;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetlength) getlength;
  decltype(&::PQgetisnull) getisnull;
};

// The functions, loaded on the first call.
const PqApi& Pq();

// Why libpq could not be loaded; empty when it was.
const std::string& PqLoadError();

}  // namespace keel
