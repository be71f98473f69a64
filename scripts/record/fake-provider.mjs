#!/usr/bin/env node
// Scripted model server for recording what a real agent host sends: the one provider of every
// recorder (record-pi.sh, record-opencode.sh, claude-codex/record.mjs). No dependencies (Node >= 20).
// Listens on 127.0.0.1 only, on an ephemeral port.
//
//   node fake-provider.mjs --out DIR --port-file FILE [--script pi|hosts] [--diagnostics] [--count-as FROM=TO]...
//
// --script pi (default) is the script below; --script hosts is the Claude Code / Codex script
// (decideHosts): a compaction prompt ("summary of the conversation", Codex's "CONTEXT CHECKPOINT
// COMPACTION") → a summary with an <analysis> block; FAIL500 → HTTP 500 once; DELEGATE (Claude
// Code) → an `Agent` tool call; SPAWN (Codex) → multi_agent_v1 `spawn_agent`, then `wait_agent` on
// the id it returns; GROW_CONTEXT (Claude Code) → usage padded by 170,000 input tokens;
// "read <file>" → `Read {file_path}` (Claude Code) / `exec_command {cmd: "cat <file>"}` (Codex).
// It also sends what those hosts need: a `request-id` header, the cache_creation 5 m / 1 h split,
// the responseId in the meta, and with --diagnostics the API's cache diagnostics
// (`message.diagnostics.cache_miss_reason`, unasked); its OpenAI cache is keyed by
// reasoning.effort too. POST /v1/messages/count_tokens is answered, not recorded.
//
// Routes (all answer as SSE, the way the real APIs stream):
//   POST /v1/chat/completions   OpenAI Chat Completions   (pi api "openai-completions")
//   POST /v1/responses          OpenAI Responses          (pi api "openai-responses")
//   POST /v1/messages           Anthropic Messages        (pi api "anthropic-messages")
//
// Recording, per request N (1-based, in arrival order), in --out:
//   NNN-<api>.body.json   the request body, byte-for-byte as received (never re-serialized)
//   NNN-<api>.meta.json   url, headers (credentials redacted), body bytes + sha256, the scripted
//                         decision, HTTP status, the usage returned, the cache simulation, receivedAt
//   index.ndjson          one line per request
// The port is written to --port-file once the server listens.
//
// Script (what the "model" answers), from the request's tail (everything after the last
// assistant turn):
//   - summarization system prompt ("context summarization assistant") -> a fixed summary text
//     (kind history | update | turn-prefix | branch, chosen from pi's summarization prompts)
//   - the tail ends in a tool result                -> text "Tool result received (...)"
//   - user text contains "FAIL500", first time seen  -> HTTP 500 (once per distinct tail text)
//   - user text matches "read <file>.<ext>"          -> a `read` tool call {path: <file>}
//   - anything else                                  -> text "ACK(<model>): <user text>"
// (user text = the user messages of the tail without hidden "<phux-context ..." messages)
// Response ids embed N: chatcmpl-fake-N, msg_fake_N, resp_fake_N (also call_fake_N, toolu_fake_N,
// fc_fake_N), so an assistant entry's responseId names the request that produced it.
//
// USAGE IS SYNTHETIC. Token counts are ceil(UTF-8 bytes / 4) of a canonical serialization, and the
// cache fields come from a simulated prefix cache, not from any real provider:
//   - Anthropic: blocks in render order tools -> system -> messages (one per content block,
//     cache_control stripped). A request writes a cache entry at each of its cache_control
//     breakpoints whose prefix is >= 1024 tokens. It reads the longest prefix that an earlier
//     request of the same model wrote and that lies at or at most 20 blocks before one of its own
//     breakpoints (the lookback window). cache_creation = tokens(last breakpoint prefix) - read when
//     that prefix is >= 1024 tokens and not already cached; input = total - read - creation.
//     No TTL (a recording lasts seconds); thinking/params changes are not modelled.
//   - OpenAI (both APIs): cached = longest common prefix (in characters of the canonical text:
//     tools, then system/instructions and messages/input) with any earlier request of the same
//     api + model + prompt_cache_key, in tokens, floored to a multiple of 128, and 0 below 1024.
//     No cache writes are reported.
// --count-as FROM=TO replaces machine-specific strings (temp dir, install path) before counting,
// so the synthetic numbers do not depend on where the recording ran. The saved bytes are untouched.

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
    script: { type: 'string', default: 'pi' },
    diagnostics: { type: 'boolean', default: false },
  },
});
if (!['pi', 'hosts'].includes(args.script)) {
  console.error(`fake provider: --script pi|hosts, got ${args.script}`);
  process.exit(2);
}
/** --script hosts: the Claude Code / Codex script and the details those hosts need. */
const HOSTS = args.script === 'hosts';
if (!args.out || !args['port-file']) {
  console.error('usage: node fake-provider.mjs --out DIR --port-file FILE [--script pi|hosts] [--diagnostics] [--count-as FROM=TO]...');
  process.exit(2);
}
const OUT = args.out;
mkdirSync(OUT, { recursive: true });

