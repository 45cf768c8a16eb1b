// ReconnectBackoff: how long keel, as a client of an upstream MCP server (`keel wrap`), waits
// before it connects again after losing it (REC-2): a restart of a crashed or unreachable
// upstream (upstream_link.h rule 2), and the reopening of an HTTP upstream's GET stream
// (stream_schedule.h). Pure functions: no clock, no sleeping, no state.
//
// Invariants:
//  1. Attempt n (n >= 1: the first try after a loss is 1; n < 1 counts as 1) has the ceiling
//     min(kReconnectCap, kReconnectFirst * 2^(n-1)): 250, 500, 1000, 2000, 4000, 8000,
//     8000... ms, computed without overflow whatever n is.
//  2. ReconnectDelay(n, id) lies in [ceiling / 2, ceiling): equal jitter, the cap applied
//     before the jitter (as the retries' backoff.h does, for the same reason).
//  3. The jitter is a function of (client id, attempt) only: the same pair always gives the
//     same delay, so a test that fixes the client id knows every delay. Each keel draws its
//     client id at random (RandomReconnectId), so keels that lost one upstream at the same
//     moment come back spread over each step instead of together.
// Why equal jitter here where retries use full jitter (backoff.h): a retry's zero delay is
// cheap, but a reconnect follows a crash or an outage, and the lower half keeps keel from
// restarting a server that dies at start-up, or knocking on one that is still down, within
// a few milliseconds.
#pragma once

#include <cstdint>

#include "server/runtime/clock.h"

namespace keel {

constexpr Duration kReconnectFirst = Millis(250);
constexpr Duration kReconnectCap = Millis(8000);

// The ceiling of attempt n before jitter (invariant 1).
Duration ReconnectCeiling(int attempt);

// The delay before attempt n (invariants 2 and 3).
Duration ReconnectDelay(int attempt, uint64_t client_id);

// A client id for invariant 3, from std::random_device.
uint64_t RandomReconnectId();

}  // namespace keel
