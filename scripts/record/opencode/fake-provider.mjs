// Scripted LLM provider on 127.0.0.1 for recording OpenCode fixtures (scripts/record/record-opencode.sh).
// Not (yet) the shared scripts/record/fake-provider.mjs: its file names (`NNN-<kind>`), meta
// (`kind`, raw `headers` with `x-session-id`) and synthetic usage (this file's own cache
// simulation) are what test/fixtures/opencode and the exact values of its tests were recorded
// with; moving means a shared `--script opencode` with this naming and simulation, then
// re-recording both OpenCode fixtures and re-deriving those values.
//
//   POST /v1/chat/completions   OpenAI Chat Completions (what @ai-sdk/openai-compatible sends), SSE
//   POST /v1/messages           Anthropic Messages (what @ai-sdk/anthropic sends), SSE
//   GET  /health                readiness probe
//
// Every model request is saved to $REQ_DIR as
//   NNN-<kind>.body.json   the request body, byte for byte as received (kind: agent | title | summary)
//   NNN-<kind>.meta.json   {seq, kind, api, method, url, headers (secrets redacted), reply, usage, synthetic}
//
// Replies are scripted from the newest user text: `READ_FILE <path>` → a `read` tool call,
// `SUBTASK` → a `task` tool call (child session), `BIGUSAGE` → a text reply that reports a
// prompt near the context limit (OpenCode then compacts), anything else → a short text reply.
// After a tool result the reply is text. Title and summary (compaction) requests are recognized
// by OpenCode's system prompts and answered with a fixed title / summary.
//
// USAGE NUMBERS ARE SYNTHETIC. They come from a small prefix-cache simulation, not from a
// provider: tokens = ceil(UTF-8 bytes / 4);
//   OpenAI-style: cached_tokens = longest common prefix (tools JSON + messages JSON) with any
//     earlier request of the same model, in 128-token steps, 0 below 1024 tokens;
//   Anthropic-style: a cache entry is written at every cache_control breakpoint; a read is the
//     longest entry found at a breakpoint or up to 20 blocks before it (tools → system → messages).
// Env: PORT (0 = any free port), PORT_FILE (written with the port once listening), REQ_DIR,
//      BIG_PROMPT_TOKENS (default 195000).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

const REQ_DIR = path.resolve(process.env.REQ_DIR || 'requests');
const BIG_PROMPT_TOKENS = Number(process.env.BIG_PROMPT_TOKENS || 195000);
fs.mkdirSync(REQ_DIR, { recursive: true });
let seq = 0;

const tok = (s) => Math.ceil(Buffer.byteLength(s, 'utf8') / 4);
const sha = (s) => crypto.createHash('sha256').update(s).digest('hex').slice(0, 16);
const PHUX = /<phux-context[\s\S]*?<\/phux-context>/g;

function textOf(content) {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((c) => (typeof c === 'string' ? c : c.type === 'text' ? c.text : c.type === 'tool_result' ? textOf(c.content) : ''))
      .join('\n');
  }
  return '';
}

function classify(systemText) {
  if (systemText.includes('You are a title generator')) return 'title';
  if (systemText.includes('context summarization agent')) return 'summary';
  return 'agent';
}

/** The scripted answer: {text} or {tool: {name, args}}; `big` reports a huge prompt. */
function script(kind, lastIsToolResult, userText, nAssistant) {
  if (kind === 'title') return { text: `Recorded: ${userText.replace(PHUX, '').replace(/["\s]+/g, ' ').trim().split(' ').slice(0, 4).join(' ')}` };
  if (kind === 'summary') {
    return {
      text: '## Goal\n- Exercise OpenCode against a scripted provider (SYNTHETIC summary)\n\n## Progress\n- Read notes.txt\n\n## Next steps\n- Continue with the next turn',
    };
  }
  if (lastIsToolResult) return { text: `Done with the tool result (scripted reply ${nAssistant}).` };
  const text = userText.replace(PHUX, ' ');
  const read = text.match(/READ_FILE\s+(\S+)/);
  if (read) return { tool: { name: 'read', args: { filePath: read[1] } } };
  if (text.includes('SUBTASK')) {
    return { tool: { name: 'task', args: { description: 'Scripted subtask', prompt: 'Subagent: say hello (no tools needed)', subagent_type: 'general' } } };
  }
  if (text.includes('BIGUSAGE')) return { text: `Acknowledged (scripted reply ${nAssistant}, reporting a prompt near the context limit).`, big: true };
  return { text: `Scripted reply ${nAssistant}: ${text.replace(/\s+/g, ' ').trim().slice(0, 60)}` };
}

