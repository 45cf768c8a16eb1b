// The report: the mix (outcomes per scenario kind, per keel, cancels, intents, restarts, the
// tables), memory, keel's own trace summary and log counts per keel, then every invariant
// with ok or FAIL and the first examples of each violation. Removes the run's files unless
// something failed (or --keep). report(r) prints it all and returns the number of violations.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

import { kinds, violations } from './findings.mjs';

const pad = (s, n) => String(s).padEnd(n);

function printMix({ w, work, mixStart, mixEnd, killWindows, exits, traceLines, cancelStats, intentStats, restartStats, tableChecks }) {
  const { opts, keels } = w;
  const { intents, unkeyed } = work.writes;
  console.log(`\n== mix: ${((mixEnd - mixStart) / 1000).toFixed(0)} s, ${opts.runners} runners, kill-switch windows ${killWindows}`);
  for (const [kind, m] of [...kinds.entries()].sort()) {
    const total = [...m.values()].reduce((s, v) => s + v, 0);
    console.log(`  ${pad(kind, 26)} ${pad(total, 6)} ${[...m.entries()].sort((a, b) => b[1] - a[1]).map(([o, c]) => `${o} ${c}`).join(', ')}`);
  }
  for (const k of keels) {
    const c = k.counts;
    console.log(`  keel ${k.name}: ${k.recs.size} requests (${(k.recs.size / ((mixEnd - mixStart) / 1000)).toFixed(0)}/s), ${c.responses} responses, ${c.cancels} cancels sent, ` +
      `${c.progress} progress, ${c.taskStatus} task status notifications, ${(k.bytesRead / 1e6).toFixed(1)} MB read, ` +
      `${traceLines[k.name]} trace records, ${k.cpuMix.toFixed(1)} CPU s in the mix, exit ${exits.find((e) => e.name === k.name)?.code} ${exits.find((e) => e.name === k.name)?.ms} ms after EOF`);
  }
  console.log(`  cancels of requests still unanswered: ${cancelStats.sent} (won: ${cancelStats.won} — never answered; ` +
    `lost the race: ${cancelStats.lostAnswered} — answered once; not traced: ${cancelStats.notTraced})`);
  console.log(`  keyed intents: ${intents.length} (${intentStats.tries} tries): executed ${intentStats.executed} ` +
    `(of which final failures ${intentStats.finalFailures}), surely never run ${intentStats.never}, ` +
    `unknown to the client ${intentStats.unknown} (the ledger says ${intentStats.unknownRan} ran)`);
  console.log(`  unkeyed writes: ${unkeyed.length} (${unkeyed.filter((u) => u.outcome === 'ok').length} answered ok)`);
  console.log(`  restart intents: ${restartStats.intents}: one operation ${restartStats.withOperation}, nothing done ${restartStats.nothingDone}, ` +
    `unknown ${restartStats.unknown}; lost answers ${restartStats.lostAnswers}, lookups that found the operation ${restartStats.reconciled}`);
  for (const line of tableChecks) console.log(`  ${line}`);
}

function printTraceSummaries({ opts, keels }) {
  for (const k of keels) {
    console.log(`\n== keel trace summary (${k.name})`);
    const s = spawnSync(opts.keel, ['trace', 'summary', k.files.trace], { encoding: 'utf8', maxBuffer: 1 << 26 });
    process.stdout.write(s.stdout);
    if (s.status !== 0) violation('trace_summary', `${k.name}: exit ${s.status} ${s.stderr}`);
    let log = '';
    try { log = readFileSync(k.files.log, 'utf8'); } catch { /* no log written */ }
    const errors = log.split('\n').filter((l) => / E /.test(l));
    const warns = log.split('\n').filter((l) => / W /.test(l));
    console.log(`  keel ${k.name} log: ${warns.length} warnings, ${errors.length} errors`);
    for (const l of errors.slice(0, 5)) console.log(`    ${l}`);
  }
}

