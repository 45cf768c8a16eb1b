#!/usr/bin/env node
// The soak (IDEM-1..6, CAN-2, TASK-2): a bounded run, loopback only, of a seeded random mix of
// everything keel does — reads, keyed and unkeyed writes, restarts under faults, cancels,
// timeouts, tasks, held slots, bad input, a kill-switch window — at a steady in-flight
// level, against two keel processes sharing one --db file, with invariants checked while it
// runs and again, against the ledger, the backend tables and keel's trace, at the end.
// Usage: node scripts/soak_support/soak.mjs [--seconds 180] [--seed N] [--keel PATH]
//          [--runners 12] [--single] [--warmup S] [--rss-pct 20] [--rss-mb 5] [--keep]
// Prints a report; exits 1 on any violation (2 on bad usage). Method and figures: README.md,
// "Soak". Speaks raw JSON-RPC lines over pipes (tests/support/keel_process.mjs) so it sees
// every byte keel writes and decides when each line (a cancel in particular) is written.
//
// The parts, by concern: options.mjs (the command line), deployment.mjs (the database, the
// two keels and their policies), faults.mjs (backend faults and the kill switch),
// keel_conn.mjs (one keel over stdio, every line checked), workload*.mjs (the scenarios and
// the mix), trace_check.mjs, ledger_check.mjs and memory.mjs (the checks at the end),
// report.mjs; findings.mjs collects violations and outcome counts, rng.mjs and clock.mjs are
// the seeded randomness and the run's clock.
import { now, sleep } from './clock.mjs';
import { deploy, initialize } from './deployment.mjs';
import { killSwitch } from './faults.mjs';
import { short, violation } from './findings.mjs';
import { checkLedger, verifyThroughKeel } from './ledger_check.mjs';
import { checkMemory } from './memory.mjs';
import { parseOptions } from './options.mjs';
import { report } from './report.mjs';
import { checkTrace } from './trace_check.mjs';
import { workload } from './workload.mjs';

const opts = parseOptions(process.argv.slice(2));
const w = deploy(opts);
const { dir, db, faultsA, faultsB, B, C, keels } = w;
const work = workload(w);
const { watchdog } = work;
const kill = killSwitch(opts, db);

const fleet = C ? 'keel A (4 workers) + keels B and C (2 workers each) on one PostgreSQL --db'
  : B ? 'keel A (4 workers) + keel B (2 workers) on one SQLite --db' : 'one keel (4 workers) on SQLite';
console.log(`keel soak: seed ${opts.seed}, ${opts.seconds} s, ${opts.runners} runners, ${fleet}`);
console.log(`  rerun: scripts/soak --seed ${opts.seed} --seconds ${opts.seconds}${opts.single ? ' --single' : ''}${opts.postgres ? ' --postgres' : ''}`);
console.log(`  binary ${opts.keel}; files in ${dir}${opts.keep ? '' : ' (removed at the end; --keep keeps them)'}`);
console.log(`  faults A: ${faultsA.join(', ')}`);
if (B) console.log(`  faults B${C ? ' and C' : ''}: ${faultsB.join(', ')}`);

for (const k of keels) k.start();
try {
  await Promise.all(keels.map(initialize));
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
const watch = setInterval(watchdog, 1000);
const mixStart = now();
const deadline = mixStart + opts.seconds * 1000;
let progressLine = setInterval(() => {
  const sent = keels.reduce((s, k) => s + k.recs.size, 0);
  const rss = keels.map((k) => `${k.name} ${((k.rss.at(-1)?.[1] ?? 0) / 1024).toFixed(1)} MB`).join(', ');
  console.log(`  t=${Math.round((now() - mixStart) / 1000)} s: ${sent} requests, ${keels.reduce((s, k) => s + k.outstanding.size, 0)} open; RSS ${rss}`);
}, 30000);
const killer = kill.run(deadline);
await Promise.all(Array.from({ length: opts.runners }, (_, i) => work.runner(i, deadline)));
const mixEnd = now();
for (const k of keels) k.cpuMix = k.cpuSeconds();
clearInterval(progressLine);
await killer;
await kill.admin('off');

// Drain: every request not cancelled must be answered.
for (let i = 0; i < 300 && keels.some((k) => k.outstanding.size > 0); i++) await sleep(100);

await verifyThroughKeel(w, work);
for (let i = 0; i < 100 && keels.some((k) => k.outstanding.size > 0); i++) await sleep(100);

// Close: stdin EOF, keel must exit 0 by itself within its grace.
const closing = now();
const exits = await Promise.all(keels.map(async (k) => {
  const timer = setTimeout(() => { violation('exit', `${k.name}: still running 10 s after EOF; killed`); k.child.kill('SIGKILL'); }, 10000);
  const e = await k.close();
  clearTimeout(timer);
  if (e.code !== 0) violation('exit', `${k.name}: exit ${JSON.stringify(e)}\n${k.stderrTail}`);
  return { name: k.name, ...e, ms: Math.round(e.at - closing) };
}));
clearInterval(watch);
watchdog();
for (const k of keels) {
  for (const rec of k.outstanding) {
    violation('not_answered', `${k.name}: ${rec.method} ${rec.tool ?? ''} id ${rec.key} (${rec.kind}) never answered`);
  }
  if (k.idless.length !== k.expectedIdless || k.idless.some((c) => c !== -32700)) {
    violation('idless_errors', `${k.name}: sent ${k.expectedIdless} unparsable lines, got id-less errors ${short(k.idless)}`);
  }
}

const { traceLines, cancelStats } = await checkTrace(w, work);
const { intentStats, restartStats, tableChecks } = checkLedger(w, work);
const rssReport = checkMemory(w, mixStart, mixEnd);
const total = report({
  w, work, mixStart, mixEnd, killWindows: kill.windows(), exits, traceLines, cancelStats, intentStats, restartStats,
  tableChecks, rssReport,
});
console.log(`\nsoak: seed ${opts.seed}: ${total === 0 ? 'every invariant held' : `${total} violation(s)`}`);
process.exit(total === 0 ? 0 : 1);
