// The ledger and the backends against the intents, twice: through keel itself while it
// runs (ledger_lookup for every keyed intent: its executions; lookup_deployment_operation
// for every restart intent), and in the database file once every keel has exited (with the
// sqlite3 CLI, when installed): one execution per keyed intent, ledger = answers = effect
// rows, balances and stock = opening amount minus what ran, at most one restart operation
// per intent, no task left working, no ledger row left unfinished, an intact file.
//
// verifyThroughKeel(w, work) sets intent.lookup and ri.final.
// checkLedger(w, work) -> {intentStats, restartStats, tableChecks (lines for the report)}.
import { spawnSync } from 'node:child_process';

import { short, violation } from './findings.mjs';
import { answer, call, expectTimeout } from './keel_conn.mjs';
import { Rng } from './rng.mjs';

let HAVE_SQLITE3 = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' }).status === 0;

export async function verifyThroughKeel(w, work) {
  const { opts, A, B } = w;
  const { intents } = work.writes;
  const { restartIntents, lookupOp } = work.restarts;
  const verifier = new Rng(opts.seed ^ 0xface);
  async function inBatches(items, size, fn) {
    for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
  }
  await inBatches(intents, 16, async (intent) => {
    const k = B && verifier.chance(0.5) ? B : A;
    let r;
    for (let i = 0; i < 3; i++) {  // a read queued past its idle clock is asked again
      r = await answer(call(k, 'ledger_lookup', { tool: intent.tool, key: intent.key }, { rng: verifier, kind: 'verify' }));
      if (!expectTimeout('verify', r, ['idle', 'max'])) break;
    }
    const sc = r?.result?.structuredContent;
    if (!sc || r.result.isError) { violation('verify_lookup_failed', `${intent.key}: ${short(r)}`); return; }
    intent.lookup = sc;
  });
  await inBatches(restartIntents.filter((ri) => ri.variant !== 'no_approval'), 16, async (ri) => {
    const l = await lookupOp(B ?? A, verifier, ri.key);
    if (!l.known) violation('verify_lookup_failed', `${ri.key}: ${short(l.msg)}`);
    ri.final = l;
  });
}

