// Interop: keel's resources, resource templates, prompts and completion (docs/catalog.md)
// driven by the official MCP TypeScript SDK clients: v2 (@modelcontextprotocol/client)
// pinned to 2026-07-28 and on its legacy default (2025-11-25), and v1
// (@modelcontextprotocol/sdk), over stdio; the examples/runbooks catalog end to end over
// stdio and over Streamable HTTP; a change to a watched file reaching a subscribed client as
// notifications/resources/updated (resources/subscribe on 2025-11-25, subscriptions/listen
// on 2026-07-28).
// Run: node --test tests/interop/resources_prompts.test.mjs
// The catalogs are conformance/fixtures/surface_catalog.json (a mount of
// conformance/fixtures/surface_docs, a command-backed and a literal template, a prompt with
// an embedded mount file and an image, a static and a command completion) and
// examples/runbooks/catalog.json; the file-change tests write their own catalog and files
// in a temporary directory. keel runs in a temporary directory: catalog paths are absolute.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { MODERN, sdk2KeelTest, startSdk2Keel, stopSdk2Keel } from './sdk2_keel.mjs';
import { sdkKeelTest, startSdkKeel } from './sdk_keel.mjs';
import { httpKeelTest, legacyClient, modernClient } from './http_keel.mjs';
import { freshDir, withTimeout } from './raw_keel.mjs';

const SURFACE = fileURLToPath(new URL('../../conformance/fixtures/surface_catalog.json', import.meta.url));
const RUNBOOKS = fileURLToPath(new URL('../../examples/runbooks/catalog.json', import.meta.url));
const PIN = { pin: MODERN };
const opts = { timeout: 10000 };
const LOGO = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC';
const HELLO = '# Hello\nThe hello note.\n';
const RESOURCE_NOT_FOUND_LEGACY = -32002;  // 2025-11-25
const INVALID_PARAMS = -32602;             // 2026-07-28's "resource not found", and bad prompt arguments

// Rejects with a JSON-RPC error of `code` (the v2 client's ProtocolError, the v1 client's
// McpError: both carry .code and .data).
async function rejectsWithCode(promise, code, what) {
  await assert.rejects(promise, (err) => {
    assert.equal(err?.code, code, `${what}: ${err?.stack ?? err}`);
    return true;
  }, what);
}

// The whole surface of surface_catalog.json through one connected client; `notFound` is the
// era's code for a resource nobody serves.
async function exerciseSurfaceCatalog(client, notFound) {
  const { resources } = await client.listResources(undefined, opts);
  const uris = resources.map((r) => r.uri).sort();
  assert.deepEqual(uris, ['docs:///inside.md', 'docs:///logo.png', 'docs:///notes/hello.md', 'note://motd'],
    `hidden files and links out of the mount are not listed: ${JSON.stringify(resources)}`);
  assert.equal(resources.find((r) => r.uri === 'docs:///notes/hello.md').mimeType, 'text/markdown');

  const { resourceTemplates } = await client.listResourceTemplates(undefined, opts);
  assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), ['status://{service}', 'ticket://{project}/{id}']);

  const text = await client.readResource({ uri: 'docs:///notes/hello.md' }, opts);
  assert.deepEqual(text.contents, [{ uri: 'docs:///notes/hello.md', mimeType: 'text/markdown', text: HELLO }]);
  const blob = await client.readResource({ uri: 'docs:///logo.png' }, opts);
  assert.deepEqual(blob.contents, [{ uri: 'docs:///logo.png', mimeType: 'image/png', blob: LOGO }]);
  const literal = await client.readResource({ uri: 'note://motd' }, opts);
  assert.equal(literal.contents[0].text, 'Deploys are frozen until Monday.');
  const command = await client.readResource({ uri: 'status://web-api' }, opts);
  assert.equal(command.contents[0].text, 'status of web-api');
  assert.equal(command.contents[0].uri, 'status://web-api');
  const ticket = await client.readResource({ uri: 'ticket://keel/42' }, opts);
  assert.equal(ticket.contents[0].text, 'Ticket 42 of keel');

  await rejectsWithCode(client.readResource({ uri: 'docs:///missing.md' }, opts), notFound, 'a missing file');
  await rejectsWithCode(client.readResource({ uri: 'docs:///../surface_secret.txt' }, opts), notFound, '.. out of the mount');
  await rejectsWithCode(client.readResource({ uri: 'docs:///escape.txt' }, opts), notFound, 'a symlink out of the mount');
  await rejectsWithCode(client.readResource({ uri: 'nowhere://x' }, opts), notFound, 'a URI nobody serves');

  const { prompts } = await client.listPrompts(undefined, opts);
  assert.equal(prompts.length, 1);
  assert.equal(prompts[0].name, 'incident');
  assert.deepEqual(prompts[0].arguments.map((a) => [a.name, a.required ?? false]), [['service', true], ['severity', false]]);

  const prompt = await client.getPrompt({ name: 'incident', arguments: { service: 'web-api', severity: 'sev2' } }, opts);
  assert.equal(prompt.messages.length, 3);
  assert.deepEqual(prompt.messages[0], { role: 'user', content: { type: 'text', text: 'Incident on web-api (severity: sev2).' } });
  assert.equal(prompt.messages[1].content.type, 'resource');
  assert.deepEqual(prompt.messages[1].content.resource, { uri: 'docs:///notes/hello.md', mimeType: 'text/markdown', text: HELLO });
  assert.deepEqual(prompt.messages[2], { role: 'assistant', content: { type: 'image', data: LOGO, mimeType: 'image/png' } });
  await rejectsWithCode(client.getPrompt({ name: 'incident', arguments: { severity: 'sev1' } }, opts), INVALID_PARAMS, 'a missing required argument');
  await rejectsWithCode(client.getPrompt({ name: 'nope', arguments: {} }, opts), INVALID_PARAMS, 'an unknown prompt');

  const fromList = await client.complete({ ref: { type: 'ref/prompt', name: 'incident' }, argument: { name: 'service', value: 'w' } }, opts);
  assert.deepEqual(fromList.completion.values, ['web-api', 'worker']);
  const fromCommand = await client.complete({ ref: { type: 'ref/resource', uri: 'status://{service}' }, argument: { name: 'service', value: 'al' } }, opts);
  assert.deepEqual(fromCommand.completion.values, ['alpha', 'alpine']);
  await rejectsWithCode(client.complete({ ref: { type: 'ref/prompt', name: 'incident' }, argument: { name: 'colour', value: '' } }, opts),
    INVALID_PARAMS, 'completing an argument the prompt does not have');
}

