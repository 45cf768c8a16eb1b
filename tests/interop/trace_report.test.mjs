// `keel trace report` (ADO-4) in a real browser: the real binary serves a scripted session
// with a success, a retried call, an idle timeout, a client's cancel and a breaker that opens
// (--test-tools and the simulated deployment backend's --fault), writing --trace-file; then
// `keel trace report` turns the trace into one HTML page, and headless Chromium opens it with
// every request but the file itself aborted. The test fails on any console error, page error
// or attempted request, and checks the page's elements and counts against the session.
// A screenshot goes to /tmp/keel-trace-report.png (look at it when you change the page).
// Needs Debian's chromium (scripts/setup installs it; $KEEL_CHROMIUM overrides the path) and
// playwright-core from npm (it drives that chromium; it downloads no browser).
// Run: node --test tests/interop/trace_report.test.mjs   (scripts/test runs it too)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { KEEL, freshDir, startRawKeel } from './raw_keel.mjs';

const CHROMIUM = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOT = '/tmp/keel-trace-report.png';

async function loadChromium() {
  assert.ok(existsSync(CHROMIUM),
    `chromium not found at ${CHROMIUM}: run scripts/setup (it installs Debian's chromium; CI does too)`);
  try {
    return (await import('playwright-core')).chromium;
  } catch (e) {
    assert.fail(`playwright-core is not installed (${e.message}): run scripts/setup`);
  }
}

// The scripted session; returns the trace file and what the client saw.
async function recordSession(t, dir) {
  const trace = join(dir, 'trace.jsonl');
  // A breaker that opens after 4 failed calls and stays open; a sleep that times out idle.
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({
    version: 'report-1',
    defaults: { breaker: { minimum_calls: 4, open_ms: 60000 } },
    tools: { sleep: { retry: { max_attempts: 1 }, timeouts: { idle_ms: 300 } } },
  }));
  const k = startRawKeel(t, {
    binary: KEEL,
    clientName: 'trace-report',
    args: ['--test-tools', '--workers', '4', '--db', join(dir, 'keel.db'), '--trace-file', trace,
      '--policy', policy,
      '--fault', 'get_deployment_job:sustained_503=90000'],
  });
  await k.initialize();
  const call = (name, args) => k.request('tools/call', { name, arguments: args });
  const seen = {};
  seen.ok = await call('echo', { text: 'hello' });
  seen.retried = await call('flaky_read', { counter: 'report-1', fail: ['backend_503'] });
  seen.timeout = await call('sleep', { ms: 10000 });
  // A cancel: the call waits on a latch that only opens after the client withdrew it.
  const cancelId = k.nextId;
  k.nextId = cancelId + 1;
  // Sent without waiting: a cancelled request is never answered.
  k.send({ id: cancelId, method: 'tools/call', params: { name: 'latch_wait', arguments: { name: 'report-never' } } });
  await new Promise((r) => setTimeout(r, 100));  // let a worker pick it up (not an assertion)
  k.notify('notifications/cancelled', { requestId: cancelId, reason: 'the user pressed stop' });
  await call('latch_release', { name: 'report-never' });
  // The breaker: the backend refuses everything; after minimum_calls failures it opens.
  seen.outage = [];
  for (let i = 0; i < 6; i++) seen.outage.push(await call('get_deployment_job', { job_id: 'web-api' }));
  await k.close();
  const records = readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  return { trace, records, seen, cancelId };
}

