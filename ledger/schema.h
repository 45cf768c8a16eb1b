// Schema: keel's durable tables and their versioned migrations (PRAGMA user_version).
// Version 1: the mutation ledger, and the tables of the built-in in-database demo
// backends (accounts and charges, inventory and reservations). Version 2: MCP tasks.
// Version 3: operator settings (the kill switch for writes).
// Thread-safety: call once per process before the database is used, from one thread.
#pragma once

#include <string>

#include "ledger/database.h"

namespace keel {

// The newest schema version this binary knows: of a SQLite file (PRAGMA user_version), or
// of a PostgreSQL database (its keel_schema table; versions of its own).
int SchemaVersion();
int SchemaVersion(Database::Dialect dialect);

enum class MigrateStatus { kOk, kNewerThanBinary, kError };
// Brings the database up to SchemaVersion(its dialect), each step in its own transaction;
// on PostgreSQL under an advisory lock, so that of several keels starting together one
// migrates and the others find it done. A database written by a newer keel is left
// untouched (kNewerThanBinary). *error says why on failure.
MigrateStatus Migrate(Database& db, std::string* error);

}  // namespace keel