const USAGE_NOTE =
  'SYNTHETIC usage: tokens = ceil(bytes/4) of a canonical serialization; cache fields come from a simulated prefix cache (fake-provider.mjs header), not from a real provider.';

/** [from, to] string replacements applied before counting tokens (never to the saved bytes). */
const countAs = args['count-as'].map((pair) => {
  const i = pair.indexOf('=');
  if (i <= 0) throw new Error(`--count-as expects FROM=TO, got ${pair}`);
  return [pair.slice(0, i), pair.slice(i + 1)];
});
const neutral = (s) => countAs.reduce((acc, [from, to]) => acc.split(from).join(to), s);

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
/** Synthetic token count of a string: ceil(UTF-8 bytes / 4). */
const tokens = (s) => Math.ceil(Buffer.byteLength(s, 'utf8') / 4);

// ---------------------------------------------------------------------------------------------
// Simulated prefix caches (state lives for the life of the server = one scenario)
// ---------------------------------------------------------------------------------------------

const ANTHROPIC_MIN_TOKENS = 1024; // minimum cacheable prefix (Sonnet/Opus class models)
const ANTHROPIC_LOOKBACK_BLOCKS = 20;
const OPENAI_MIN_TOKENS = 1024;
const OPENAI_STEP_TOKENS = 128;

/** Anthropic cache: sha256(model + canonical prefix) of every written breakpoint prefix. */
const anthropicEntries = new Set();

function withoutCacheControl(value) {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'cache_control') out[k] = withoutCacheControl(v);
    return out;
  }
  return value;
}

/** One entry per cacheable block, in Anthropic's render order: tools, system, messages. */
function anthropicBlocks(body) {
  const blocks = [];
  // ttl: seconds of the block's breakpoint (cache_control.ttl "1h" → 3600, else 300), 0 = none.
  const mark = (b) => ({ breakpoint: !!b.cache_control, ttl: b.cache_control ? (b.cache_control.ttl === '1h' ? 3600 : 300) : 0 });
  for (const tool of body.tools ?? []) blocks.push({ text: `tool:${JSON.stringify(withoutCacheControl(tool))}`, ...mark(tool) });
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  for (const b of system) blocks.push({ text: `system:${JSON.stringify(withoutCacheControl(b))}`, ...mark(b) });
  for (const m of body.messages ?? []) {
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    content.forEach((b, i) => blocks.push({ text: `${i === 0 ? `|${m.role}|` : ''}${JSON.stringify(withoutCacheControl(b))}`, ...mark(b) }));
  }
  return blocks;
}