function save(kind, api, req, raw, extra) {
  seq += 1;
  const base = `${String(seq).padStart(3, '0')}-${kind}`;
  const headers = { ...req.headers };
  for (const k of Object.keys(headers)) if (/^(authorization|x-api-key|api-key|cookie)$/i.test(k)) headers[k] = '<redacted>';
  if (headers.host) headers.host = '127.0.0.1:<port>';
  fs.writeFileSync(path.join(REQ_DIR, `${base}.body.json`), raw);
  fs.writeFileSync(
    path.join(REQ_DIR, `${base}.meta.json`),
    JSON.stringify({ seq, kind, api, method: req.method, url: req.url, headers, synthetic: 'usage numbers are SYNTHETIC (fake-provider.mjs prefix-cache simulation)', ...extra }, null, 2) + '\n',
  );
  return base;
}

// ---------------- OpenAI Chat Completions ----------------
const openaiHistory = new Map(); // model -> canonical prefix strings of earlier requests
function lcp(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function handleOpenAI(req, res, raw, body) {
  const msgs = body.messages ?? [];
  const systemText = msgs.filter((m) => m.role === 'system').map((m) => textOf(m.content)).join('\n');
  const kind = classify(systemText);
  const last = msgs[msgs.length - 1] ?? {};
  const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
  const nAssistant = msgs.filter((m) => m.role === 'assistant').length + 1;
  const reply = script(kind, last.role === 'tool', textOf(lastUser?.content), nAssistant);

  const canonical = JSON.stringify(body.tools ?? []) + JSON.stringify(msgs);
  const prev = openaiHistory.get(body.model) ?? [];
  let best = 0;
  for (const p of prev) best = Math.max(best, lcp(p, canonical));
  openaiHistory.set(body.model, [...prev, canonical]);
  const promptTokens = reply.big ? BIG_PROMPT_TOKENS : tok(canonical);
  const sharedTokens = tok(canonical.slice(0, best));
  const cached = sharedTokens >= 1024 ? Math.floor(sharedTokens / 128) * 128 : 0;
  const outText = reply.text ?? JSON.stringify(reply.tool.args);
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: tok(outText) + 3,
    total_tokens: promptTokens + tok(outText) + 3,
    prompt_tokens_details: { cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  const name = save(kind, 'openai-completions', req, raw, { reply, usage });
  console.log(`[${name}] openai model=${body.model} msgs=${msgs.length} tools=${(body.tools ?? []).length} prompt=${promptTokens} cached=${cached} -> ${reply.tool ? 'tool ' + reply.tool.name : 'text'}`);

  const id = 'chatcmpl-' + sha(String(seq));
  const created = 1_800_000_000;
  const chunk = (delta, finish = null) => ({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
  send(chunk({ role: 'assistant', content: '' }));
  if (reply.tool) {
    const args = JSON.stringify(reply.tool.args);
    send(chunk({ tool_calls: [{ index: 0, id: 'call_' + sha('tc' + seq), type: 'function', function: { name: reply.tool.name, arguments: '' } }] }));
    send(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 10) } }] }));
    send(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(10) } }] }));
    send(chunk({}, 'tool_calls'));
  } else {
    for (const w of reply.text.match(/\S+\s*/g) ?? [reply.text]) send(chunk({ content: w }));
    send(chunk({}, 'stop'));
  }
  send({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

// ---------------- Anthropic Messages ----------------
function anthropicBlocks(body) {
  const strip = (o) => JSON.stringify({ ...o, cache_control: undefined });
  const blocks = [];
  for (const t of body.tools ?? []) blocks.push({ s: strip(t), bp: !!t.cache_control });
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : body.system ?? [];
  for (const s of system) blocks.push({ s: strip(s), bp: !!s.cache_control });
  for (const m of body.messages ?? []) {
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    blocks.push({ s: `<${m.role}>`, bp: false });
    for (const c of content) blocks.push({ s: strip(c), bp: !!c.cache_control });
  }
  return blocks;
}
const anthropicCache = new Map(); // model + prefix hash -> prefix tokens
function simulateAnthropic(body) {
  let acc = '';
  const bounds = anthropicBlocks(body).map((b) => {
    acc += b.s;
    return { tokens: tok(acc), key: sha(body.model + '\0' + acc), bp: b.bp };
  });
  const total = tok(acc);
  let read = 0;
  bounds.forEach((b, i) => {
    if (!b.bp) return;
    for (let j = i; j >= 0 && j >= i - 20; j--) {
      if (anthropicCache.has(bounds[j].key)) {
        read = Math.max(read, bounds[j].tokens);
        break;
      }
    }
  });
  const bps = bounds.filter((b) => b.bp);
  const lastBp = bps.length ? bps[bps.length - 1].tokens : 0;
  for (const b of bps) anthropicCache.set(b.key, b.tokens);
  return {
    input_tokens: total - Math.max(read, lastBp),
    cache_creation_input_tokens: Math.max(0, lastBp - read),
    cache_read_input_tokens: read,
  };
}

function handleAnthropic(req, res, raw, body) {
  const msgs = body.messages ?? [];
  const systemText = typeof body.system === 'string' ? body.system : (body.system ?? []).map((s) => s.text).join('\n');
  const kind = classify(systemText);
  const isToolResult = (m) => Array.isArray(m?.content) && m.content.some((c) => c.type === 'tool_result');
  const last = msgs[msgs.length - 1];
  const lastUser = [...msgs].reverse().find((m) => m.role === 'user' && !isToolResult(m));
  const nAssistant = msgs.filter((m) => m.role === 'assistant').length + 1;
  const reply = script(kind, isToolResult(last), textOf(lastUser?.content), nAssistant);
  const u = simulateAnthropic(body);
  if (reply.big) u.input_tokens = BIG_PROMPT_TOKENS - u.cache_read_input_tokens - u.cache_creation_input_tokens;
  const outputTokens = tok(reply.text ?? JSON.stringify(reply.tool.args)) + 3;
  const name = save(kind, 'anthropic-messages', req, raw, { reply, usage: { ...u, output_tokens: outputTokens } });
  console.log(`[${name}] anthropic model=${body.model} msgs=${msgs.length} tools=${(body.tools ?? []).length} usage=${JSON.stringify(u)} -> ${reply.tool ? 'tool ' + reply.tool.name : 'text'}`);

  const id = 'msg_' + sha('m' + seq);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('message_start', { message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...u, output_tokens: 1 } } });
  if (reply.tool) {
    const args = JSON.stringify(reply.tool.args);
    ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_' + sha('t' + seq), name: reply.tool.name, input: {} } });
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(0, 10) } });
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(10) } });
    ev('content_block_stop', { index: 0 });
    ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: outputTokens } });
  } else {
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (const w of reply.text.match(/\S+\s*/g) ?? [reply.text]) ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: w } });
    ev('content_block_stop', { index: 0 });
    ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } });
  }
  ev('message_stop', {});
  res.end();
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    try {
      if (req.method === 'GET' && req.url === '/health') {
        res.writeHead(200);
        return res.end('ok');
      }
      const body = raw.length ? JSON.parse(raw.toString('utf8')) : {};
      if (req.method === 'POST' && req.url.endsWith('/chat/completions')) return handleOpenAI(req, res, raw, body);
      if (req.method === 'POST' && req.url.endsWith('/messages')) return handleAnthropic(req, res, raw, body);
      console.log(`unhandled ${req.method} ${req.url}`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not found' } }));
    } catch (e) {
      console.error(e);
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(e) } }));
    }
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  if (process.env.PORT_FILE) fs.writeFileSync(process.env.PORT_FILE, String(port));
  console.log(`fake provider on http://127.0.0.1:${port}, saving to ${REQ_DIR}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