sdk2KeelTest('v2 client pinned to 2026-07-28 over stdio: the catalog\'s resources, templates (command and literal), prompts and completions; not found is -32602 (SRV-1, SRV-2, SRV-3, ERA-1)',
  { mode: PIN, args: ['--catalog', SURFACE] }, async (k) => {
    assert.equal(k.client.getNegotiatedProtocolVersion(), MODERN);
    const caps = k.client.getServerCapabilities();
    assert.ok(caps.resources && caps.prompts && caps.completions, `capabilities: ${JSON.stringify(caps)}`);
    await exerciseSurfaceCatalog(k.client, INVALID_PARAMS);
    const read = k.seen.find((m) => m.result?.contents?.[0]?.uri === 'docs:///notes/hello.md');
    assert.equal(read.result.resultType, 'complete');
    assert.equal(typeof read.result.ttlMs, 'number');
    assert.equal(typeof read.result.cacheScope, 'string');
    const notFound = k.seen.find((m) => m.error?.data?.uri === 'nowhere://x');
    assert.equal(notFound?.error.code, INVALID_PARAMS, JSON.stringify(notFound));
  });

sdk2KeelTest('v2 client on its legacy default (2025-11-25) over stdio: the same surface; not found is -32002 with data.uri on the wire (the client reports it as -32602); subscribe and unsubscribe answer {} (SRV-1, SRV-2, SRV-3)',
  { args: ['--catalog', SURFACE] }, async (k) => {
    assert.notEqual(k.client.getNegotiatedProtocolVersion(), MODERN);
    const caps = k.client.getServerCapabilities();
    assert.equal(caps.resources?.subscribe, true, JSON.stringify(caps));
    assert.ok(caps.prompts && caps.completions, JSON.stringify(caps));
    // The v2 client reports a legacy -32002 as -32602 (its one "resource not found"); the
    // wire shows what keel sent.
    await exerciseSurfaceCatalog(k.client, INVALID_PARAMS);
    const notFound = k.seen.find((m) => m.error?.data?.uri === 'nowhere://x');
    assert.equal(notFound?.error.code, RESOURCE_NOT_FOUND_LEGACY, JSON.stringify(notFound));
    assert.deepEqual(await k.client.subscribeResource({ uri: 'docs:///notes/hello.md' }, opts), {});
    assert.deepEqual(await k.client.unsubscribeResource({ uri: 'docs:///notes/hello.md' }, opts), {});
  });

