#!/usr/bin/env node
// Scripted model server for recording Claude Code and Codex (used by record.mjs here).
// No dependencies (Node >= 20). Listens on 127.0.0.1 only, on an ephemeral port.
//
//   node fake-provider.mjs --out DIR --port-file FILE [--diagnostics] [--count-as FROM=TO]...
//
// Routes (answers stream as SSE, the way the real APIs do):
//   POST /v1/messages[?beta=true]            Anthropic Messages (Claude Code)
//   POST /v1/messages/count_tokens           Anthropic token counting (answered, not recorded)
//   POST /v1/responses                       OpenAI Responses (Codex, wire_api = "responses")
// Anything else: 404, logged to DIR/unrouted.log.
//
// Recording, per model request N (1-based, arrival order), in --out:
//   NNN-<api>.body.json   the request body, byte for byte as received
//   NNN-<api>.meta.json   url, headers (credentials redacted), body bytes + sha256, decision,
//                         HTTP status, the usage returned (exactly the object sent), receivedAt
//   index.ndjson          one line per request
//
// Script (what the "model" answers), from the request's tail (after the last assistant turn):
//   - a compaction request (Claude Code: "summary of the conversation" in the last user text;
//     Codex: its compaction prompt "CONTEXT CHECKPOINT COMPACTION")      -> a fixed summary
//   - the tail ends in a tool result                  -> text "Tool result received (...)"
//   - user text contains "FAIL500", first time seen   -> HTTP 500 (once per distinct text)
//   - user text contains "DELEGATE" (Claude Code)     -> an `Agent` tool call (general-purpose
//                                                        sub-agent, prompt "SUBTASK: …")
//   - user text matches "read <file>.<ext>"           -> Claude Code: `Read {file_path}` (absolute,
//                                                        from the cwd in the request);
//                                                        Codex: `exec_command {cmd: "cat <file>"}`
//   - anything else                                   -> text "ACK(<model>): <user text>"
// Response ids embed N: msg_fake_N, resp_fake_N (toolu_fake_N, call_fake_N, fc_fake_N).
//
// USAGE IS SYNTHETIC: tokens = ceil(UTF-8 bytes / 4) of a canonical serialization, cache fields
// from a simulated prefix cache:
//   - Anthropic: blocks in render order tools → system → messages, cache_control stripped; a
//     request writes an entry at each breakpoint whose prefix is ≥ 1024 tokens and reads the
//     longest earlier-written prefix (same model) reachable within 20 blocks before one of its
//     breakpoints. cache_creation is split by the TTL of the last breakpoint (`ttl: "1h"` →
//     ephemeral_1h_input_tokens, else ephemeral_5m_input_tokens). No expiry (a recording lasts
//     seconds).
//   - OpenAI Responses: cached = longest common prefix (characters of tools, instructions and
//     input) with an earlier request of the same model + prompt_cache_key + reasoning.effort, in tokens, floored to
//     a multiple of 128, 0 below 1024. input_tokens includes cached (as OpenAI reports it).
// --count-as FROM=TO replaces machine-specific strings before counting, so the numbers do not
// depend on where the recording ran. The saved bytes are untouched.

import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    out: { type: 'string' },
    'port-file': { type: 'string' },
    'count-as': { type: 'string', multiple: true, default: [] },
    diagnostics: { type: 'boolean', default: false },
  },
});
if (!args.out || !args['port-file']) {
  console.error('usage: node fake-provider.mjs --out DIR --port-file FILE [--count-as FROM=TO]...');
  process.exit(2);
}
const OUT = args.out;
mkdirSync(OUT, { recursive: true });

const countAs = args['count-as'].map((pair) => {
  const i = pair.indexOf('=');
  if (i <= 0) throw new Error(`--count-as expects FROM=TO, got ${pair}`);
  return [pair.slice(0, i), pair.slice(i + 1)];
});
const neutral = (s) => countAs.reduce((acc, [from, to]) => acc.split(from).join(to), s);
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const tokens = (s) => Math.ceil(Buffer.byteLength(s, 'utf8') / 4);

// ------------------------------------------------------------------ simulated caches

const MIN_TOKENS = 1024;
const LOOKBACK = 20;
const OPENAI_STEP = 128;
const anthropicEntries = new Set();

function strip(value) {
  if (Array.isArray(value)) return value.map(strip);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'cache_control') out[k] = strip(v);
    return out;
  }
  return value;
}

