// One keel process spoken to over its stdin/stdout (tests/support/keel_process.mjs frames
// the lines), with every line keel writes checked as it arrives: a JSON-RPC 2.0 object, a
// response to an id sent to this process and answered once, progress for a known token,
// increasing and never after its answer, a task's terminal status never changing. Each
// request keeps a record (rec) to the end, for the checks against the trace and the ledger.
// Request ids are unique across every Keel of the run (ids.next), so the trace of either
// process names one request.
//
// Also: answer(rec, ms) (the response, or null after ms), call() (tools/call with _meta,
// progress token and task), errorType/textOf/expectTimeout (what an answer says).
import { readFileSync } from 'node:fs';

import { spawnLines } from '../../tests/support/keel_process.mjs';
import { now } from './clock.mjs';
import { short, violation } from './findings.mjs';

export const RELATED = 'io.modelcontextprotocol/related-task';
export const REPLAYED = 'dev.keel/replayed';
export const KEY_META = 'dev.keel/idempotency-key';
export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
export const TASK_STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);
export const ids = { next: 1 };  // ids are unique across both processes, so the trace of either names one request

export class Keel {
  constructor(name, bin, args, files) {
    this.name = name;
    this.bin = bin;
    this.args = args;
    this.files = files;
    this.recs = new Map();         // JSON.stringify(id) -> request record (kept to the end)
    this.outstanding = new Set();  // records neither answered nor cancelled
    this.tokens = new Map();       // JSON.stringify(progressToken) -> {rec, last, task, count}
    this.taskTerminal = new Map(); // taskId -> the terminal status first seen
    this.idless = [];              // codes of error responses without an id
    this.expectedIdless = 0;
    this.rss = [];                 // [ms since start, VmRSS kB]
    this.counts = { lines: 0, responses: 0, progress: 0, taskStatus: 0, otherNotes: 0, cancels: 0 };
  }

  start() {
    this.proc = spawnLines(this.bin, this.args, {
      stderrLimit: 8000,
      onLine: (line) => this.onLine(line),
      onEnd: (partial) => {
        if (partial !== '') violation('malformed_line', `${this.name}: output ends inside a line: ${short(partial)}`);
      },
      onError: (e, where) => { if (where === 'spawn') violation('spawn', `${this.name}: ${e.message}`); },
    });
    this.child = this.proc.child;
    this.pid = this.proc.pid;
    this.exit = null;
    this.exited = this.proc.exited.then(({ code, signal }) => {
      this.exit = { code, signal, at: now() };
      return this.exit;
    });
    this.rssTimer = setInterval(() => this.sampleRss(), 1000);
    this.sampleRss();
  }

  get stderrTail() { return this.proc.stderr; }
  get bytesRead() { return this.proc.bytesRead; }

  cpuSeconds() {
    try {
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / 100;
    } catch { return NaN; }
  }

