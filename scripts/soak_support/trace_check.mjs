// Keel's trace against what the client saw: which cancels won (the call ended "cancelled":
// it must have no answer) and which lost (it ended otherwise: exactly one answer); attempts
// per call (an ambiguous failure of an unsafe write is never retried, RET-1; never more
// than max_attempts). Then tries whose outcome the trace settles are classified again: a
// cancel that lost the race is classified by its late answer, and a keyed try that timed out
// or was cancelled before any attempt started surely did not run ('not_started').
//
// checkTrace(w, work) -> {traceLines (records per keel), cancelStats}.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

import { short, violation } from './findings.mjs';
import { AMBIGUOUS } from './workload_reads.mjs';

// `${conn}:${idKey}` -> {end, reason, attempts: [error types]}, from each keel's trace file.
async function readTraces(keels) {
  const traceInfo = new Map();  // `${conn}:${idKey}` -> {end, attempts: [error types]}
  async function readTrace(k) {
    const rl = createInterface({ input: createReadStream(k.files.trace), crlfDelay: Infinity });
    let n = 0;
    for await (const line of rl) {
      if (!line) continue;
      n++;
      let r;
      try { r = JSON.parse(line); } catch { violation('trace_line', `${k.name}: ${short(line)}`); continue; }
      const idKey = r.attributes?.['jsonrpc.request.id'];
      if (idKey === undefined) continue;
      const key = `${k.name}:${idKey}`;
      let info = traceInfo.get(key);
      if (!info) traceInfo.set(key, info = { end: null, attempts: [] });
      if (r.event === 'tool.call.end') {
        if (info.end) violation('trace_two_ends', `${key}`);
        info.end = r.attributes.outcome;
        info.reason = r.attributes['keel.reason'];
      } else if (r.event === 'tool.attempt.start') {
        info.attempts.push(null);
      } else if (r.event === 'tool.attempt.end') {
        info.attempts[info.attempts.length - 1] = r.attributes['error.type'] ?? r.attributes.outcome;
      }
    }
    return n;
  }
  const traceLines = {};
  for (const k of keels) traceLines[k.name] = await readTrace(k);
  return { traceInfo, traceLines };
}

function checkCancels(keels, traceInfo) {
  const cancelStats = { sent: 0, won: 0, lostAnswered: 0, notTraced: 0 };
  for (const k of keels) {
    for (const rec of k.recs.values()) {
      if (rec.answers > 1) continue;  // reported as it happened
      const info = rec.method === 'tools/call' && !rec.task ? traceInfo.get(`${k.name}:${rec.key}`) : null;
      if (rec.cancelAt !== null) {
        cancelStats.sent++;
        if (info?.end === 'cancelled') {
          cancelStats.won++;
          if (rec.answers !== 0) violation('answered_after_cancel_won', `${k.name}: id ${rec.key} (${rec.kind}) ended cancelled but was answered`);
        } else if (info?.end) {
          cancelStats.lostAnswered++;
          if (rec.answers !== 1) violation('cancel_lost_but_no_answer', `${k.name}: id ${rec.key} (${rec.kind}) ended ${info.end}, answered ${rec.answers} times`);
        } else {
          cancelStats.notTraced++;  // tasks/result, or a call that ended before its trace started
        }
      } else if (rec.answers !== 1) {
        violation('not_exactly_one_answer', `${k.name}: id ${rec.key} (${rec.kind}) answered ${rec.answers} times`);
      }
      if (info?.end === 'cancelled' && rec.cancelAt === null) {
        violation('cancelled_without_cancel', `${k.name}: id ${rec.key} ended cancelled but no cancel was sent`);
      }
    }
  }
  return cancelStats;
}

function checkRetries(flakyChecks, traceInfo) {
  for (const f of flakyChecks) {
    const info = traceInfo.get(`${f.rec.conn.name}:${f.rec.key}`);
    if (!info) continue;
    if (f.unsafe) {
      for (let i = 0; i + 1 < info.attempts.length; i++) {
        if (AMBIGUOUS.includes(f.fail[i])) violation('retried_unsafe', `${f.tool} ${short(f.fail)}: attempt ${i + 2} after ${f.fail[i]}`);
      }
    }
    if (info.attempts.length > 3) violation('retried_past_max_attempts', `${f.tool} ${short(f.fail)}: ${info.attempts.length} attempts`);
  }
}

// A try whose cancel lost the race is classified by its late answer; a keyed try that timed
// out or was cancelled and whose call never started an attempt surely did not run (keel's
// trace says so; the ledger must agree).
function reclassify(work, traceInfo) {
  const { intents, classifyKeyed, unkeyed, classifyUnkeyed } = work.writes;
  const { restartIntents, classifyRestart } = work.restarts;
  for (const intent of intents) {
    for (const t of intent.tries) {
      if (t.outcome === 'cancelled' && t.rec.answers === 1) {
        t.outcome = classifyKeyed(intent, t, t.rec.msg, { probe: t.probe });  // the cancel lost the race
        t.lateAnswer = true;
      }
      if (!t.task && (t.outcome === 'timeout' || t.outcome === 'cancelled')) {
        const info = traceInfo.get(`${t.conn}:${t.rec.key}`);
        if (info?.end && info.attempts.length === 0) t.outcome = 'not_started';
      }
    }
  }
  for (const ri of restartIntents) {
    for (const t of ri.tries) {
      if (t.outcome === 'cancelled' && t.rec.answers === 1) t.outcome = classifyRestart(ri, t, t.rec.msg);
    }
  }
  for (const u of unkeyed) {
    if (u.outcome === 'cancelled' && u.rec.answers === 1) u.outcome = classifyUnkeyed(u, u.rec.msg);
  }
}

export async function checkTrace(w, work) {
  const { traceInfo, traceLines } = await readTraces(w.keels);
  const cancelStats = checkCancels(w.keels, traceInfo);
  checkRetries(work.reads.flakyChecks, traceInfo);
  reclassify(work, traceInfo);
  return { traceLines, cancelStats };
}