function anthropicBlocks(body) {
  const blocks = [];
  const bp = (b) => (b.cache_control ? (b.cache_control.ttl === '1h' ? 3600 : 300) : 0);
  for (const t of body.tools ?? []) blocks.push({ text: `tool:${JSON.stringify(strip(t))}`, ttl: bp(t) });
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  for (const b of system) blocks.push({ text: `system:${JSON.stringify(strip(b))}`, ttl: bp(b) });
  for (const m of body.messages ?? []) {
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    content.forEach((b, i) => blocks.push({ text: `${i === 0 ? `|${m.role}|` : ''}${JSON.stringify(strip(b))}`, ttl: bp(b) }));
  }
  return blocks;
}

function simulateAnthropic(body) {
  const blocks = anthropicBlocks(body);
  const prefixTokens = [];
  const keys = [];
  let acc = '';
  for (const b of blocks) {
    acc += b.text;
    prefixTokens.push(tokens(acc));
    keys.push(sha256(`${body.model}\0${acc}`));
  }
  const total = tokens(acc);
  const bps = blocks.flatMap((b, i) => (b.ttl ? [i] : []));
  const reachable = (i) => bps.some((p) => p >= i && p - i < LOOKBACK);
  let readUpTo = -1;
  for (let i = 0; i < blocks.length; i++) if (reachable(i) && anthropicEntries.has(keys[i])) readUpTo = i;
  const cacheRead = readUpTo >= 0 ? prefixTokens[readUpTo] : 0;
  let cacheWrite = 0;
  const last = bps.at(-1);
  if (last !== undefined && prefixTokens[last] >= MIN_TOKENS && readUpTo < last) cacheWrite = prefixTokens[last] - cacheRead;
  for (const p of bps) if (prefixTokens[p] >= MIN_TOKENS) anthropicEntries.add(keys[p]);
  const ttl = last !== undefined ? blocks[last].ttl : 300;
  return { input: Math.max(0, total - cacheRead - cacheWrite), cacheRead, cacheWrite, ttl, total, lastBreakpointTokens: last !== undefined ? prefixTokens[last] : 0, blocks: blocks.length, breakpoints: bps, readUpToBlock: readUpTo };
}

/** Previous request per lineage (first system text + first tool), for the scripted cache diagnostics. */
const lastAnthropic = new Map();

/**
 * The API's cache diagnostics (platform.claude.com/docs/en/build-with-claude/cache-diagnostics):
 * `cache_miss_reason` null on a read of the previous prompt, else the first segment that differs
 * from the previous request of the same lineage (model_changed | tools_changed | system_changed |
 * messages_changed) and the tokens not read. Sent only when the request asks for them
 * (`diagnostics.previous_message_id`), or always with --diagnostics.
 */
function anthropicDiagnostics(body, sim) {
  const system = JSON.stringify(strip(body.system ?? ''));
  // One conversation per lineage: a sub-agent (billing header `cc_is_subagent`) is its own.
  const lineage = `${JSON.stringify(body.system?.[0] ?? '').includes('cc_is_subagent')}:${(body.system?.[1]?.text ?? '').slice(0, 200)}`;
  const prev = lastAnthropic.get(lineage);
  const cur = { model: body.model, tools: JSON.stringify(strip(body.tools ?? [])), system, lastBreakpointTokens: sim.lastBreakpointTokens };
  lastAnthropic.set(lineage, cur);
  if (!body.diagnostics && !args.diagnostics) return null;
  if (!prev) return { cache_miss_reason: { type: 'previous_message_not_found', cache_missed_input_tokens: sim.total - sim.cacheRead } };
  // A hit: the read reached the previous request's last breakpoint.
  if (sim.cacheRead > 0 && sim.cacheRead >= prev.lastBreakpointTokens) return { cache_miss_reason: null };
  const type = prev.model !== cur.model ? 'model_changed' : prev.tools !== cur.tools ? 'tools_changed' : prev.system !== cur.system ? 'system_changed' : 'messages_changed';
  return { cache_miss_reason: { type, cache_missed_input_tokens: Math.max(0, sim.total - sim.cacheRead) } };
}

