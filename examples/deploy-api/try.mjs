// The session behind examples/deploy-api/try (run that; it checks the prerequisites first).
// keel runs bin/deploy-api for each call of this example's catalog; the official MCP
// TypeScript SDK client plays the host. Each step prints what the agent sees, then "ok" or
// "FAIL" for the guarantee it shows. Exits 1 if any guarantee does not hold.
//
// Fault knobs of the deployment API (bin/deploy-api) on for this session:
//   DEPLOY_API_FAIL_ONCE=503     the first call answers 503 (exit 75): keel retries it itself
//   DEPLOY_API_SLOW_MS=600       a restart takes 0.6 s and reports progress on fd 3
//   DEPLOY_API_LOSE_ANSWER=worker  the first restart of worker is done, then the script dies
//                                by SIGKILL before answering: keel asks `deploy-api lookup`
// Options: --keep (keep the temporary directory: keel.db, keel.log, state/), --verbose
// (print keel's log as it goes).
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = dirname(fileURLToPath(import.meta.url));
const keel = resolve(process.env.KEEL_BINARY ?? join(here, '..', '..', 'build', 'keel'));
const catalog = join(here, 'catalog.json');
const keep = process.argv.includes('--keep');
const verbose = process.argv.includes('--verbose');

const dir = mkdtempSync(join(tmpdir(), 'keel-deploy-api-'));
const state = join(dir, 'state');
let failures = 0;

