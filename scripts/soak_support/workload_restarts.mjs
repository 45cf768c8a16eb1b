// Restarts under faults (restart_deployment_job, which needs an approval): A loses every
// restart's answer after the backend did it, B answers 150 ms late (and 503s its first
// calls). Lost or cancelled -> reconcile by key with lookup_deployment_operation, as an agent
// should. Some intents lack the approval or name the wrong environment.
//
// restartWorkload(w) -> {restartIntents, restartIntent(rng), lookupOp(k, rng, key),
//   classifyRestart}. JOBS: the backend's jobs and their environments.
import { sleep } from './clock.mjs';
import { short, tally, violation } from './findings.mjs';
import { answer, call, expectTimeout } from './keel_conn.mjs';

export const JOBS = [['web-api', 'production'], ['worker', 'production'], ['billing-sync', 'staging']];

export function restartWorkload(w) {
  const { A, B, route, tag, calls } = w;
  const restartIntents = [];

  async function lookupOp(k, rng, key) {
    let r;
    for (let i = 0; i < 3; i++) {  // a read queued past its idle clock is asked again
      r = await answer(call(k, 'lookup_deployment_operation', { idempotency_key: key }, { rng, kind: 'lookup' }));
      if (!expectTimeout('lookup', r, ['idle', 'max'])) break;
    }
    const sc = r?.result?.structuredContent;
    if (!r?.result || r.result.isError || typeof sc?.found !== 'boolean') return { known: false, msg: r };
    if (sc.idempotency_key !== key) violation('mixed_answer', `lookup ${key}: ${short(sc)}`);
    return { known: true, found: sc.found, opId: sc.operation_id };
  }

  async function restartIntent(rng) {
    const n = ++calls.restart;
    const [job, env] = rng.pick(JOBS);
    const variant = rng.weighted({ normal: 88, no_approval: 6, wrong_env: 6 });
    const environment = variant === 'wrong_env' ? (env === 'production' ? 'staging' : 'production') : env;
    const ri = { n, job, environment, variant, intent_id: `${tag}-ri-${n}`, approval_id: `ap-${n}`, tries: [], ops: new Set(), lookups: [], fresh: 0 };
    ri.key = `restart:${job}:${environment}:${ri.intent_id}:${ri.approval_id}`;
    restartIntents.push(ri);
    const tries = Number(rng.weighted({ 1: 50, 2: 35, 3: 15 }));
    for (let i = 0; i < tries; i++) {
      const together = rng.chance(0.1) && B;
      const batch = together ? [A, B] : [route(rng)];
      const results = await Promise.all(batch.map((k) => restartTry(ri, k, rng, rng.chance(0.15) ? rng.int(0, 200) : null)));
      for (const t of results) {
        if (t.outcome === 'ok') continue;
        if (['lost_response', 'cancelled', 'timeout', 'attempt_timeout', 'no_answer'].includes(t.outcome)) {
          const l = await lookupOp(route(rng), rng, ri.key);
          ri.lookups.push(l);
          if (l.known && l.found) ri.ops.add(l.opId);
          if (t.outcome === 'lost_response' && l.known && !l.found) {
            violation('lost_response_not_found', `${ri.key}: the answer was lost after the backend did it, yet the lookup finds nothing`);
          }
        }
      }
      if (ri.ops.size > 1) violation('restart_two_operations', `${ri.key}: ${[...ri.ops]}`);
      if (variant !== 'normal' || (ri.ops.size > 0 && rng.chance(0.5))) break;
    }
    tally('restart', variant);
  }

  async function restartTry(ri, k, rng, cancelAfter) {
    const args = { job_id: ri.job, environment: ri.environment, intent_id: ri.intent_id };
    if (ri.variant !== 'no_approval') args.approval_id = ri.approval_id;
    const t = { conn: k.name, outcome: null };
    ri.tries.push(t);
    const rec = call(k, 'restart_deployment_job', args, { rng, kind: 'restart' });
    t.rec = rec;
    if (cancelAfter !== null) {
      await sleep(cancelAfter);
      if (rec.answers === 0) { k.cancel(rec); t.outcome = 'cancelled'; return t; }
    }
    const msg = await answer(rec);
    t.outcome = classifyRestart(ri, t, msg);
    return t;
  }

  function classifyRestart(ri, t, msg) {
    if (!msg) return 'no_answer';
    if (msg.error) { violation('restart_rpc_error', `${ri.key}: ${short(msg)}`); return 'rpc_error'; }
    const sc = msg.result.structuredContent ?? {};
    if (!msg.result.isError) {
      if (sc.job_id !== ri.job || sc.idempotency_key !== ri.key || !sc.operation_id) {
        violation('mixed_answer', `${ri.key}: ${short(sc)}`);
      }
      ri.ops.add(sc.operation_id);
      t.opId = sc.operation_id;
      t.replayed = sc.replayed === true;
      // One try created the operation; every other answer for the key is its replay.
      if (!t.replayed && ++ri.fresh > 1) violation('restart_not_replayed', `${ri.key}: a second fresh answer (${sc.operation_id})`);
      return 'ok';
    }
    const e = sc.error ?? {};
    switch (e.type) {
      case 'lost_response':
        if (e.needs_reconciliation !== true || e.idempotency_key !== ri.key) {
          violation('lost_response_shape', `${ri.key}: ${short(e)}`);
        }
        return 'lost_response';
      case 'backend_503': case 'circuit_open': case 'approval_required': case 'backend_409': case 'kill_switch':
        return e.type;  // nothing was done
      case 'attempt_timeout': case 'timeout':
        return e.type;
      default:
        violation('restart_unexpected_answer', `${ri.key}: ${short(msg)}`);
        return `unexpected_${e.type}`;
    }
  }

  return { restartIntents, restartIntent, lookupOp, classifyRestart };
}