function simulateAnthropic(body) {
  const blocks = anthropicBlocks(body);
  const prefixTokens = [];
  const prefixKeys = [];
  let acc = '';
  for (const b of blocks) {
    acc += b.text;
    prefixTokens.push(tokens(acc));
    prefixKeys.push(sha256(`${body.model}\0${acc}`));
  }
  const total = tokens(acc);
  const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
  const reachable = (i) => breakpoints.some((bp) => bp >= i && bp - i < ANTHROPIC_LOOKBACK_BLOCKS);
  let readUpTo = -1;
  for (let i = 0; i < blocks.length; i++) if (reachable(i) && anthropicEntries.has(prefixKeys[i])) readUpTo = i;
  const cacheRead = readUpTo >= 0 ? prefixTokens[readUpTo] : 0;
  let cacheWrite = 0;
  const last = breakpoints.at(-1);
  if (last !== undefined && prefixTokens[last] >= ANTHROPIC_MIN_TOKENS && readUpTo !== last) {
    cacheWrite = prefixTokens[last] - cacheRead;
  }
  for (const bp of breakpoints) if (prefixTokens[bp] >= ANTHROPIC_MIN_TOKENS) anthropicEntries.add(prefixKeys[bp]);
  const out = {
    input: Math.max(0, total - cacheRead - cacheWrite),
    cacheRead,
    cacheWrite,
    total,
    blocks: blocks.length,
    breakpoints,
    readUpToBlock: readUpTo,
  };
  // --script hosts: the TTL of what was written (the last breakpoint's) for the 5 m / 1 h split.
  if (HOSTS) Object.assign(out, { ttl: last !== undefined ? blocks[last].ttl : 300, lastBreakpointTokens: last !== undefined ? prefixTokens[last] : 0 });
  return out;
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
  const system = JSON.stringify(withoutCacheControl(body.system ?? ''));
  // One conversation per lineage: a sub-agent (billing header `cc_is_subagent`) is its own.
  const lineage = `${JSON.stringify(body.system?.[0] ?? '').includes('cc_is_subagent')}:${(body.system?.[1]?.text ?? '').slice(0, 200)}`;
  const prev = lastAnthropic.get(lineage);
  const cur = { model: body.model, tools: JSON.stringify(withoutCacheControl(body.tools ?? [])), system, lastBreakpointTokens: sim.lastBreakpointTokens };
  lastAnthropic.set(lineage, cur);
  if (!body.diagnostics && !args.diagnostics) return null;
  if (!prev) return { cache_miss_reason: { type: 'previous_message_not_found', cache_missed_input_tokens: sim.total - sim.cacheRead } };
  // A hit: the read reached the previous request's last breakpoint.
  if (sim.cacheRead > 0 && sim.cacheRead >= prev.lastBreakpointTokens) return { cache_miss_reason: null };
  const type = prev.model !== cur.model ? 'model_changed' : prev.tools !== cur.tools ? 'tools_changed' : prev.system !== cur.system ? 'system_changed' : 'messages_changed';
  return { cache_miss_reason: { type, cache_missed_input_tokens: Math.max(0, sim.total - sim.cacheRead) } };
}


/** OpenAI history: {lineage, canonical} of every earlier request. */
const openaiHistory = [];

function openaiCanonical(body, api) {
  const tools = JSON.stringify(body.tools ?? []);
  if (api === 'openai-responses') return `${tools}\n${body.instructions ?? ''}\n${JSON.stringify(body.input ?? [])}`;
  return `${tools}\n${(body.messages ?? []).map((m) => JSON.stringify(m)).join('\n')}`;
}

function simulateOpenAI(body, api) {
  const canonical = openaiCanonical(body, api);
  // --script hosts: a reasoning-effort change misses the cache too (providers.md: it invalidates all).
  const lineage = `${api}\0${body.model}\0${body.prompt_cache_key ?? ''}${HOSTS ? `\0${body.reasoning?.effort ?? ''}` : ''}`;
  let lcpChars = 0;
  for (const earlier of openaiHistory) {
    if (earlier.lineage !== lineage) continue;
    const n = Math.min(earlier.canonical.length, canonical.length);
    let i = 0;
    while (i < n && earlier.canonical.charCodeAt(i) === canonical.charCodeAt(i)) i++;
    lcpChars = Math.max(lcpChars, i);
  }
  openaiHistory.push({ lineage, canonical });
  const lcpTokens = tokens(canonical.slice(0, lcpChars));
  const cached = lcpTokens >= OPENAI_MIN_TOKENS ? Math.floor(lcpTokens / OPENAI_STEP_TOKENS) * OPENAI_STEP_TOKENS : 0;
  return { promptTokens: tokens(canonical), cached, lcpChars };
}

