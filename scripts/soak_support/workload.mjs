// The mix: scenarios drawn by weight, each runner with its own seeded Rng, until the
// deadline; and a watchdog that reports a request left unanswered past its limit.
//
// workload(w) -> {writes, restarts, reads, tasks (each workload's own state and
//   classifiers, for the checks at the end), runner(i, deadline), watchdog()}.
import { now, sleep } from './clock.mjs';
import { violation } from './findings.mjs';
import { Rng } from './rng.mjs';
import { readWorkload } from './workload_reads.mjs';
import { restartWorkload } from './workload_restarts.mjs';
import { taskWorkload } from './workload_tasks.mjs';
import { writeWorkload } from './workload_writes.mjs';

export function workload(w) {
  const { opts, keels } = w;
  const writes = writeWorkload(w);
  const restarts = restartWorkload(w);
  const reads = readWorkload(w);
  const tasks = taskWorkload(w);
  const { ping, echo, sleepShort, progress, sleepIdleTimeout, progressMaxTimeout, cancelRead, getJob, flaky, heldSlot, badInput } = reads;
  const { keyedIntent, unkeyedWrite, lookupKnownKey } = writes;
  const { restartIntent } = restarts;
  const { taskScenario } = tasks;
  const SCENARIOS = {
    ping: [8, ping], echo: [10, echo], sleep: [6, sleepShort], progress: [5, progress],
    timeout_idle: [2, sleepIdleTimeout], timeout_max: [1, progressMaxTimeout], cancel: [7, cancelRead],
    get_job: [6, getJob], flaky: [5, flaky],
    charge: [10, (rng) => keyedIntent(rng, 'charge_account')], reserve: [5, (rng) => keyedIntent(rng, 'reserve_inventory')],
    unkeyed: [3, unkeyedWrite], restart: [4, restartIntent], task: [6, taskScenario],
    held_slot: [1, heldSlot], bad_input: [1, badInput], ledger_lookup: [2, lookupKnownKey],
  };
  const weights = Object.fromEntries(Object.entries(SCENARIOS).map(([k, [w]]) => [k, w]));

  function watchdog() {
    for (const k of keels) {
      for (const rec of k.outstanding) {
        if (!rec.flagged && now() - rec.sentAt > rec.limitMs) {
          rec.flagged = true;
          violation('no_answer', `${k.name}: ${rec.method} ${rec.tool ?? ''} id ${rec.key} (${rec.kind}) unanswered after ${rec.limitMs} ms`);
        }
      }
    }
  }

  async function runner(i, deadline) {
    const rng = new Rng((opts.seed ^ Math.imul(i + 1, 0x9E3779B9)) >>> 0);
    while (now() < deadline) {
      const name = rng.weighted(weights);
      try {
        await SCENARIOS[name][1](rng);
      } catch (e) {
        violation('soak_error', `${name}: ${e.stack}`);
      }
      await sleep(rng.int(0, 15));
    }
  }

  return { writes, restarts, reads, tasks, runner, watchdog };
}