const INVARIANTS = [
  ['one answer per request (zero or one after a cancel), no malformed line, ids never mixed',
    ['malformed_line', 'unknown_id', 'duplicate_response', 'not_answered', 'no_answer', 'not_exactly_one_answer', 'mixed_answer', 'idless_errors', 'unknown_method', 'ping']],
  ['no answer after a cancel won; a cancel that lost is answered once',
    ['answered_after_cancel_won', 'cancel_lost_but_no_answer', 'cancelled_without_cancel']],
  ['progress: known token, increasing, never after the answer', ['progress_unknown_token', 'progress_after_response', 'progress_not_increasing', 'task_progress_without_related_task']],
  ['timeouts fire on the right clock', ['timeout_missed', 'timeout_early']],
  ['keyed writes: one execution per intent, ledger = answers = effect rows, mismatches refused',
    ['executed_twice', 'executions_mismatch', 'ledger_lookup_vs_file', 'ledger_state', 'effects_vs_ledger', 'mismatch_executed', 'mismatch_not_refused', 'keyed_unexpected_answer', 'keyed_rpc_error', 'ledger_lookup_live', 'verify_lookup_failed']],
  ['balances and stock = opening − executed intents; unkeyed effects counted', ['balance', 'inventory', 'stray_effect', 'unkeyed_effect_missing', 'unkeyed_count', 'unkeyed_replayed', 'unkeyed_unexpected_answer']],
  ['restarts: at most one operation per intent, lost answers reconciled by key', ['restart_two_operations', 'restart_not_replayed', 'restart_operation_missing', 'restart_ran_after_refusal', 'lost_response_not_found', 'lost_response_shape', 'stray_operation', 'restart_without_approval', 'restart_operations_vs_lookup', 'restart_counter', 'restart_unexpected_answer', 'restart_rpc_error']],
  ['retries: never after an ambiguous unsafe write, never past max attempts', ['retried_unsafe', 'retried_past_max_attempts', 'ambiguous_write_without_reconciliation', 'flaky_unexpected_answer']],
  ['tasks: created, polled, cancelled (cancelled forever), results and late outcomes', ['task_create', 'tasks_get', 'tasks_list', 'task_result', 'task_cancel', 'task_cancelled_result', 'task_status_changed_after_terminal', 'task_late_outcome', 'task_result_without_related_task', 'tasks_left_working']],
  ['memory: RSS after warm-up does not grow', ['rss_growth']],
  ['clean exit, database intact, trace readable', ['exit', 'integrity_check', 'trace_summary', 'trace_line', 'trace_two_ends', 'sqlite3', 'admin_block_writes', 'spawn', 'soak_error', 'get_job_unexpected', 'get_job_404', 'get_job_freshness', 'latch_release']],
];

function printInvariants() {
  console.log('\n== invariants');
  const listed = new Set(INVARIANTS.flatMap(([, ks]) => ks));
  for (const [title, ks] of INVARIANTS) {
    const n = ks.reduce((s, kind) => s + (violations.get(kind)?.count ?? 0), 0);
    console.log(`  ${n === 0 ? 'ok  ' : 'FAIL'} ${title}${n ? ` (${n})` : ''}`);
  }
  for (const kind of violations.keys()) if (!listed.has(kind)) console.log(`  FAIL ${kind}`);
  if (violations.size) {
    console.log('\n== violations (first examples)');
    for (const [kind, v] of violations) {
      console.log(`  ${kind}: ${v.count}`);
      for (const e of v.examples) console.log(`    ${e.length > 600 ? e.slice(0, 600) + '…' : e}`);
    }
  }
}

export function report(r) {
  printMix(r);
  console.log('\n== memory (VmRSS, sampled every second)');
  for (const line of r.rssReport) console.log(line);
  printTraceSummaries(r.w);
  printInvariants();
  if (violations.size) {
    console.log(`\nfiles kept in ${r.w.dir}`);
  } else if (!r.w.opts.keep) {
    rmSync(r.w.dir, { recursive: true, force: true });
  }
  return [...violations.values()].reduce((s, v) => s + v.count, 0);
}