// ---------------------------------------------------------------------------------------------
// Script: what the "model" answers
// ---------------------------------------------------------------------------------------------

const textOf = (content) =>
  typeof content === 'string' ? content : (content ?? []).map((c) => c.text ?? (typeof c.content === 'string' ? c.content : '')).join('');

/**
 * Reduce a request to {system, userText, toolResult}: the system prompt and what came after the
 * last assistant turn: the user text (hidden phux-context messages left out, they are not what the
 * user typed) or the text of tool results.
 */
function tailOf(api, body) {
  let system = '';
  let items = [];
  if (api === 'anthropic-messages') {
    system = typeof body.system === 'string' ? body.system : (body.system ?? []).map((b) => b.text).join('\n');
    items = body.messages ?? [];
  } else if (api === 'openai-completions') {
    items = body.messages ?? [];
    const sys = items.find((m) => m.role === 'system' || m.role === 'developer');
    system = sys ? textOf(sys.content) : '';
  } else {
    items = body.input ?? [];
    const sys = items.find((m) => m.role === 'system' || m.role === 'developer');
    system = sys ? textOf(sys.content) : (body.instructions ?? '');
  }
  const isAssistant = (m) => m.role === 'assistant' || m.type === 'function_call' || (m.type === 'message' && m.role !== 'user');
  let start = items.length;
  while (start > 0 && !isAssistant(items[start - 1])) start--;
  const user = [];
  const tool = [];
  for (const m of items.slice(start)) {
    if (m.role === 'tool') tool.push(textOf(m.content)); // chat completions tool result
    else if (m.type === 'function_call_output') tool.push(typeof m.output === 'string' ? m.output : JSON.stringify(m.output));
    else if (m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result')) {
      for (const b of m.content) (b.type === 'tool_result' ? tool : user).push(b.type === 'tool_result' ? textOf(b.content) : (b.text ?? ''));
    } else if (m.role === 'user') user.push(textOf(m.content));
  }
  const typed = user.filter((t) => !t.startsWith('<phux-context '));
  return { system, userText: typed.join('\n'), toolResult: tool.length ? tool.join('\n') : null };
}

const SUMMARY_KINDS = [
  // [kind, marker in pi 0.73.1's summarization prompts (compaction.ts, branch-summarization.ts)]
  ['turn-prefix', 'This is the PREFIX of a turn'],
  ['branch', 'summary of this conversation branch'],
  ['update', 'NEW conversation messages to incorporate'],
  ['history', 'The messages above are a conversation to summarize'],
];

const failedOnce = new Set();

/** Decide the scripted answer. Returns {kind: text|tool|summary|http-500, ...}. */
function decide(api, body) {
  return HOSTS ? decideHosts(api, body) : decidePi(api, body);
}

/** The Pi script (default). */
function decidePi(api, body) {
  const { system, userText, toolResult } = tailOf(api, body);
  if (/context summarization assistant/i.test(system)) {
    const summaryOf = SUMMARY_KINDS.find(([, marker]) => userText.includes(marker))?.[0] ?? 'unknown';
    return {
      kind: 'summary',
      summaryOf,
      text: `## Goal\nExercise the Pi session format against a scripted model (${summaryOf} summary).\n\n## Progress\n- Greeted the model\n- Read files with the read tool\n\n## Next Steps\n- Continue the scripted session`,
    };
  }
  if (toolResult !== null) {
    return { kind: 'text', text: `Tool result received (${toolResult.length} chars). First line: ${toolResult.split('\n')[0].slice(0, 60)}` };
  }
  if (userText.includes('FAIL500') && !failedOnce.has(userText)) {
    failedOnce.add(userText);
    return { kind: 'http-500', userText };
  }
  const read = userText.match(/\bread (?:the file )?([\w./-]+\.\w+)/i);
  if (read) return { kind: 'tool', name: 'read', args: { path: read[1] }, text: "I'll read that file." };
  return { kind: 'text', text: `ACK(${body.model}): ${userText.replace(/\s+/g, ' ').trim().slice(0, 80)}` };
}

