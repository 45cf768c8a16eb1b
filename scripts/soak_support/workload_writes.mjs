// Writes with an idempotency key (charge_account, reserve_inventory): each intent (tool,
// key, arguments) is sent 1-3 times, in sequence, at once, after a cancel of the previous
// try, as a task, or after a jam made the first try time out; now and then the key comes
// again with other arguments, which must be refused. And writes without a key (counted
// apart: each call may run its effect again), and ledger_lookup of a key already answered.
//
// writeWorkload(w) -> {intents, unkeyed, keyedIntent(rng, tool), unkeyedWrite(rng),
//   lookupKnownKey(rng), classifyKeyed, classifyUnkeyed}. intents and unkeyed keep every try
//   and its outcome for the checks at the end (trace_check.mjs, ledger_check.mjs).
import { now, sleep } from './clock.mjs';
import { short, tally, violation } from './findings.mjs';
import { KEY_META, RELATED, REPLAYED, answer, call, errorType, expectTimeout, textOf } from './keel_conn.mjs';

export function writeWorkload(w) {
  const { B, route, tag, calls } = w;
  const intents = [];
  let jamBusy = false;
  let jamNext = 0;  // at most one jam every 10 s: B is jammed for ~2 s each time

  function intentArgs(rng, tool, n) {
    const special = rng.chance(0.03);  // a final failure, stored and replayed like a result
    if (tool === 'charge_account') {
      return special ? { account: `${tag}-poor-${n}`, cents: 200000 }
        : { account: `${tag}-acct-${n % 64}`, cents: rng.int(1, 100) };
    }
    return special ? { sku: `${tag}-big-${n}`, tenant: 'ten-big', quantity: 101 }
      : { sku: `${tag}-sku-${Math.floor(n / 16)}`, tenant: `ten-${n % 4}`, quantity: rng.int(1, 3) };
  }

  function classifyKeyed(intent, t, msg, { probe = false } = {}) {
    if (!msg) return 'no_answer';
    if (msg.error) {
      violation('keyed_rpc_error', `${intent.key}: ${short(msg)}`);
      return 'rpc_error';
    }
    const r = msg.result;
    const sc = r.structuredContent ?? {};
    const args = t.args;
    if (!r.isError) {
      const id = intent.tool === 'charge_account' ? sc.charge_id : sc.reservation_id;
      const same = intent.tool === 'charge_account'
        ? sc.account === args.account && sc.cents === args.cents
        : sc.sku === args.sku && sc.tenant === args.tenant && sc.quantity === args.quantity;
      if (!id || !same) violation('mixed_answer', `${intent.key}: sent ${short(args)}, got ${short(sc)}`);
      if (probe) violation('mismatch_executed', `${intent.key}: other arguments under a used key ran: ${short(msg)}`);
      t.opId = id;
      t.replayed = r._meta?.[REPLAYED] === true;
      return 'ok';
    }
    const type = sc.error?.type;
    switch (type) {
      case 'insufficient_funds': case 'out_of_stock':
        t.replayed = r._meta?.[REPLAYED] === true;
        return 'final_failure';
      case 'timeout': return 'timeout';
      case 'idempotency_key_mismatch': return 'mismatch';
      case 'kill_switch': case 'server_busy': case 'ledger_busy': case 'ledger_error': case 'circuit_open':
        return 'not_run';
      default:
        violation('keyed_unexpected_answer', `${intent.key}: ${short(msg)}`);
        return `unexpected_${type}`;
    }
  }

  async function keyedTry(intent, k, rng, { task = false, cancelAfter = null, args = intent.args, probe = false } = {}) {
    const a = { ...args };
    let meta;
    if (rng.chance(0.3)) meta = { [KEY_META]: intent.key }; else a.idempotencyKey = intent.key;
    const t = { conn: k.name, task, args, probe, outcome: null };
    intent.tries.push(t);
    const rec = call(k, intent.tool, a, { rng, kind: 'keyed', meta, task: task ? { ttl: 30000 } : undefined });
    t.rec = rec;
    if (cancelAfter !== null) {
      await sleep(cancelAfter);
      if (rec.answers === 0) {
        k.cancel(rec);
        t.outcome = 'cancelled';  // a late answer, if the cancel lost the race, is read at the end
        return t;
      }
    }
    let msg = await answer(rec);
    if (task && msg) {
      const taskId = msg.result?.task?.taskId;
      if (!taskId) {
        // Refused before a task existed (the kill switch, too many tasks): nothing ran.
        const type = msg.error?.data?.type ?? errorType(msg);
        if (['kill_switch', 'too_many_tasks', 'server_busy', 'circuit_open'].includes(type)) t.outcome = 'not_run';
        else t.outcome = classifyKeyed(intent, t, msg);
        return t;
      }
      t.taskId = taskId;
      t.existing = msg.result._meta?.['dev.keel/existing-task'] === true;
      const res = k.request('tasks/result', { taskId }, { rng, kind: 'keyed_task_result' });
      msg = await answer(res);
      if (msg?.result && msg.result._meta?.[RELATED]?.taskId !== taskId) {
        violation('task_result_without_related_task', `${intent.key}: ${short(msg)}`);
      }
    }
    t.outcome = classifyKeyed(intent, t, msg, { probe });
    return t;
  }

  async function keyedIntent(rng, tool) {
    const n = ++calls.intent;
    const intent = { tool, key: `${tag}-${tool === 'charge_account' ? 'ch' : 'rs'}-${n}`, args: intentArgs(rng, tool, n), tries: [] };
    intents.push(intent);
    let mode = rng.weighted({ sequential: 35, concurrent: 20, cancel_then_retry: 20, task: 15, jam: 5, timeout_then_retry: 5 });
    if (mode === 'jam' && (!B || jamBusy || now() < jamNext)) mode = 'sequential';
    intent.mode = mode;
    const tries = Number(rng.weighted({ 1: 45, 2: 35, 3: 20 }));
    if (mode === 'sequential') {
      for (let i = 0; i < tries; i++) await keyedTry(intent, route(rng), rng);
    } else if (mode === 'concurrent') {
      await Promise.all(Array.from({ length: Math.max(2, tries) }, () => keyedTry(intent, route(rng), rng)));
    } else if (mode === 'cancel_then_retry' || mode === 'timeout_then_retry') {
      // timeout_then_retry: the client's own deadline ran out (as the SDK's request timeout
      // does: it sends notifications/cancelled), later than a plain cancel.
      const delay = mode === 'cancel_then_retry' ? rng.int(0, 25) : rng.int(20, 200);
      await keyedTry(intent, route(rng), rng, { cancelAfter: delay });
      await sleep(rng.int(0, 50));
      for (let i = 1; i < tries; i++) await keyedTry(intent, route(rng), rng);
      if (tries === 1) await keyedTry(intent, route(rng), rng);
    } else if (mode === 'task') {
      await keyedTry(intent, route(rng), rng, { task: true });
      for (let i = 1; i < tries; i++) await keyedTry(intent, route(rng), rng, { task: rng.chance(0.5) });
    } else if (mode === 'jam') {
      await jamTry(intent, rng);
      if (rng.chance(0.6)) await keyedTry(intent, route(rng), rng);
    }
    // A key used with other arguments must be refused, and nothing may run.
    const ok = intent.tries.find((t) => t.outcome === 'ok');
    if (ok && rng.chance(0.15)) {
      const other = tool === 'charge_account' ? { ...intent.args, cents: intent.args.cents + 1 }
        : { ...intent.args, quantity: intent.args.quantity + 1 };
      const t = await keyedTry(intent, route(rng), rng, { args: other, probe: true });
      // (A probe that timed out in the queue proves nothing here; the ledger check at the end
      // still requires the key's one execution with the original arguments.)
      if (!['mismatch', 'not_run', 'timeout'].includes(t.outcome)) {
        violation('mismatch_not_refused', `${intent.key}: ${t.outcome}`);
      }
    }
    tally(`keyed_${tool}`, mode);
  }

  // Both of B's workers are held by latch_wait calls (queued first: the queue is FIFO), so a
  // keyed write sent now waits in the queue and meets its 2 s maximum clock without running.
  async function jamTry(intent, rng) {
    jamBusy = true;
    jamNext = now() + 10000;
    try {
      const n = ++calls.latch;
      const names = [0, 1].map((i) => `${tag}-jam-${n}-${i}`);
      const latches = names.map((name) => call(B, 'latch_wait', { name }, { rng, kind: 'jam_latch' }));
      await sleep(20);
      const t = await keyedTry(intent, B, rng);
      t.jam = true;
      if (t.outcome !== 'timeout') tally('jam', `not_timed_out_${t.outcome}`); else tally('jam', 'timed_out');
      for (const name of names) {
        const rel = await answer(call(B, 'latch_release', { name }, { rng, kind: 'latch_release' }));
        if (!textOf(rel)?.includes(name)) violation('latch_release', short(rel));
      }
      for (const [i, rec] of latches.entries()) {
        const r = await answer(rec);
        if (textOf(r) !== `released ${names[i]}`) violation('mixed_answer', `jam latch ${names[i]}: ${short(r)}`);
      }
    } finally {
      jamBusy = false;
    }
  }

  // Unkeyed writes (counted apart: each call may run its effect again).
  const unkeyed = [];

  async function unkeyedWrite(rng) {
    const n = ++calls.unkeyed;
    const k = route(rng);
    const charge = rng.chance(0.6);
    const tool = charge ? 'charge_account' : 'reserve_inventory';
    const args = charge ? { account: `${tag}-u-${n % 8}`, cents: rng.int(1, 20) }
      : { sku: `${tag}-usku-${Math.floor(n / 20)}`, tenant: 'ten-u', quantity: 1 };
    const u = { tool, args, outcome: null };
    unkeyed.push(u);
    const rec = call(k, tool, args, { rng, kind: 'unkeyed' });
    u.rec = rec;
    if (rng.chance(0.1)) {
      await sleep(rng.int(0, 20));
      if (rec.answers === 0) { k.cancel(rec); u.outcome = 'cancelled'; tally('unkeyed', 'cancelled'); return; }
    }
    const msg = await answer(rec);
    u.outcome = classifyUnkeyed(u, msg);
    tally('unkeyed', u.outcome);
  }

  function classifyUnkeyed(u, msg) {
    if (!msg) return 'no_answer';
    const sc = msg.result?.structuredContent ?? {};
    if (msg.result && !msg.result.isError) {
      u.opId = sc.charge_id ?? sc.reservation_id;
      const same = u.tool === 'charge_account' ? sc.account === u.args.account && sc.cents === u.args.cents
        : sc.sku === u.args.sku && sc.quantity === u.args.quantity;
      if (!same || !u.opId) violation('mixed_answer', `unkeyed ${short(u.args)}: ${short(sc)}`);
      if (sc[REPLAYED] || msg.result._meta?.[REPLAYED]) violation('unkeyed_replayed', short(msg));
      return 'ok';
    }
    const type = sc.error?.type;
    if (['kill_switch', 'server_busy', 'ledger_busy', 'ledger_error', 'circuit_open', 'timeout'].includes(type)) {
      return type === 'timeout' ? 'timeout' : 'not_run';
    }
    violation('unkeyed_unexpected_answer', short(msg));
    return `unexpected_${type}`;
  }

  async function lookupKnownKey(rng) {
    const done = intents.filter((i) => i.tries.some((t) => t.outcome === 'ok'));
    if (done.length === 0) return;
    const intent = rng.pick(done);
    const r = await answer(call(route(rng), 'ledger_lookup', { tool: intent.tool, key: intent.key }, { rng, kind: 'ledger_lookup' }));
    const sc = r?.result?.structuredContent;
    if (expectTimeout('ledger_lookup', r, ['idle', 'max'])) { tally('ledger_lookup', 'timeout_while_queued'); return; }
    if (!sc?.found || sc.executions !== 1 || sc.key !== intent.key) violation('ledger_lookup_live', `${intent.key}: ${short(sc)}`);
    tally('ledger_lookup', sc?.state ?? 'error');
  }

  return { intents, unkeyed, keyedIntent, unkeyedWrite, lookupKnownKey, classifyKeyed, classifyUnkeyed };
}
