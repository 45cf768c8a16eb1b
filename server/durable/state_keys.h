// The keys that seal the state of multi round-trip requests (server/input/request_state.h),
// kept in the settings table of the --db, so that every keel on one database seals and opens
// alike and a state survives a restart of keel between two rounds.
//
// Invariants:
//  1. Created on first use, in one write transaction (UpdateSetting): two keels starting
//     together on a new database end with the same keys.
//  2. Rotated when the current key is older than `rotate_after_ms`: the current key becomes
//     the previous one (still accepted when opening a state) and a new one is made. So a
//     round in flight across a rotation still opens, and a key older than two periods opens
//     nothing.
//  3. Each key is 32 bytes from the kernel's CSPRNG.
// Thread-safety: the caller's connection; no state of its own.
#pragma once

#include <cstdint>

#include "ledger/database.h"
#include "server/input/request_state.h"

namespace keel {

inline constexpr int64_t kStateKeyRotationMs = int64_t{30} * 24 * 3600 * 1000;

// Throws SqliteError.
StateKeys LoadStateKeys(Database& db, int64_t now_ms, int64_t rotate_after_ms);
// Keys for a process without a database (tests): random, never stored, no previous key.
StateKeys EphemeralStateKeys();

}  // namespace keel