const hostsTextOf = (c) => (typeof c === 'string' ? c : (c ?? []).map((x) => x.text ?? (typeof x.content === 'string' ? x.content : '')).join('\n'));

/** {userText, toolResult, cwd} of what follows the last assistant turn. */
function hostsTailOf(api, body) {
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
        if (b.type === 'tool_result') tool.push(hostsTextOf(b.content));
        else if (b.type === 'text' || b.type === 'input_text') user.push(b.text ?? '');
      }
    } else if (m.role === 'user') user.push(hostsTextOf(m.content));
  }
  // The user's own words: system reminders and Codex's context blocks are not what was typed.
  const typed = user.filter((t) => !/^\s*<(system-reminder|environment_context|user_instructions|skills_instructions|permissions|local-command-caveat|local-command-stdout|command-name|task-notification)/.test(t));
  const all = JSON.stringify(items);
  const cwd = /Primary working directory: ([^\\\n"]+)/.exec(all)?.[1] ?? /<cwd>([^<]+)<\/cwd>/.exec(all)?.[1] ?? '.';
  return { userText: typed.at(-1) ?? '', toolResult: tool.length ? tool.join('\n') : null, cwd, all };
}


/** Name of the last function call in a Responses request's input. */
function lastCallName(body) {
  const calls = (body.input ?? []).filter((m) => m.type === 'function_call');
  return calls.at(-1)?.name;
}

/** The Claude Code / Codex script (--script hosts). */
function decideHosts(api, body) {
  const { userText, toolResult, cwd, all } = hostsTailOf(api, body);
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


// ---------------------------------------------------------------------------------------------
// SSE answers, one per API. Each streams the whole answer but leaves ending the response to the
// caller (which records first, so a finished response implies a complete recording).
// Each returns {usage, simulation}.
// ---------------------------------------------------------------------------------------------

function startSse(res, n) {
  // --script hosts: `request-id` as the Anthropic API sends it (Claude Code stores it as requestId).
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...(HOSTS ? { 'request-id': `req_fake_${n}` } : {}) });
}