sdkKeelTest('v1 client (2025-11-25) over stdio: the same surface, resources/subscribe and unsubscribe answer {} (SRV-1, SRV-2, SRV-3)',
  { args: ['--catalog', SURFACE] }, async (k) => {
    const caps = k.client.getServerCapabilities();
    assert.ok(caps.resources && caps.prompts && caps.completions, JSON.stringify(caps));
    await exerciseSurfaceCatalog(k.client, RESOURCE_NOT_FOUND_LEGACY);
    assert.deepEqual(await k.client.subscribeResource({ uri: 'note://motd' }, opts), {});
    assert.deepEqual(await k.client.unsubscribeResource({ uri: 'note://motd' }, opts), {});
  });

sdk2KeelTest('v2 client pinned to 2026-07-28, --conformance-fixtures: literal text and blob resources, the template, prompts with arguments, an embedded resource and an image, a static completion (SRV-1, SRV-2, SRV-3)',
  { mode: PIN, args: ['--conformance-fixtures'] }, async (k) => {
    const { client } = k;
    const { resources } = await client.listResources(undefined, opts);
    assert.ok(resources.some((r) => r.uri === 'test://static-text'), JSON.stringify(resources));
    const text = await client.readResource({ uri: 'test://static-text' }, opts);
    assert.equal(text.contents[0].text, 'This is the content of the static text resource.');
    const blob = await client.readResource({ uri: 'test://static-binary' }, opts);
    assert.equal(blob.contents[0].blob, LOGO);
    const templated = await client.readResource({ uri: 'test://template/7/data' }, opts);
    assert.deepEqual(JSON.parse(templated.contents[0].text), { id: '7', templateTest: true, data: 'Data for ID: 7' });
    const withArgs = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } }, opts);
    assert.equal(withArgs.messages[0].content.text, "Prompt with arguments: arg1='a', arg2='b'");
    const embedded = await client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://x' } }, opts);
    assert.equal(embedded.messages[0].content.resource.uri, 'test://x');
    const image = await client.getPrompt({ name: 'test_prompt_with_image' }, opts);
    assert.equal(image.messages[0].content.type, 'image');
    const completed = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' } }, opts);
    assert.deepEqual(completed.completion.values, ['test', 'testValue1', 'testing']);
    await rejectsWithCode(client.readResource({ uri: 'test://nope' }, opts), INVALID_PARAMS, 'not found');
  });

// examples/runbooks: a mount of runbooks/, deploy://{service}/status run by bin/service-status,
// the incident_report prompt embedding two runbooks.
async function exerciseRunbooks(client) {
  const { resources } = await client.listResources(undefined, opts);
  assert.deepEqual(resources.map((r) => r.uri).sort(),
    ['runbook:///restart-deployment.md', 'runbook:///rollback-release.md', 'runbook:///rotate-credential.md']);
  const runbook = await client.readResource({ uri: 'runbook:///restart-deployment.md' }, opts);
  assert.equal(runbook.contents[0].mimeType, 'text/markdown');
  assert.match(runbook.contents[0].text, /restart/i);
  const status = await client.readResource({ uri: 'deploy://worker/status' }, opts);
  assert.equal(status.contents[0].mimeType, 'application/json');
  const parsed = JSON.parse(status.contents[0].text);
  assert.equal(parsed.service, 'worker');
  assert.equal(parsed.state, 'degraded');
  const prompt = await client.getPrompt({ name: 'incident_report', arguments: { service: 'web-api', severity: 'sev2' } }, opts);
  assert.match(prompt.messages[0].content.text, /incident on web-api \(severity: sev2\)/);
  assert.deepEqual(prompt.messages.slice(1).map((m) => m.content.resource?.uri),
    ['runbook:///restart-deployment.md', 'runbook:///rollback-release.md']);
  const completed = await client.complete({ ref: { type: 'ref/resource', uri: 'deploy://{service}/status' }, argument: { name: 'service', value: 'b' } }, opts);
  assert.deepEqual(completed.completion.values, ['billing-sync']);
}

sdk2KeelTest('examples/runbooks over stdio, v2 client pinned to 2026-07-28: a runbook read through the mount, the command-backed status template, the incident_report prompt, completion (SRV-1, SRV-2, SRV-3)',
  { mode: PIN, args: ['--catalog', RUNBOOKS] }, async (k) => {
    await exerciseRunbooks(k.client);
  });

sdkKeelTest('examples/runbooks over stdio, v1 client: the same (SRV-1, SRV-2, SRV-3)',
  { args: ['--catalog', RUNBOOKS] }, async (k) => {
    await exerciseRunbooks(k.client);
  });

