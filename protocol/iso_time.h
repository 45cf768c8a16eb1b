// IsoTime: the one way keel writes a stored wall-clock time into an answer — task
// timestamps (createdAt, lastUpdatedAt), ledger rows, cached results. Pure: formatting only;
// the time itself is read by the caller (WallClockMs, server/runtime/clock.h).
#pragma once

#include <cstdint>
#include <string>

namespace keel {

// Milliseconds since the Unix epoch as an ISO 8601 UTC time ("2026-11-29T18:00:00.123Z").
std::string IsoTime(int64_t epoch_ms);

}  // namespace keel