/** Split a string into n roughly equal pieces (to stream deltas). */
function pieces(s, n = 3) {
  const size = Math.max(1, Math.ceil(s.length / n));
  const out = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

const CREATED_BASE = 1767225600; // 2026-01-01T00:00:00Z; created = base + N (deterministic)

function answerChatCompletions(res, body, d, n) {
  const sim = simulateOpenAI(body, 'openai-completions');
  const base = { id: `chatcmpl-fake-${n}`, object: 'chat.completion.chunk', created: CREATED_BASE + n, model: body.model };
  const send = (o) => res.write(`data: ${JSON.stringify({ ...base, ...o })}\n\n`);
  startSse(res, n);
  send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  let output = '';
  for (const p of pieces(d.text ?? '')) {
    send({ choices: [{ index: 0, delta: { content: p }, finish_reason: null }] });
    output += p;
  }
  let finish = 'stop';
  if (d.kind === 'tool') {
    const argsJson = JSON.stringify(d.args);
    send({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: `call_fake_${n}`, type: 'function', function: { name: d.name, arguments: '' } }] }, finish_reason: null }] });
    for (const p of pieces(argsJson, 2)) send({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: p } }] }, finish_reason: null }] });
    output += argsJson;
    finish = 'tool_calls';
  }
  send({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  const completion = tokens(output) + 1;
  const usage = {
    prompt_tokens: sim.promptTokens,
    completion_tokens: completion,
    total_tokens: sim.promptTokens + completion,
    prompt_tokens_details: { cached_tokens: sim.cached },
  };
  send({ choices: [], usage });
  res.write('data: [DONE]\n\n');
  return { usage, simulation: sim };
}

function answerResponses(res, body, d, n) {
  const sim = simulateOpenAI(body, 'openai-responses');
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

function answerAnthropic(res, body, d, n) {
  const sim = simulateAnthropic(body);
  const send = (type, o) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`);
  startSse(res, n);
  const startUsage = {
    input_tokens: sim.input + (d.padInput ?? 0),
    cache_creation_input_tokens: sim.cacheWrite,
    cache_read_input_tokens: sim.cacheRead,
    output_tokens: 1,
  };
  // --script hosts: the TTL split of the write, as the API reports it.
  if (HOSTS) startUsage.cache_creation = { ephemeral_5m_input_tokens: sim.ttl === 3600 ? 0 : sim.cacheWrite, ephemeral_1h_input_tokens: sim.ttl === 3600 ? sim.cacheWrite : 0 };
  const message = { id: `msg_fake_${n}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage };
  const diagnostics = HOSTS ? anthropicDiagnostics(body, sim) : null;
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

function answer500(res, api) {
  const message = 'fake provider: scripted 500 Internal server error';
  const body =
    api === 'anthropic-messages'
      ? { type: 'error', error: { type: 'api_error', message } }
      : { error: { message, type: 'server_error', code: null } };
  res.writeHead(500, { 'content-type': 'application/json' });
  res.write(JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

const ROUTES = {
  '/v1/chat/completions': ['openai-completions', answerChatCompletions],
  '/v1/responses': ['openai-responses', answerResponses],
  '/v1/messages': ['anthropic-messages', answerAnthropic],
};
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'proxy-authorization', 'cookie'];

let counter = 0;

function redact(headers) {
  const out = { ...headers };
  for (const k of CREDENTIAL_HEADERS) if (out[k] !== undefined) out[k] = `<redacted:${String(out[k]).length} chars>`;
  return out;
}

function handle(req, raw, res) {
  const receivedAt = new Date().toISOString();
  const path = req.url.split('?')[0];
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
    // Claude Code counts tokens before some calls: answered, not recorded.
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
  const route = ROUTES[path];
  if (req.method !== 'POST' || !route) {
    appendFileSync(join(OUT, 'unrouted.log'), `${receivedAt} ${req.method} ${req.url}\n`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `fake provider: no route ${req.method} ${req.url}` } }));
    return;
  }
  const n = ++counter;
  const [api, answer] = route;
  const name = `${String(n).padStart(3, '0')}-${api}`;
  writeFileSync(join(OUT, `${name}.body.json`), raw); // exact bytes as received

  let body;
  try {
    body = JSON.parse(neutral(raw.toString('utf8')));
  } catch (e) {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `fake provider: body is not JSON: ${e.message}` } }));
    appendFileSync(join(OUT, 'index.ndjson'), `${JSON.stringify({ n, file: `${name}.body.json`, api, status: 400, error: 'invalid JSON' })}\n`);
    return;
  }
  const decision = decide(api, body);
  let status = 200;
  let usage = null;
  let simulation = null;
  if (decision.kind === 'http-500') {
    status = 500;
    answer500(res, api);
  } else {
    ({ usage, simulation } = answer(res, body, decision, n));
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
    ...(HOSTS ? { responseId: status === 200 ? (api === 'anthropic-messages' ? `msg_fake_${n}` : `resp_fake_${n}`) : null } : {}),
    usage,
    usageIsSynthetic: true,
    usageNote: USAGE_NOTE,
    simulation,
  };
  writeFileSync(join(OUT, `${name}.meta.json`), `${JSON.stringify(meta, null, 2)}\n`);
  const line = { n, file: `${name}.body.json`, api, model: body.model, status, bytes: raw.length, sha256: meta.bodySha256, decision: decision.kind, ...(HOSTS ? { responseId: meta.responseId } : {}), usage };
  appendFileSync(join(OUT, 'index.ndjson'), `${JSON.stringify(line)}\n`);
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
  const { port } = server.address();
  writeFileSync(args['port-file'], String(port));
  console.log(`fake provider listening on http://127.0.0.1:${port} (out: ${OUT})`);
});

for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