const openaiHistory = [];
function simulateResponses(body) {
  const canonical = `${JSON.stringify(body.tools ?? [])}\n${body.instructions ?? ''}\n${JSON.stringify(body.input ?? [])}`;
  // A reasoning-effort change misses the cache (providers.md: reasoning.effort invalidates all).
  const lineage = `${body.model}\0${body.prompt_cache_key ?? ''}\0${body.reasoning?.effort ?? ''}`;
  let lcp = 0;
  for (const e of openaiHistory) {
    if (e.lineage !== lineage) continue;
    const n = Math.min(e.canonical.length, canonical.length);
    let i = 0;
    while (i < n && e.canonical.charCodeAt(i) === canonical.charCodeAt(i)) i++;
    lcp = Math.max(lcp, i);
  }
  openaiHistory.push({ lineage, canonical });
  const lcpTokens = tokens(canonical.slice(0, lcp));
  const cached = lcpTokens >= MIN_TOKENS ? Math.floor(lcpTokens / OPENAI_STEP) * OPENAI_STEP : 0;
  return { promptTokens: tokens(canonical), cached, lcpChars: lcp };
}

// ------------------------------------------------------------------ script

const textOf = (c) => (typeof c === 'string' ? c : (c ?? []).map((x) => x.text ?? (typeof x.content === 'string' ? x.content : '')).join('\n'));

/** {userText, toolResult, cwd} of what follows the last assistant turn. */
function tailOf(api, body) {
  const items = api === 'anthropic-messages' ? (body.messages ?? []) : (body.input ?? []);
  const isAssistant = (m) => m.role === 'assistant' || m.type === 'function_call' || m.type === 'custom_tool_call' || m.type === 'reasoning';
  let start = items.length;
  while (start > 0 && !isAssistant(items[start - 1])) start--;
  const user = [];
  const tool = [];
  for (const m of items.slice(start)) {
    if (m.type === 'function_call_output' || m.type === 'custom_tool_call_output') tool.push(typeof m.output === 'string' ? m.output : JSON.stringify(m.output));
    else if (m.role === 'user' && Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b.type === 'tool_result') tool.push(textOf(b.content));
        else if (b.type === 'text' || b.type === 'input_text') user.push(b.text ?? '');
      }
    } else if (m.role === 'user') user.push(textOf(m.content));
  }
  // The user's own words: system reminders and Codex's context blocks are not what was typed.
  const typed = user.filter((t) => !/^\s*<(system-reminder|environment_context|user_instructions|skills_instructions|permissions|local-command-caveat|local-command-stdout|command-name|task-notification)/.test(t));
  const all = JSON.stringify(items);
  const cwd = /Primary working directory: ([^\\\n"]+)/.exec(all)?.[1] ?? /<cwd>([^<]+)<\/cwd>/.exec(all)?.[1] ?? '.';
  return { userText: typed.at(-1) ?? '', toolResult: tool.length ? tool.join('\n') : null, cwd, all };
}

const failedOnce = new Set();

/** Name of the last function call in a Responses request's input. */
function lastCallName(body) {
  const calls = (body.input ?? []).filter((m) => m.type === 'function_call');
  return calls.at(-1)?.name;
}

function decide(api, body) {
  const { userText, toolResult, cwd, all } = tailOf(api, body);
  const lastUser = userText.split('\n').slice(-40).join('\n');
  if (/summary of the conversation|summary based on the conversation|CONTEXT CHECKPOINT COMPACTION/i.test(lastUser) || (api === 'openai-responses' && /CONTEXT CHECKPOINT COMPACTION/.test(all) && toolResult === null && !userText)) {
    return {
      kind: 'summary',
      // Claude Code rejects a summary without an <analysis> block and asks again.
      text: '<analysis>\nScripted analysis of the conversation.\n</analysis>\n<summary>\n1. Primary Request and Intent: exercise the host against a scripted model.\n2. Progress: greeted the model, read files with a tool.\n3. Next step: continue the scripted session.\n</summary>',
    };
  }
  // GROW_CONTEXT: the answer reports a prompt of 170,000 more (uncached) tokens than was sent, so
  // the host believes its context is nearly full (Claude Code auto-compacts above ~167k of 200k).
  if (api === 'anthropic-messages' && userText.includes('GROW_CONTEXT') && toolResult === null) return { kind: 'text', text: `ACK(${body.model}): context grown`, padInput: 170000 };
  // Codex sub-agents (multi_agent_v1): SPAWN → spawn_agent; its result (the new agent's id) →
  // wait_agent on that id, so the parent turn lasts until the sub-agent has answered.
  if (api === 'openai-responses' && toolResult !== null && lastCallName(body) === 'spawn_agent') {
    const id = /"(?:agent_id|id|target)"\s*:\s*"([^"]+)"/.exec(toolResult)?.[1] ?? toolResult.trim();
    return { kind: 'tool', name: 'wait_agent', namespace: 'multi_agent_v1', args: { targets: [id], timeout_ms: 60000 }, text: 'Waiting for the sub-agent.' };
  }
  if (api === 'openai-responses' && toolResult === null && userText.includes('SPAWN')) {
    return { kind: 'tool', name: 'spawn_agent', namespace: 'multi_agent_v1', args: { message: 'SUBTASK: say hello from the sub-agent.' }, text: 'I will spawn a sub-agent.' };
  }
  if (toolResult !== null) return { kind: 'text', text: `Tool result received (${toolResult.length} chars). First line: ${toolResult.split('\n')[0].slice(0, 60)}` };
  if (userText.includes('FAIL500') && !failedOnce.has(userText)) {
    failedOnce.add(userText);
    return { kind: 'http-500' };
  }
  if (api === 'anthropic-messages' && userText.includes('DELEGATE')) {
    return {
      kind: 'tool',
      name: 'Agent',
      args: { description: 'Scripted sub-task', prompt: 'SUBTASK: say hello from the sub-agent.', subagent_type: 'general-purpose' },
      text: 'I will delegate this to a sub-agent.',
    };
  }
  const read = userText.match(/\bread (?:the file )?([\w./-]+\.\w+)/i);
  if (read) {
    if (api === 'anthropic-messages') return { kind: 'tool', name: 'Read', args: { file_path: `${cwd}/${read[1]}` }, text: "I'll read that file." };
    return { kind: 'tool', name: 'exec_command', args: { cmd: `cat ${read[1]}` }, text: "I'll read that file." };
  }
  return { kind: 'text', text: `ACK(${body.model}): ${userText.replace(/\s+/g, ' ').trim().slice(0, 80)}` };
}