  sampleRss() {
    if (this.exit) return;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      if (m) this.rss.push([now(), Number(m[1])]);
    } catch { /* exited between the check and the read */ }
  }

  onLine(line) {
    this.counts.lines++;
    let msg;
    try { msg = JSON.parse(line); } catch {
      violation('malformed_line', `${this.name}: not JSON: ${short(line)}`);
      return;
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg) || msg.jsonrpc !== '2.0') {
      violation('malformed_line', `${this.name}: not a JSON-RPC 2.0 object: ${short(line)}`);
      return;
    }
    const hasId = 'id' in msg;
    if ('method' in msg) {
      if (hasId) violation('malformed_line', `${this.name}: keel sent a request: ${short(msg)}`);
      else this.onNotification(msg);
      return;
    }
    if (('result' in msg) === ('error' in msg)) {
      violation('malformed_line', `${this.name}: neither a result nor an error (or both): ${short(msg)}`);
      return;
    }
    if ('error' in msg && (!Number.isInteger(msg.error?.code) || typeof msg.error?.message !== 'string')) {
      violation('malformed_line', `${this.name}: bad error object: ${short(msg)}`);
    }
    if (!hasId) {
      if ('error' in msg) this.idless.push(msg.error.code);
      else violation('malformed_line', `${this.name}: a result without an id: ${short(msg)}`);
      return;
    }
    if (msg.id === null) violation('malformed_line', `${this.name}: "id": null: ${short(msg)}`);
    const key = JSON.stringify(msg.id);
    const rec = this.recs.get(key);
    if (!rec) {
      violation('unknown_id', `${this.name}: a response for an id never sent here (type changed?): ${short(msg)}`);
      return;
    }
    rec.answers++;
    if (rec.answers > 1) {
      violation('duplicate_response', `${this.name}: id ${key} answered ${rec.answers} times: ${short(msg)}`);
      return;
    }
    this.counts.responses++;
    rec.answeredAt = now();
    rec.msg = msg;
    this.outstanding.delete(rec);
    // A task's status is noted here, in the order the lines came, not when the scenario
    // awaiting this answer resumes: by then a notifications/tasks/status that came right
    // after it (in the same read) has been noted already, and an older status noted after a
    // newer one would look like a terminal status that changed.
    const task = msg.result;
    if ((rec.method === 'tasks/get' || rec.method === 'tasks/cancel') &&
        typeof task?.taskId === 'string' && TASK_STATUSES.has(task.status)) {
      this.noteTaskStatus(task.taskId, task.status, rec.method);
    }
    rec.resolve(msg);
  }

  onNotification(msg) {
    const p = msg.params ?? {};
    if (msg.method === 'notifications/progress') {
      this.counts.progress++;
      const tok = this.tokens.get(JSON.stringify(p.progressToken));
      if (!tok) {
        violation('progress_unknown_token', `${this.name}: ${short(msg)}`);
        return;
      }
      if (tok.rec.answers > 0 && !tok.task) {
        violation('progress_after_response', `${this.name}: token ${short(p.progressToken)} after its answer`);
      }
      if (!(typeof p.progress === 'number' && p.progress > tok.last)) {
        violation('progress_not_increasing', `${this.name}: ${tok.last} then ${short(p.progress)}`);
      }
      if (tok.task && !p._meta?.[RELATED]?.taskId) {
        violation('task_progress_without_related_task', `${this.name}: ${short(msg)}`);
      }
      tok.last = p.progress;
      tok.count++;
    } else if (msg.method === 'notifications/tasks/status') {
      this.counts.taskStatus++;
      if (typeof p.taskId !== 'string' || !TASK_STATUSES.has(p.status)) {
        violation('malformed_line', `${this.name}: bad task status: ${short(msg)}`);
        return;
      }
      this.noteTaskStatus(p.taskId, p.status, 'notifications/tasks/status');
    } else {
      this.counts.otherNotes++;
    }
  }

  // A terminal status never changes (TASK-1: cancelled reads cancelled at once and forever).
  noteTaskStatus(taskId, status, where) {
    const first = this.taskTerminal.get(taskId);
    if (first && first !== status) {
      violation('task_status_changed_after_terminal', `${this.name}: task ${taskId} was ${first}, then ${status} (${where})`);
    } else if (!first && TERMINAL.has(status)) {
      this.taskTerminal.set(taskId, status);
    }
  }

  write(obj) {
    if (this.exit) return;
    this.proc.send(obj);
  }

  writeRaw(line) {
    if (this.exit) return;
    this.proc.write(line);
  }

  // Sends a request now; returns its record (rec.promise resolves with the response).
  request(method, params, { rng, kind, limitMs = 30000, progressToken, taskProgress = false } = {}) {
    const n = ids.next++;
    // ids are numbers or decimal strings: keel must echo the exact type ("7" is not 7).
    const id = rng && rng.chance(0.3) ? String(n) : n;
    const rec = {
      id, key: JSON.stringify(id), method, tool: params?.name, task: params?.task !== undefined,
      kind, sentAt: now(), limitMs, answers: 0, cancelAt: null, msg: null, conn: this,
    };
    rec.promise = new Promise((res) => { rec.resolve = res; });
    if (progressToken !== undefined) {
      this.tokens.set(JSON.stringify(progressToken), { rec, last: -Infinity, task: taskProgress, count: 0 });
    }
    this.recs.set(rec.key, rec);
    this.outstanding.add(rec);
    this.write({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return rec;
  }

  cancel(rec, reason = 'soak') {
    this.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rec.id, reason } });
    this.counts.cancels++;
    if (rec.answers === 0 && rec.cancelAt === null) {
      rec.cancelAt = now();
      this.outstanding.delete(rec);
    }
  }

  close() {
    clearInterval(this.rssTimer);
    this.proc.end();
    return this.exited;
  }
}

// The response, or null after `ms` (the watchdog reports a missing answer as a violation).
export async function answer(rec, ms = 40000) {
  let timer;
  const r = await Promise.race([rec.promise, new Promise((res) => { timer = setTimeout(() => res(null), ms); })]);
  clearTimeout(timer);
  return r;
}

export function call(k, name, args, { rng, kind, meta, task, progressToken, limitMs } = {}) {
  const params = { name, arguments: args };
  if (meta || progressToken !== undefined) params._meta = { ...(meta ?? {}), ...(progressToken !== undefined ? { progressToken } : {}) };
  if (task) params.task = task;
  return k.request('tools/call', params, { rng, kind, progressToken, taskProgress: !!task, limitMs });
}

export const errorType = (msg) => msg?.result?.structuredContent?.error?.type;
export const textOf = (msg) => msg?.result?.content?.map((c) => c.text).join(' | ');

export function expectTimeout(kind, msg, layers) {
  const e = msg?.result?.structuredContent?.error;
  if (msg?.result?.isError && e?.type === 'timeout' && layers.includes(e.layer)) return `timeout_${e.layer}`;
  return null;
}