const step = (title) => console.log(`\n== ${title}`);
const say = (text) => console.log(`   ${text}`);
const check = (ok, what) => {
  console.log(`   ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
};
const brief = (result) => {
  const s = result.structuredContent;
  if (result.isError) return `isError: ${s?.error?.type ?? '?'}: ${result.content?.[0]?.text}`;
  return JSON.stringify(s);
};

const transport = new StdioClientTransport({
  command: keel,
  args: ['--catalog', catalog, '--db', join(dir, 'keel.db'), '--log-level', 'info',
    ...(verbose ? [] : ['--log-file', join(dir, 'keel.log')])],
  env: {
    ...getDefaultEnvironment(),
    DEPLOY_API_STATE: state,
    DEPLOY_API_FAIL_ONCE: '503',
    DEPLOY_API_SLOW_MS: '600',
    DEPLOY_API_LOSE_ANSWER: 'worker',
  },
  stderr: verbose ? 'inherit' : 'pipe',
});
let keelStderr = '';
transport.stderr?.on('data', (d) => { keelStderr = (keelStderr + d).slice(-8000); });
const client = new Client({ name: 'deploy-api-try', version: '1.0.0' });

async function session() {
  console.log(`keel:    ${keel}\ncatalog: ${catalog}\nstate:   ${state}`);
  await client.connect(transport);

  step('tools/list: the catalog, with annotations derived from each effect class');
  const { tools } = await client.listTools();
  for (const t of tools) {
    const a = t.annotations ?? {};
    say(`${t.name.padEnd(15)} readOnly=${a.readOnlyHint} idempotent=${a.idempotentHint}  ${t.title}`);
  }
  check(['get_job', 'restart_job', 'lookup_restart'].every((n) => tools.some((t) => t.name === n)),
    'get_job, restart_job and lookup_restart are served');

  step('get_job web-api (the deployment API answers 503 once)');
  const job = await client.callTool({ name: 'get_job', arguments: { job_id: 'web-api' } });
  say(brief(job));
  check(!job.isError && job.structuredContent?.restart_count === 0,
    'one answer, structured: the 503 was transient (exit 75), so keel retried the read itself');
  check(existsSync(join(state, 'faults', 'fail-once')), 'the 503 really happened (its marker is in the state directory)');

  step('restart_job web-api production, idempotencyKey "restart-web-api-1" (takes 0.6 s)');
  const restart = { name: 'restart_job', arguments: { job_id: 'web-api', environment: 'production', idempotencyKey: 'restart-web-api-1' } };
  const first = await client.callTool(restart, undefined, {
    onprogress: (p) => say(`progress ${p.progress}/${p.total}: ${p.message}`),
  });
  say(brief(first));
  const op = first.structuredContent?.operation_id;
  check(!first.isError && typeof op === 'string', `restarted: operation ${op}`);

  step('the same call again (a retry after a timeout, a second agent, a reconnect...)');
  const again = await client.callTool(restart);
  say(brief(again));
  check(again.structuredContent?.operation_id === op, 'the same operation_id: no second restart');
  check(again._meta?.['dev.keel/replayed'] === true, 'marked _meta["dev.keel/replayed"]: keel answered from its ledger without running the command');
  const web = await client.callTool({ name: 'get_job', arguments: { job_id: 'web-api' } });
  check(web.structuredContent?.restart_count === 1 && web.structuredContent?.last_restart?.operation_id === op,
    `get_job web-api: restart_count ${web.structuredContent?.restart_count}, last restart ${web.structuredContent?.last_restart?.operation_id}`);

  step('restart_job worker, idempotencyKey "restart-worker-1": the answer is lost');
  say('(bin/deploy-api restarts worker, then dies by SIGKILL before it prints the operation)');
  const lost = await client.callTool({ name: 'restart_job', arguments: { job_id: 'worker', environment: 'production', idempotencyKey: 'restart-worker-1' } });
  say(brief(lost));
  const lostOp = lost.structuredContent?.operation_id;
  check(!lost.isError && typeof lostOp === 'string', `the answer is the operation (${lostOp}), not an error`);
  check(lost._meta?.['dev.keel/reconciled'] === true,
    'marked _meta["dev.keel/reconciled"]: the outcome was ambiguous, so keel ran `deploy-api lookup` instead of restarting again');
  const worker = await client.callTool({ name: 'get_job', arguments: { job_id: 'worker' } });
  say(brief(worker));
  check(worker.structuredContent?.restart_count === 1 && worker.structuredContent?.last_restart?.operation_id === lostOp,
    'worker restarted exactly once, by that operation');
  const found = await client.callTool({ name: 'lookup_restart', arguments: { key: 'restart-worker-1' } });
  check(found.structuredContent?.happened === true && found.structuredContent?.result?.operation_id === lostOp,
    'lookup_restart "restart-worker-1" agrees: happened, same operation');
  const retried = await client.callTool({ name: 'restart_job', arguments: { job_id: 'worker', environment: 'production', idempotencyKey: 'restart-worker-1' } });
  check(retried.structuredContent?.operation_id === lostOp && retried._meta?.['dev.keel/replayed'] === true,
    'the agent retries with the same key: replayed, still one restart');

  step('restart_job billing-sync in production (it runs in staging)');
  // The tool has an outputSchema, so keel sends the error's details in
  // _meta["dev.keel/error"] rather than in a structuredContent the schema would reject.
  const wrong = await client.callTool({ name: 'restart_job', arguments: { job_id: 'billing-sync', environment: 'production', idempotencyKey: 'restart-billing-1' } });
  say(brief(wrong));
  const error = wrong.structuredContent?.error ?? wrong._meta?.['dev.keel/error'];
  check(wrong.isError === true && error?.type === 'backend_409', 'refused with the API\'s 409, as a tool error the agent can read');
  const ops = readdirSync(join(state, 'ops')).filter((f) => f.endsWith('.json'));
  check(ops.length === 2, `the deployment API holds ${ops.length} restart operations: web-api once, worker once`);
}

try {
  await session();
} catch (err) {
  failures++;
  console.log(`\nFAIL ${err?.stack ?? err}`);
  if (!verbose && keelStderr.trim()) console.log(`--- keel stderr (tail) ---\n${keelStderr}`);
} finally {
  await client.close().catch(() => {});
  if (keep) console.log(`\nkept ${dir} (keel.db, keel.log, state/)`);
  else rmSync(dir, { recursive: true, force: true });
}
console.log(failures === 0 ? '\ntry: every guarantee held' : `\ntry: ${failures} check(s) FAILED`);
process.exit(failures === 0 ? 0 : 1);