httpKeelTest('examples/runbooks over Streamable HTTP, v2 client pinned to 2026-07-28 and v1 client on 2025-11-25 (SRV-1, SRV-2, SRV-3)',
  { args: ['--catalog', RUNBOOKS] }, async (k) => {
    const modern = await modernClient(k);
    await exerciseRunbooks(modern.client);
    await rejectsWithCode(modern.client.readResource({ uri: 'runbook:///../catalog.json' }, opts), INVALID_PARAMS, 'modern: .. out of the mount');
    const legacy = await legacyClient(k);
    await exerciseRunbooks(legacy.client);
    await rejectsWithCode(legacy.client.readResource({ uri: 'runbook:///../catalog.json' }, opts), RESOURCE_NOT_FOUND_LEGACY, 'legacy: .. out of the mount');
  });

// A catalog in `dir` mounting dir/watched (with one file, note.md) at watch:///.
function watchedCatalog(dir) {
  mkdirSync(join(dir, 'watched'));
  writeFileSync(join(dir, 'watched', 'note.md'), 'first\n');
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ resources: [{ name: 'watched', directory: 'watched', uriPrefix: 'watch:///' }] }));
  return catalog;
}

// Resolves with the first notification `register` delivers whose uri is `uri`.
function firstUpdate(register, uri) {
  return new Promise((resolve) => register((n) => { if (n.params?.uri === uri) resolve(n); }));
}

// The watch is in place before keel answers initialize (SurfaceWatch follows the surface
// before the loop reads stdin), so a write after the subscribe answer is always seen.

test('v1 client, 2025-11-25: resources/subscribe to a mounted file, then the file changes: notifications/resources/updated with its uri arrives, and a read sees the new content (SRV-1)', { timeout: 20000 }, async (t) => {
  const dir = freshDir(t, 'keel-watch-');
  const catalog = watchedCatalog(dir);
  const k = await startSdkKeel({ args: ['--catalog', catalog] });
  t.after(async () => {
    try { await k.client.close(); } catch {}
    if (k.child && k.exit === null && k.child.exitCode === null) k.child.kill('SIGKILL');
  });
  try {
    const updated = firstUpdate((h) => k.client.setNotificationHandler(ResourceUpdatedNotificationSchema, h), 'watch:///note.md');
    assert.deepEqual(await k.client.subscribeResource({ uri: 'watch:///note.md' }, opts), {});
    writeFileSync(join(dir, 'watched', 'note.md'), 'second\n');
    const n = await withTimeout(updated, 'notifications/resources/updated', 10000);
    assert.equal(n.params.uri, 'watch:///note.md');
    const read = await k.client.readResource({ uri: 'watch:///note.md' }, opts);
    assert.equal(read.contents[0].text, 'second\n');
  } catch (err) {
    if (k.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr}`;
    throw err;
  }
});

test('v2 client pinned to 2026-07-28: subscriptions/listen with resourceSubscriptions, then the file changes: notifications/resources/updated tagged with the listen id (SUB-1, SRV-1)', { timeout: 20000 }, async (t) => {
  const dir = freshDir(t, 'keel-watch2-');
  const catalog = watchedCatalog(dir);
  const k = await startSdk2Keel({ mode: PIN, args: ['--catalog', catalog] });
  t.after(() => stopSdk2Keel(k));
  try {
    const updated = firstUpdate((h) => k.client.setNotificationHandler('notifications/resources/updated', h), 'watch:///note.md');
    const listen = await k.client.listen({ resourceSubscriptions: ['watch:///note.md'], resourcesListChanged: true }, opts);
    const ack = k.seen.find((m) => m.method === 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack?.params?.notifications, { resourcesListChanged: true, resourceSubscriptions: ['watch:///note.md'] }, JSON.stringify(ack));
    writeFileSync(join(dir, 'watched', 'note.md'), 'second\n');
    const n = await withTimeout(updated, 'notifications/resources/updated', 10000);
    assert.equal(n.params.uri, 'watch:///note.md');
    const raw = k.seen.find((m) => m.method === 'notifications/resources/updated');
    assert.equal(raw.params._meta?.['io.modelcontextprotocol/subscriptionId'], ack.params._meta['io.modelcontextprotocol/subscriptionId']);
    await listen.close?.();
  } catch (err) {
    if (k.stderr.trim() && err instanceof Error) err.message += `\n--- keel stderr (tail) ---\n${k.stderr}`;
    throw err;
  }
});
