// Reads, timeouts, cancels and flaky backends: echo, ping, sleep and progress (answered, or
// timed out while queued behind a jam), sleeps past the idle clock and progress past the
// max clock, a cancel at a random moment, get_deployment_job through B's outage (cached
// while the breaker is open), flaky tools failing a chosen sequence of ways (retried only
// where safe); plus held slots (a tool that ignores its cancel) and bad input.
//
// readWorkload(w) -> {echo, ping, sleepShort, progress, sleepIdleTimeout,
//   progressMaxTimeout, cancelRead, getJob, flaky, heldSlot, badInput (each (rng) => a
//   promise), flakyChecks (each flaky call, for the trace check)}. TRANSIENT and AMBIGUOUS:
//   the failures flaky tools inject.
import { sleep } from './clock.mjs';
import { short, tally, violation } from './findings.mjs';
import { answer, call, errorType, expectTimeout, ids, textOf } from './keel_conn.mjs';
import { JOBS } from './workload_restarts.mjs';

export const TRANSIENT = ['backend_503', 'transport_unavailable', 'backend_429'];
export const AMBIGUOUS = ['attempt_timeout', 'lost_response'];

export function readWorkload(w) {
  const { A, route, tag, calls } = w;
  async function echo(rng) {
    const n = ++calls.echo;
    const text = rng.chance(0.2) ? `${tag} é✓🚀 ${n} ${'x'.repeat(rng.int(0, 2000))}` : `${tag}-echo-${n}`;
    const r = await answer(call(route(rng), 'echo', { text }, { rng, kind: 'echo' }));
    // Queued behind blocked workers (a jam on B), a call meets the idle clock before it runs.
    if (textOf(r) === text) tally('echo', 'ok');
    else if (expectTimeout('echo', r, ['idle', 'max'])) tally('echo', 'timeout_while_queued');
    else violation('mixed_answer', `echo ${n}: ${short(r)}`);
  }

  async function ping(rng) {
    const k = route(rng);
    const r = await answer(k.request('ping', undefined, { rng, kind: 'ping' }));
    if (!r?.result || Object.keys(r.result).length !== 0) violation('ping', short(r));
    tally('ping', 'ok');
  }

  async function sleepShort(rng) {
    const ms = rng.int(0, 300);
    const r = await answer(call(route(rng), 'sleep', { ms }, { rng, kind: 'sleep' }));
    if (textOf(r) === `slept ${ms} ms`) tally('sleep', 'ok');
    else if (expectTimeout('sleep', r, ['idle', 'max'])) tally('sleep', 'timeout_while_queued');
    else violation('mixed_answer', `sleep ${ms}: ${short(r)}`);
  }

  async function progress(rng) {
    const steps = rng.int(2, 15);
    const interval = rng.int(0, 40);
    const token = rng.chance(0.5) ? `${tag}-p-${ids.next}` : ids.next * 7;
    const k = route(rng);
    const rec = call(k, 'progress', { steps, interval_ms: interval }, { rng, kind: 'progress', progressToken: token });
    const r = await answer(rec);
    if (textOf(r) === `done ${steps} steps`) tally('progress', 'ok');
    else if (expectTimeout('progress', r, ['idle', 'max'])) tally('progress', 'timeout_while_queued');
    else violation('mixed_answer', `progress ${steps}: ${short(r)}`);
  }

  async function sleepIdleTimeout(rng) {
    const ms = rng.int(1300, 1800);
    const r = await answer(call(route(rng), 'sleep', { ms }, { rng, kind: 'sleep_idle' }));
    const got = expectTimeout('sleep_idle', r, ['idle', 'max']);
    if (!got) violation('timeout_missed', `sleep ${ms} with a 1000 ms idle clock: ${short(r)}`);
    tally('timeout_idle', got ?? 'missed');
  }

  async function progressMaxTimeout(rng) {
    const token = `${tag}-pm-${ids.next}`;
    const r = await answer(call(route(rng), 'progress', { steps: 30, interval_ms: 150 },
      { rng, kind: 'progress_max', progressToken: token }));
    // idle only if it waited in the queue for a worker longer than the idle clock.
    const got = expectTimeout('progress_max', r, ['max', 'idle']);
    if (!got) violation('timeout_missed', `progress for 4.5 s with a 3000 ms max clock: ${short(r)}`);
    else if (got === 'timeout_max' && r.result.structuredContent.error.elapsed_ms < 3000) violation('timeout_early', short(r));
    tally('timeout_max', got ?? 'missed');
  }

  // A cancel at a random moment: before, during or after the work (the trace tells which won).
  async function cancelRead(rng) {
    const k = route(rng);
    const what = rng.weighted({ sleep: 4, progress: 2, echo: 2, get_job: 1 });
    let rec;
    if (what === 'sleep') rec = call(k, 'sleep', { ms: rng.int(20, 1500) }, { rng, kind: 'cancel_read' });
    else if (what === 'progress') {
      rec = call(k, 'progress', { steps: 20, interval_ms: 20 }, { rng, kind: 'cancel_read', progressToken: `${tag}-cp-${ids.next}` });
    } else if (what === 'echo') rec = call(k, 'echo', { text: 'to be cancelled' }, { rng, kind: 'cancel_read' });
    else rec = call(k, 'get_deployment_job', { job_id: 'worker' }, { rng, kind: 'cancel_read' });
    const delay = what === 'echo' ? 0 : rng.int(0, 150);
    if (delay) await sleep(delay);
    k.cancel(rec, 'soak: cancelled at random');
    tally('cancel', what);
  }

  async function getJob(rng) {
    const k = route(rng);
    const job = rng.chance(0.03) ? 'no-such-job' : rng.pick(JOBS)[0];
    const r = await answer(call(k, 'get_deployment_job', { job_id: job }, { rng, kind: 'get_job' }));
    const sc = r?.result?.structuredContent;
    let outcome;
    if (r?.result && !r.result.isError) {
      outcome = sc.freshness;  // fresh, or cached while the breaker is open (the last good read in `data`)
      if ((outcome === 'cached' ? sc.data?.job_id : sc.job_id) !== job) violation('mixed_answer', `get ${job}: ${short(sc)}`);
      if (!['fresh', 'cached'].includes(outcome)) violation('get_job_freshness', short(sc));
    } else {
      outcome = errorType(r) ?? 'rpc_error';
      if (!['backend_503', 'circuit_open', 'backend_404', 'timeout', 'attempt_timeout'].includes(outcome)) violation('get_job_unexpected', short(r));
      if (outcome === 'backend_404' && job !== 'no-such-job') violation('get_job_404', short(r));
    }
    tally(`get_job_${k.name}`, outcome);
  }

  const flakyChecks = [];

  async function flaky(rng) {
    const n = ++calls.flaky;
    const tool = rng.weighted({ flaky_read: 4, flaky_idempotent: 3, flaky_write: 3 });
    const fail = Array.from({ length: Number(rng.weighted({ 0: 2, 1: 4, 2: 3, 3: 1 })) },
      () => rng.pick([...TRANSIENT, ...AMBIGUOUS]));
    const args = { counter: `${tag}-f-${n}`, fail };
    if (rng.chance(0.3)) args.retry_after_ms = rng.int(0, 100);
    const keyed = tool === 'flaky_idempotent' && rng.chance(0.7);
    if (keyed) args.idempotencyKey = `${tag}-fk-${n}`;
    const k = route(rng);
    const rec = call(k, tool, args, { rng, kind: 'flaky' });
    const r = await answer(rec);
    // What keel may retry: reads anything transient or ambiguous, a keyed idempotent write too,
    // an unsafe or unkeyed write only what surely never happened (a transient rejection).
    const unsafe = tool === 'flaky_write' || (tool === 'flaky_idempotent' && !keyed);
    const retryable = (type) => TRANSIENT.includes(type) || (!unsafe && AMBIGUOUS.includes(type));
    let outcome;
    if (r?.result && !r.result.isError) {
      const attempt = r.result.structuredContent?.attempt;
      if (attempt !== fail.length + 1) violation('mixed_answer', `${tool} ${short(args)}: ${short(r)}`);
      if (!fail.every(retryable)) violation('retried_unsafe', `${tool} ${short(fail)} succeeded: it was retried past a failure it must not retry`);
      if (fail.length + 1 > 3) violation('retried_past_max_attempts', `${tool} ${short(fail)}`);
      outcome = fail.length ? 'ok_after_retries' : 'ok';
    } else {
      const e = r?.result?.structuredContent?.error ?? {};
      outcome = e.type ?? 'rpc_error';
      if (!fail.includes(e.type) && !['circuit_open', 'timeout', 'kill_switch'].includes(e.type)) {
        violation('flaky_unexpected_answer', `${tool} ${short(args)}: ${short(r)}`);
      }
      if (unsafe && AMBIGUOUS.includes(e.type) && e.needs_reconciliation !== true) {
        violation('ambiguous_write_without_reconciliation', `${tool} ${short(args)}: ${short(r)}`);
      }
    }
    flakyChecks.push({ rec, tool, fail, unsafe });
    tally(tool, outcome);
  }

  // A tool that ignores its cancel keeps its worker; keel answers nothing, holds the slot and
  // starts a replacement thread; the latch opens later and the stray work ends unseen.
  async function heldSlot(rng) {
    const name = `${tag}-held-${++calls.latch}`;
    const rec = call(A, 'latch_wait', { name, ignore_cancel: true }, { rng, kind: 'held' });
    await sleep(rng.int(20, 80));
    A.cancel(rec, 'soak: held slot');
    await sleep(rng.int(150, 600));
    const r = await answer(call(A, 'latch_release', { name }, { rng, kind: 'latch_release' }));
    if (textOf(r) !== `released ${name}`) violation('latch_release', short(r));
    tally('held_slot', 'released');
  }

  async function badInput(rng) {
    const k = route(rng);
    if (rng.chance(0.5)) {
      k.expectedIdless++;
      k.writeRaw(rng.pick(['{"jsonrpc":"2.0","id":', 'not json at all', '{"jsonrpc":"2.0","id":1,"method":"ping"']) + '\n');
      tally('bad_input', 'unparsable');
    } else {
      const r = await answer(k.request(`soak/unknown-${rng.int(1, 9)}`, {}, { rng, kind: 'unknown_method' }));
      if (r?.error?.code !== -32601) violation('unknown_method', short(r));
      tally('bad_input', 'unknown_method');
    }
  }

  return {
    echo, ping, sleepShort, progress, sleepIdleTimeout, progressMaxTimeout, cancelRead, getJob, flaky,
    heldSlot, badInput, flakyChecks,
  };
}
