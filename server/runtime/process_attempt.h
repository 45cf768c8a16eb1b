// ProcessAttempt: what identifies one run of a command — its process group — beyond the life
// of the keel that started it, and whether such a run is known to be over (IDEM-5).
//
// A keyed write's claim records its attempt (MutationLedger::RecordAttempt): the machine's
// boot id, the group id (the leader's pid) and the leader's start time. If keel dies while
// the command runs, the command runs on (process_runner.h says why it is not killed with
// keel); the next keel must not let a lookup release the key while that run may still
// produce the effect (remote_write.h).
//
// AttemptGone(attempt) is true only when the attempt surely runs no more:
//  1. the boot id differs from this machine's: a reboot ended it;
//  2. no process is in a group with that id (kill(-pgid, 0) fails with ESRCH);
//  3. the process whose pid is the group id started at another time than the recorded leader:
//     the id was reused. Linux does not hand out a pid while a process group with that id
//     exists, so the recorded group had emptied before the reuse, and a group never refills
//     (joining one needs a member);
//  4. every process in the group is a zombie (exited, waiting for a wait() that a reaper may
//     never do): none of them runs code again.
// Anything else, or anything unreadable, counts as "may still run": safety first, a key
// held longer is better than an effect run twice. An attempt whose group was never recorded
// (keel died between the claim and the spawn's record, pgid 0) cannot be told apart from a
// running one on the same boot: it may still run.
//
// Assumptions: keel processes sharing a SQLite file share one pid namespace (the owner
// check, LedgerOwnerGone, makes the same one); /proc is mounted. Keels sharing a PostgreSQL
// database may run on several machines: they use AttemptGoneHere, which judges only an
// attempt started on this machine's current boot. Start times are clock ticks since
// boot (/proc/<pid>/stat field 22).
//
// Thread-safety: every function may be called from any thread; BootId() is read once.
#pragma once

#include <string>

#include <sys/types.h>

#include "ledger/mutation_ledger.h"

namespace keel {

// AttemptGone for a database shared across machines: an attempt recorded with another boot
// id (or none) may be another machine's process, which this one cannot see: it may still
// run (false). One of this boot is judged by AttemptGone.
bool AttemptGoneHere(const LedgerAttempt& attempt);

// /proc/sys/kernel/random/boot_id, read on first use; empty when unreadable.
const std::string& BootId();

// What a claim records before its command is started: this boot, no group yet.
LedgerAttempt StartingAttempt();

// The attempt whose group leader `pid` was just started (keel's child, not yet reaped, so
// the pid names it).
LedgerAttempt SpawnedAttempt(pid_t pid);

// True only when `attempt` surely runs no more (see above).
bool AttemptGone(const LedgerAttempt& attempt);

}  // namespace keel