// ------------------------------------------------------------------ answers

function startSse(res, n) {
  // `request-id` as the Anthropic API sends it: Claude Code stores it as the line's requestId.
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': `req_fake_${n}` });
}
function pieces(s, n = 3) {
  const size = Math.max(1, Math.ceil(s.length / n));
  const out = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}
const CREATED_BASE = 1767225600;

function answerAnthropic(res, body, d, n) {
  const sim = simulateAnthropic(body);
  const send = (type, o) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`);
  startSse(res, n);
  const cacheCreation = { ephemeral_5m_input_tokens: sim.ttl === 3600 ? 0 : sim.cacheWrite, ephemeral_1h_input_tokens: sim.ttl === 3600 ? sim.cacheWrite : 0 };
  const startUsage = {
    input_tokens: sim.input + (d.padInput ?? 0),
    cache_creation_input_tokens: sim.cacheWrite,
    cache_read_input_tokens: sim.cacheRead,
    cache_creation: cacheCreation,
    output_tokens: 1,
  };
  const message = { id: `msg_fake_${n}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage };
  const diagnostics = anthropicDiagnostics(body, sim);
  if (diagnostics) message.diagnostics = diagnostics;
  send('message_start', { message });
  let index = 0;
  let outText = '';
  if (d.text) {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const p of pieces(d.text)) send('content_block_delta', { index, delta: { type: 'text_delta', text: p } });
    send('content_block_stop', { index });
    outText += d.text;
    index++;
  }
  let stop = 'end_turn';
  if (d.kind === 'tool') {
    const argsJson = JSON.stringify(d.args);
    send('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_fake_${n}`, name: d.name, input: {} } });
    for (const p of pieces(argsJson, 2)) send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } });
    send('content_block_stop', { index });
    outText += argsJson;
    stop = 'tool_use';
  }
  const usage = { ...startUsage, output_tokens: tokens(outText) + 1 };
  send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage });
  send('message_stop', {});
  return { usage, simulation: sim };
}