// Rows as JSON objects: from the SQLite file with the sqlite3 CLI, or (with --postgres) from
// PostgreSQL with psql; PRAGMA integrity_check is SQLite's own and answers "ok" there.
function sqlReader(db, pg) {
  if (pg) {
    return (query) => {
      if (query.startsWith('PRAGMA integrity_check')) return [{ integrity_check: 'ok' }];
      const r = spawnSync('psql', [db, '-tAqc', `SELECT coalesce(json_agg(q), '[]') FROM (${query}) q`],
        { encoding: 'utf8', maxBuffer: 1 << 28 });
      if (r.status !== 0) { violation('sqlite3', `psql ${query}: ${r.stderr}`); return []; }
      return JSON.parse(r.stdout.trim() || '[]');
    };
  }
  return (query) => {
    const r = spawnSync('sqlite3', ['-json', db, query], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (r.status !== 0) { violation('sqlite3', `${query}: ${r.stderr}`); return []; }
    return r.stdout.trim() ? JSON.parse(r.stdout) : [];
  };
}

// The ledger and the effect rows, by key (empty without the sqlite3 CLI).
function readTables(sqlJson) {
  const ledgerRows = new Map();
  if (HAVE_SQLITE3) {
    for (const row of sqlJson('SELECT tool, key, state, executions, attempts, fingerprint, result FROM ledger')) {
      ledgerRows.set(`${row.tool}\u0000${row.key}`, row);
    }
  }
  const chargesByKey = new Map();
  const reservationsByKey = new Map();
  const charges = HAVE_SQLITE3 ? sqlJson('SELECT charge_id, account, cents, idempotency_key FROM charges') : [];
  const reservations = HAVE_SQLITE3 ? sqlJson('SELECT reservation_id, tenant, sku, quantity, idempotency_key FROM reservations') : [];
  for (const c of charges) if (c.idempotency_key) chargesByKey.set(c.idempotency_key, [...(chargesByKey.get(c.idempotency_key) ?? []), c]);
  for (const r of reservations) if (r.idempotency_key) reservationsByKey.set(r.idempotency_key, [...(reservationsByKey.get(r.idempotency_key) ?? []), r]);
  return { ledgerRows, charges, reservations, chargesByKey, reservationsByKey };
}

function checkIntents(intents, tables) {
  const { ledgerRows, chargesByKey, reservationsByKey } = tables;
  const NOT_RUN = new Set(['not_run', 'not_started', 'mismatch']);
  const intentStats = { executed: 0, never: 0, unknown: 0, unknownRan: 0, tries: 0, finalFailures: 0 };
  const expectedBalance = new Map();   // account -> cents charged by executed keyed intents
  const expectedStockUse = new Map();  // tenant/sku -> units reserved by executed keyed intents
  for (const intent of intents) {
    intentStats.tries += intent.tries.length;
    const real = intent.tries.filter((t) => !t.probe);
    const oks = real.filter((t) => t.outcome === 'ok');
    const finals = real.filter((t) => t.outcome === 'final_failure');
    const ids = new Set(oks.map((t) => t.opId));
    if (ids.size > 1) violation('executed_twice', `${intent.key}: ${ids.size} different effects answered: ${[...ids]}`);
    // Fresh (not replayed) answers: one execution answers fresh once (a task's result, read
    // again through tasks/result, is one answer).
    const fresh = new Set(oks.concat(finals).filter((t) => !t.replayed).map((t) => t.taskId ?? t.rec.key));
    if (fresh.size > 1) violation('executed_twice', `${intent.key}: ${fresh.size} fresh (not replayed) answers`);
    let expect;
    if (oks.length || finals.length) expect = 'executed';
    else if (real.every((t) => NOT_RUN.has(t.outcome))) expect = 'never';
    else expect = 'unknown';
    intent.expect = expect;
    const lk = intent.lookup;  // keel's ledger_lookup
    const executions = lk?.found ? lk.executions : 0;
    if (lk && lk.found && lk.key !== intent.key) violation('mixed_answer', `ledger_lookup ${intent.key}: ${short(lk)}`);
    if (executions > 1) violation('executed_twice', `${intent.key}: ledger executions ${executions}`);
    if (expect === 'executed') {
      intentStats.executed++;
      if (executions !== 1) violation('executions_mismatch', `${intent.key}: executed (answered), ledger executions ${executions} (${short(lk)})`);
      const storedId = lk?.result?.structuredContent?.charge_id ?? lk?.result?.structuredContent?.reservation_id;
      if (oks.length && storedId !== [...ids][0]) violation('executions_mismatch', `${intent.key}: answered ${[...ids][0]}, ledger holds ${storedId}`);
      if (finals.length && lk?.state !== 'failed') violation('executions_mismatch', `${intent.key}: final failure answered, ledger ${lk?.state}`);
    } else if (expect === 'never') {
      intentStats.never++;
      if (executions !== 0) violation('executions_mismatch', `${intent.key}: surely never run (${real.map((t) => t.outcome)}), ledger executions ${executions}`);
    } else {
      intentStats.unknown++;
      if (executions === 1) intentStats.unknownRan++;
    }
    if (finals.length) intentStats.finalFailures++;
    // What really ran, per the ledger, is what the balances must show.
    const ran = lk?.found && lk.state === 'committed' && executions === 1;
    if (ran && intent.tool === 'charge_account') {
      expectedBalance.set(intent.args.account, (expectedBalance.get(intent.args.account) ?? 0) + intent.args.cents);
    } else if (ran) {
      const combo = `${intent.args.tenant}/${intent.args.sku}`;
      expectedStockUse.set(combo, (expectedStockUse.get(combo) ?? 0) + intent.args.quantity);
    } else if (intent.tool === 'charge_account') {
      expectedBalance.set(intent.args.account, expectedBalance.get(intent.args.account) ?? 0);
    } else {
      const combo = `${intent.args.tenant}/${intent.args.sku}`;
      expectedStockUse.set(combo, expectedStockUse.get(combo) ?? 0);
    }
    if (HAVE_SQLITE3) {
      const row = ledgerRows.get(`${intent.tool}\u0000${intent.key}`);
      const rowExec = row ? row.executions : 0;
      if (rowExec !== executions) violation('ledger_lookup_vs_file', `${intent.key}: ledger_lookup ${executions}, file ${rowExec}`);
      if (row && row.state !== 'committed' && row.state !== 'failed') violation('ledger_state', `${intent.key}: ${row.state}`);
      const effects = (intent.tool === 'charge_account' ? chargesByKey : reservationsByKey).get(intent.key) ?? [];
      const want = row?.state === 'committed' ? 1 : 0;
      if (effects.length !== want) violation('effects_vs_ledger', `${intent.key}: ${effects.length} effect rows, ledger ${row?.state ?? 'none'}`);
      if (effects.length === 1 && oks.length && (effects[0].charge_id ?? effects[0].reservation_id) !== [...ids][0]) {
        violation('effects_vs_ledger', `${intent.key}: effect row ${short(effects[0])}, answered ${[...ids][0]}`);
      }
    }
  }
  return { intentStats, expectedBalance, expectedStockUse };
}

function checkRestarts(restartIntents) {
  const restartStats = { intents: restartIntents.length, withOperation: 0, nothingDone: 0, unknown: 0, lostAnswers: 0, reconciled: 0 };
  const NOTHING_DONE = new Set(['backend_503', 'circuit_open', 'approval_required', 'backend_409', 'kill_switch']);
  let opsFound = 0;
  for (const ri of restartIntents) {
    restartStats.lostAnswers += ri.tries.filter((t) => t.outcome === 'lost_response').length;
    restartStats.reconciled += ri.lookups.filter((l) => l.known && l.found).length;
    if (ri.ops.size > 1) violation('restart_two_operations', `${ri.key}: ${[...ri.ops]}`);
    const f = ri.final;
    if (f?.known && f.found) opsFound++;
    if (ri.ops.size === 1) {
      restartStats.withOperation++;
      if (!f?.found || !ri.ops.has(f.opId)) violation('restart_operation_missing', `${ri.key}: answered ${[...ri.ops]}, backend ${short(f)}`);
    } else if (ri.tries.every((t) => NOTHING_DONE.has(t.outcome))) {
      restartStats.nothingDone++;
      if (f?.found) violation('restart_ran_after_refusal', `${ri.key}: every try refused (${ri.tries.map((t) => t.outcome)}), yet operation ${f.opId}`);
    } else {
      restartStats.unknown++;
    }
  }
  return { restartStats, opsFound };
}

// Balances and stock against the executed intents; every unkeyed effect accounted for.
function checkBalances(sqlJson, tables, { expectedBalance, expectedStockUse }, work, tableChecks) {
  const { charges, reservations } = tables;
  const { intents, unkeyed } = work.writes;
  const integrity = sqlJson('PRAGMA integrity_check');
  if (integrity[0]?.integrity_check !== 'ok') violation('integrity_check', short(integrity));
  // Balances and stock: opening amount minus what the executed intents and unkeyed calls took.
  const accounts = new Map(sqlJson('SELECT account, balance_cents FROM accounts').map((r) => [r.account, r.balance_cents]));
  for (const [account, cents] of expectedBalance) {
    const have = accounts.get(account) ?? 100000;
    if (have !== 100000 - cents) violation('balance', `${account}: ${have}, expected ${100000 - cents}`);
  }
  const stock = new Map(sqlJson('SELECT tenant, sku, stock FROM inventory').map((r) => [`${r.tenant}/${r.sku}`, r.stock]));
  for (const [combo, used] of expectedStockUse) {
    if ((stock.get(combo) ?? 100) !== 100 - used) violation('inventory', `${combo}: ${stock.get(combo)}, expected ${100 - used}`);
  }
  tableChecks.push(`${expectedBalance.size} keyed accounts and ${expectedStockUse.size} keyed stock lines match the executed intents`);
  // Unkeyed: every answered effect exists; the balances equal the effect rows; no more rows than calls.
  const known = new Set(intents.map((i) => i.key));
  for (const c of charges) {
    if (c.idempotency_key && !known.has(c.idempotency_key)) violation('stray_effect', short(c));
  }
  for (const r of reservations) {
    if (r.idempotency_key && !known.has(r.idempotency_key)) violation('stray_effect', short(r));
  }
  const unkeyedRows = { charge_account: new Set(charges.filter((c) => !c.idempotency_key).map((c) => c.charge_id)),
    reserve_inventory: new Set(reservations.filter((r) => !r.idempotency_key).map((r) => r.reservation_id)) };
  for (const u of unkeyed) {
    if (u.outcome === 'ok' && !unkeyedRows[u.tool].has(u.opId)) violation('unkeyed_effect_missing', short(u.args));
  }
  const unkeyedAccounts = new Set(unkeyed.filter((u) => u.tool === 'charge_account').map((u) => u.args.account));
  for (const account of unkeyedAccounts) {
    const rows = charges.filter((c) => c.account === account);
    if (rows.some((c) => c.idempotency_key)) violation('stray_effect', `${account}: a keyed charge on an unkeyed account`);
    const sum = rows.reduce((s, c) => s + c.cents, 0);
    if ((accounts.get(account) ?? 100000) !== 100000 - sum) violation('balance', `${account}: ${accounts.get(account)} vs rows ${sum}`);
  }
  for (const tool of ['charge_account', 'reserve_inventory']) {
    const sent = unkeyed.filter((u) => u.tool === tool);
    const ok = sent.filter((u) => u.outcome === 'ok').length;
    const notRun = sent.filter((u) => u.outcome === 'not_run').length;
    const rows = unkeyedRows[tool].size;
    if (rows < ok || rows > sent.length - notRun) violation('unkeyed_count', `${tool}: ${rows} rows for ${sent.length} calls (${ok} answered ok, ${notRun} refused)`);
  }
}

function checkBackendRows(sqlJson, restartIntents, opsFound, tableChecks) {
  // Restarts: one operation per key at most, each from one of our intents, and each job's
  // restart counter equals its operations.
  const ops = sqlJson('SELECT operation_id, idempotency_key, job_id, intent_id FROM deploy_operations');
  const byIntent = new Map(restartIntents.map((ri) => [ri.intent_id, ri]));
  const perIntent = new Map();
  for (const op of ops) {
    const ri = byIntent.get(op.intent_id);
    if (!ri) { violation('stray_operation', short(op)); continue; }
    perIntent.set(op.intent_id, (perIntent.get(op.intent_id) ?? 0) + 1);
    if (ri.variant === 'no_approval') violation('restart_without_approval', short(op));
  }
  for (const [intentId, count] of perIntent) if (count > 1) violation('restart_two_operations', `${intentId}: ${count}`);
  if (ops.length !== opsFound) violation('restart_operations_vs_lookup', `${ops.length} operations in the file, lookups found ${opsFound}`);
  const restarts = sqlJson('SELECT sum(restarts) AS n FROM deploy_jobs')[0]?.n ?? 0;
  if (restarts !== ops.length) violation('restart_counter', `deploy_jobs.restarts ${restarts} vs ${ops.length} operations`);
  tableChecks.push(`${ops.length} restart operations = Σ deploy_jobs.restarts = operations found by lookup`);
  const working = sqlJson("SELECT count(*) AS n FROM tasks WHERE status IN ('working','input_required')")[0]?.n ?? 0;
  if (working !== 0) violation('tasks_left_working', `${working} tasks still working after the run`);
  const inProgress = sqlJson("SELECT count(*) AS n FROM ledger WHERE state NOT IN ('committed','failed')")[0]?.n ?? 0;
  if (inProgress !== 0) violation('ledger_state', `${inProgress} ledger rows neither committed nor failed`);
}

export function checkLedger(w, work) {
  if (w.pg) HAVE_SQLITE3 = spawnSync('psql', ['--version'], { encoding: 'utf8' }).status === 0;
  const sqlJson = sqlReader(w.db, w.pg);
  const tables = readTables(sqlJson);
  const { intentStats, ...expected } = checkIntents(work.writes.intents, tables);
  const { restartStats, opsFound } = checkRestarts(work.restarts.restartIntents);
  const tableChecks = [];
  if (HAVE_SQLITE3) {
    checkBalances(sqlJson, tables, expected, work, tableChecks);
    checkBackendRows(sqlJson, work.restarts.restartIntents, opsFound, tableChecks);
  } else {
    tableChecks.push('sqlite3 CLI not installed: balances, inventory and backend tables not read (ledger_lookup checks only)');
  }
  return { intentStats, restartStats, tableChecks };
}