test('ADO-4: keel trace report renders a known session as a self-contained page Chromium shows without errors', { timeout: 90000 }, async (t) => {
  const chromium = await loadChromium();
  const dir = freshDir(t, 'keel-report-');
  const { trace, records, seen, cancelId } = await recordSession(t, dir);
  assert.equal(seen.ok.result.isError, undefined, JSON.stringify(seen.ok));
  assert.equal(seen.retried.result.structuredContent.attempt, 2);
  assert.equal(seen.timeout.result?.structuredContent?.error?.layer, 'idle', JSON.stringify(seen.timeout));
  assert.ok(records.some((r) => r.event === 'cancel.received'), 'the cancel is in the trace');
  const opened = records.filter((r) => r.event === 'breaker.state' && r.attributes['keel.circuit.state'] === 'open');
  assert.ok(opened.length >= 1, 'the breaker opened');
  const backend = opened[0].attributes['keel.backend'];
  const calls = records.filter((r) => r.event === 'tool.call.end');

  const out = join(dir, 'report.html');
  const run = spawnSync(KEEL, ['trace', 'report', trace, '-o', out], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^wrote .*report\.html \(\d+ calls?\); open it in a browser/);
  const html = readFileSync(out, 'utf8');
  assert.doesNotMatch(html, /<script|<link|@import|url\(|src="http|href="http/i, 'nothing that could fetch');

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const fileUrl = pathToFileURL(out).href;
  const requested = [];
  const problems = [];
  page.on('request', (r) => requested.push(r.url()));
  await context.route('**/*', (route) => (route.request().url() === fileUrl ? route.continue() : route.abort()));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(fileUrl, { waitUntil: 'load' });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });

  assert.ok(requested.includes(fileUrl), `the request listener saw the page itself: ${requested}`);
  assert.deepEqual(requested.filter((u) => u !== fileUrl), [], 'no request but the file itself');
  assert.deepEqual(problems, []);
  const count = (selector) => page.locator(selector).count();
  const text = (selector) => page.locator(selector).first().textContent();

  // The header counts every call by outcome.
  assert.match(await text('#summary .count[data-kind="calls"]'), new RegExp(`^${calls.length}calls`));
  const okCalls = calls.filter((r) => r.attributes.outcome === 'ok').length;
  assert.match(await text('#summary .count[data-outcome="ok"]'), new RegExp(`^${okCalls}`));
  assert.match(await text('#summary .count[data-outcome="timeout"]'), /^1/);
  assert.match(await text('#summary .count[data-outcome="cancelled"]'), /^1/);
  assert.match(await text('#summary .count[data-kind="timeout"][data-layer="idle"]'), /^1/);
  assert.match(await text('#summary .count[data-kind="breaker-opens"]'), new RegExp(`^${opened.length}`));

  // The timeline: one row per call, each with what happened to it.
  assert.equal(await count('#timeline .call'), calls.length);
  assert.equal(await count('#timeline .call[data-tool="echo"][data-outcome="ok"] rect.attempt'), 1);
  const retried = '#timeline .call[data-tool="flaky_read"]';
  assert.equal(await count(`${retried} rect.attempt`), 2);
  assert.equal(await count(`${retried} rect.attempt[data-outcome="error"][data-error="backend_503"]`), 1);
  assert.equal(await count(`${retried} .backoff`), 1);
  assert.equal(await count('#timeline .call[data-tool="sleep"][data-outcome="timeout"] .timeout[data-layer="idle"]'), 1);
  assert.equal(await count(`#timeline .call[data-tool="latch_wait"][data-outcome="cancelled"][data-request-id="${cancelId}"] .cancel`), 1);
  assert.ok(await count('#timeline .call[data-tool="get_deployment_job"] .breaker-reject') >= 1, 'rejections while open');
  const bar = await page.locator(`${retried} rect.attempt`).first().boundingBox();
  assert.ok(bar && bar.width >= 2 && bar.height >= 10, `an attempt bar is drawn: ${JSON.stringify(bar)}`);

  // Breaker bands: the backend was closed, then open.
  const band = `#breakers .breaker[data-backend="${backend}"] rect.band`;
  assert.equal(await page.locator(band).first().getAttribute('data-state'), 'closed');
  assert.ok(await count(`${band}[data-state="open"]`) >= 1);

  // Latency per tool, and retries per intent.
  assert.equal(await page.locator('#latency .tool-latency[data-tool="echo"]').getAttribute('data-calls'), '1');
  assert.ok(await count('#latency .tool-latency[data-tool="get_deployment_job"] rect.bucket') >= 1);
  const intent = page.locator('#retries tr.intent[data-tool="flaky_read"]');
  assert.equal(await intent.getAttribute('data-retries'), '1');
  assert.equal(await intent.getAttribute('data-calls'), '1');
});

test('ADO-4: keel trace report exits 66 on a missing trace and writes to stdout with -o -', async (t) => {
  const dir = freshDir(t, 'keel-report-');
  const missing = spawnSync(KEEL, ['trace', 'report', join(dir, 'nope.jsonl')], { encoding: 'utf8' });
  assert.equal(missing.status, 66);
  assert.match(missing.stderr, /cannot read the trace file .*nope\.jsonl/);
  assert.equal(missing.stdout, '');
  const onDirectory = spawnSync(KEEL, ['trace', 'report', dir], { encoding: 'utf8' });
  assert.equal(onDirectory.status, 66);
  const trace = join(dir, 'trace.jsonl');
  writeFileSync(trace, 'not a record\n');
  const stdout = spawnSync(KEEL, ['trace', 'report', trace, '-o', '-'], { encoding: 'utf8' });
  assert.equal(stdout.status, 0, stdout.stderr);
  assert.match(stdout.stdout, /^<!DOCTYPE html>/);
  assert.match(stdout.stdout, /data-skipped="1"/);
  const byDefault = spawnSync(KEEL, ['trace', 'report', trace], { encoding: 'utf8' });
  assert.equal(byDefault.status, 0, byDefault.stderr);
  assert.ok(existsSync(`${trace}.html`), 'the default output is FILE.html');
});