function answerResponses(res, body, d, n) {
  const sim = simulateResponses(body);
  let seq = 0;
  const send = (o) => res.write(`event: ${o.type}\ndata: ${JSON.stringify({ ...o, sequence_number: seq++ })}\n\n`);
  startSse(res, n);
  const response = { id: `resp_fake_${n}`, object: 'response', created_at: CREATED_BASE + n, status: 'in_progress', model: body.model, output: [] };
  send({ type: 'response.created', response });
  const output = [];
  let outText = '';
  if (d.text) {
    const id = `msg_fake_${n}`;
    const item = { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] };
    const index = output.length;
    send({ type: 'response.output_item.added', output_index: index, item });
    send({ type: 'response.content_part.added', item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const p of pieces(d.text)) send({ type: 'response.output_text.delta', item_id: id, output_index: index, content_index: 0, delta: p });
    send({ type: 'response.output_text.done', item_id: id, output_index: index, content_index: 0, text: d.text });
    const done = { ...item, status: 'completed', content: [{ type: 'output_text', text: d.text, annotations: [] }] };
    send({ type: 'response.output_item.done', output_index: index, item: done });
    output.push(done);
    outText += d.text;
  }
  if (d.kind === 'tool') {
    const argsJson = JSON.stringify(d.args);
    const id = `fc_fake_${n}`;
    const item = { type: 'function_call', id, call_id: `call_fake_${n}`, name: d.name, ...(d.namespace ? { namespace: d.namespace } : {}), arguments: '', status: 'in_progress' };
    const index = output.length;
    send({ type: 'response.output_item.added', output_index: index, item });
    for (const p of pieces(argsJson, 2)) send({ type: 'response.function_call_arguments.delta', item_id: id, output_index: index, delta: p });
    send({ type: 'response.function_call_arguments.done', item_id: id, output_index: index, arguments: argsJson });
    const done = { ...item, arguments: argsJson, status: 'completed' };
    send({ type: 'response.output_item.done', output_index: index, item: done });
    output.push(done);
    outText += argsJson;
  }
  const outTokens = tokens(outText) + 1;
  const usage = {
    input_tokens: sim.promptTokens,
    input_tokens_details: { cached_tokens: sim.cached },
    output_tokens: outTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: sim.promptTokens + outTokens,
  };
  send({ type: 'response.completed', response: { ...response, status: 'completed', output, usage } });
  return { usage, simulation: sim };
}

function answer500(res, api) {
  const message = 'fake provider: scripted 500 Internal server error';
  const body = api === 'anthropic-messages' ? { type: 'error', error: { type: 'api_error', message } } : { error: { message, type: 'server_error', code: null } };
  res.writeHead(500, { 'content-type': 'application/json' });
  res.write(JSON.stringify(body));
}

// ------------------------------------------------------------------ server

const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'proxy-authorization', 'cookie'];
const redact = (h) => {
  const out = { ...h };
  for (const k of CREDENTIAL_HEADERS) if (out[k] !== undefined) out[k] = `<redacted:${String(out[k]).length} chars>`;
  return out;
};
let counter = 0;

function handle(req, raw, res) {
  const receivedAt = new Date().toISOString();
  const path = req.url.split('?')[0];
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
    let input = 0;
    try {
      input = tokens(JSON.stringify(JSON.parse(neutral(raw.toString('utf8')))));
    } catch {
      // answered with 0
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ input_tokens: input }));
    return;
  }
  const api = path === '/v1/messages' ? 'anthropic-messages' : path === '/v1/responses' ? 'openai-responses' : null;
  if (req.method !== 'POST' || !api) {
    appendFileSync(join(OUT, 'unrouted.log'), `${receivedAt} ${req.method} ${req.url}\n`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `fake provider: no route ${req.method} ${req.url}` } }));
    return;
  }
  const n = ++counter;
  const name = `${String(n).padStart(3, '0')}-${api}`;
  writeFileSync(join(OUT, `${name}.body.json`), raw);
  const body = JSON.parse(neutral(raw.toString('utf8')));
  const decision = decide(api, body);
  let status = 200;
  let usage = null;
  let simulation = null;
  if (decision.kind === 'http-500') {
    status = 500;
    answer500(res, api);
  } else {
    ({ usage, simulation } = (api === 'anthropic-messages' ? answerAnthropic : answerResponses)(res, body, decision, n));
  }
  const meta = {
    n,
    api,
    model: body.model,
    method: req.method,
    url: req.url,
    headers: redact(req.headers),
    bodyBytes: raw.length,
    bodySha256: sha256(raw),
    receivedAt,
    status,
    decision,
    responseId: status === 200 ? (api === 'anthropic-messages' ? `msg_fake_${n}` : `resp_fake_${n}`) : null,
    usage,
    usageIsSynthetic: true,
    simulation,
  };
  writeFileSync(join(OUT, `${name}.meta.json`), `${JSON.stringify(meta, null, 2)}\n`);
  appendFileSync(join(OUT, 'index.ndjson'), `${JSON.stringify({ n, file: `${name}.body.json`, api, model: body.model, status, bytes: raw.length, sha256: meta.bodySha256, decision: decision.kind, responseId: meta.responseId, usage })}\n`);
  res.end();
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      handle(req, Buffer.concat(chunks), res);
    } catch (e) {
      console.error(`fake provider: ${e.stack ?? e}`);
      if (!res.headersSent) res.writeHead(599);
      res.end();
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  writeFileSync(args['port-file'], String(server.address().port));
  console.log(`fake provider listening on 127.0.0.1:${server.address().port}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
