// scripted_upstream.mjs: a small MCP server over stdio, scripted for keel's UpstreamLink,
// UpstreamTool and ForwardToUpstream unit tests (tests/server/upstream/). Node 20, no
// dependencies. Usage: node scripted_upstream.mjs MODES DIR
//   MODES  comma-separated, may be empty:
//          modern                    answers server/discover with 2026-07-28, then refuses
//                                    (-32602) any request without keel's envelope in _meta
//          die-on-discover           exits with status 5 when probed with server/discover
//          exit-on-initialize        exits with status 4 on initialize
//          later-exit-on-initialize  the same, but only instances after the first
//   DIR    instances.log (a line per start) and runs.log (a line per run of the write and
//          crash tools) are kept there, so they count across restarts.
// Tools (tools/call): echo (its arguments and _meta back), write (counts a run), crash
// (counts a run, then exits 1 without answering), ask (asks keel elicitation/create, then
// answers with what came back), progress (progress 1 and 2, then done), hang (progress 1,
// never answers), fail (-32000; with arguments {message, data}: that error, as a transport's
// own answer would carry them), received (every message this instance got), pid, tasked
// (execution.taskSupport "required", 2025-11-25 tasks: without params.task -32601; with it a
// CreateTaskResult; the first tasks/result for the task gets progress 1 under the call's
// token, then the task completes with "tasked done" 20 ms later unless arguments.hold;
// tasks/result blocks until it ends, tasks/cancel cancels it).
//   Methods besides: tasks/result, tasks/cancel (for tasked's tasks).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const modes = new Set((process.argv[2] || '').split(',').filter(Boolean));
const dir = process.argv[3];
const kModern = '2026-07-28';

function countLine(file, line) {
  fs.appendFileSync(path.join(dir, file), line + '\n');
  return fs.readFileSync(path.join(dir, file), 'utf8').trim().split('\n').length;
}
const instance = countLine('instances.log', String(process.pid));

const received = [];       // {method, id, enveloped, params} of each message of this instance
const waiting = new Map();  // id of a question asked of keel -> id of the tools/call asking

function send(message) {
  process.stdout.write(JSON.stringify({jsonrpc: '2.0', ...message}) + '\n');
}
function result(id, value) { send({id, result: value}); }
function error(id, code, message) { send({id, error: {code, message}}); }
function text(value) { return {type: 'text', text: value}; }
function enveloped(m) {
  const meta = (m.params && m.params._meta) || {};
  return meta['io.modelcontextprotocol/protocolVersion'] === kModern;
}
// A tools/call result; a modern server marks it as 2026-07-28 servers do.
function answer(id, value) {
  if (modes.has('modern')) {
    value.resultType = 'complete';
    value._meta = {'io.modelcontextprotocol/serverInfo': {name: 'scripted'}, 'example.com/kept': 1};
  }
  result(id, value);
}

const tools = ['echo', 'write', 'crash', 'ask', 'progress', 'hang', 'fail', 'received', 'pid',
               'tasked'].map((name) => ({name, inputSchema: {type: 'object'}}));
tools[0].annotations = {readOnlyHint: true};
tools[9].annotations = {readOnlyHint: true};
tools[9].execution = {taskSupport: 'required'};

// tasked's tasks by id: {status, waiting: [ids of tasks/result requests]}.
const tasks = new Map();
function endTask(taskId, status) {
  const task = tasks.get(taskId);
  if (!task || task.status !== 'working') return;
  task.status = status;
  for (const id of task.waiting) taskResult(id, taskId);
  task.waiting = [];
}
function taskResult(id, taskId) {
  const task = tasks.get(taskId);
  if (!task) return error(id, -32602, `no task ${taskId}`);
  if (task.status === 'working') {
    task.waiting.push(id);
    if (task.started) return;
    task.started = true;
    if (task.token !== undefined) {
      send({method: 'notifications/progress', params: {progressToken: task.token, progress: 1}});
    }
    if (!task.hold) setTimeout(() => endTask(taskId, 'completed'), 20);
    return;
  }
  if (task.status !== 'completed') return error(id, -32603, `Task ${taskId} has no result stored`);
  return result(id, {content: [text('tasked done')],
                     _meta: {'io.modelcontextprotocol/related-task': {taskId}}});
}
function startTask(m, token) {
  if (!m.params.task) return error(m.id, -32601, 'Tool tasked requires task augmentation');
  const taskId = `task-${m.id}`;
  tasks.set(taskId, {status: 'working', waiting: [], token, started: false,
                     hold: Boolean((m.params.arguments || {}).hold)});
  const now = new Date().toISOString();
  result(m.id, {task: {taskId, status: 'working', ttl: m.params.task.ttl ?? null, createdAt: now,
                       lastUpdatedAt: now, pollInterval: 100}});
}

function call(m) {
  const name = m.params.name;
  const meta = m.params._meta || {};
  const token = meta.progressToken;
  switch (name) {
    case 'echo':
      return answer(m.id, {content: [text('echo')],
                           structuredContent: {arguments: m.params.arguments, meta}});
    case 'write': {
      const run = countLine('runs.log', 'write');
      return answer(m.id, {content: [text(`wrote (run ${run})`)], structuredContent: {run}});
    }
    case 'crash':
      countLine('runs.log', 'crash');
      return process.exit(1);
    case 'ask': {
      const askId = `ask-${m.id}`;
      waiting.set(askId, m.id);
      return send({id: askId, method: 'elicitation/create',
                   params: {message: 'Your name?', requestedSchema: {type: 'object'}}});
    }
    case 'progress':
      for (const progress of [1, 2]) {
        send({method: 'notifications/progress', params: {progressToken: token, progress, total: 2}});
      }
      return answer(m.id, {content: [text('done')]});
    case 'hang':
      return send({method: 'notifications/progress', params: {progressToken: token, progress: 1}});
    case 'tasked':
      return startTask(m, token);
    case 'fail': {
      const args = m.params.arguments || {};
      if (args.message) return send({id: m.id, error: {code: -32000, message: args.message, data: args.data}});
      return error(m.id, -32000, 'the backend is down');
    }
    case 'received':
      return answer(m.id, {content: [text('received')], structuredContent: {received}});
    case 'pid':
      return answer(m.id, {content: [text(String(process.pid))],
                           structuredContent: {pid: process.pid, instance}});
    default:
      return error(m.id, -32602, `Unknown tool: ${name}`);
  }
}

function onRequest(m) {
  if (modes.has('modern') && m.method !== 'server/discover' && !enveloped(m)) {
    return error(m.id, -32602, 'missing the 2026-07-28 envelope');
  }
  switch (m.method) {
    case 'server/discover':
      if (modes.has('die-on-discover')) process.exit(5);
      if (!modes.has('modern')) return error(m.id, -32601, 'Method not found');
      return result(m.id, {supportedVersions: [kModern], capabilities: {tools: {}},
                           _meta: {'io.modelcontextprotocol/serverInfo': {name: 'scripted'}}});
    case 'initialize':
      if (modes.has('exit-on-initialize')) process.exit(4);
      if (modes.has('later-exit-on-initialize') && instance > 1) process.exit(4);
      return result(m.id, {protocolVersion: '2025-11-25', capabilities: {tools: {}},
                           serverInfo: {name: 'scripted', version: '1.0.0'}});
    case 'tools/list':
      return result(m.id, {tools});
    case 'tools/call':
      return call(m);
    case 'tasks/result':
      return taskResult(m.id, m.params.taskId);
    case 'tasks/cancel':
      endTask(m.params.taskId, 'cancelled');
      return result(m.id, {taskId: m.params.taskId, status: 'cancelled'});
    default:
      return error(m.id, -32601, 'Method not found');
  }
}

readline.createInterface({input: process.stdin})
    .on('line', (line) => {
      const m = JSON.parse(line);
      received.push({method: m.method ?? null, id: m.id ?? null, enveloped: enveloped(m),
                     params: m.params ?? null});
      if (m.method === undefined) {  // keel's answer to a question
        const callId = waiting.get(m.id);
        waiting.delete(m.id);
        if (m.error) return answer(callId, {content: [text(`refused: ${m.error.message}`)]});
        return answer(callId, {content: [text(`answered: ${JSON.stringify(m.result)}`)]});
      }
      if (m.id !== undefined) onRequest(m);
    })
    .on('close', () => process.exit(0));
