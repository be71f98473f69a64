/**
 * OpenCode stored session → normalized Session (reconstructed mode).
 *
 * Requests: one per agent-loop step. OpenCode 1.18 writes one assistant message per step (one
 * `step-start` … `step-finish`), so one request per assistant message; older versions could put
 * several steps in one message, each step is then its own request. Title requests store nothing
 * but `session.title` (they exist only in wire mode); compaction summaries are assistant messages
 * with `summary: true` / `mode: "compaction"` (kind `summary`); the assistant message created for a
 * `subtask` part has no step and no request (reference/opencode.md §1.3).
 *
 * Messages of a request are rebuilt the way 1.18.33 builds them (strings of the binary,
 * reference §2.2): `MessageV2.filterCompacted` [bin `H6`], `MessageV2.toModelMessages` [bin `$6`],
 * AI SDK `convertToModelMessages` (a `step-start` splits an assistant message into an assistant
 * message + a tool message per step), then the provider's converter: `@ai-sdk/openai-compatible`
 * `convertToOpenAICompatibleChatMessages` (single text → string content; assistant text joined,
 * `tool_calls`; one `tool` message per result) or `@ai-sdk/anthropic` `convertToAnthropicMessagesPrompt`
 * (consecutive user/tool messages merged into one user message, `tool_result` blocks), with
 * OpenCode's `ProviderTransform.message` for Anthropic (empty text dropped, tool ids sanitized).
 * The list has the items of the real body's messages segment in the same order, with the body's
 * key order, so a block index here equals the wire block index (system messages excluded).
 * The head (system prompt + tools) is not stored: every chain starts with one opaque head block,
 * one node per session, except that a user message's optional `system` text, which OpenCode
 * appends to the system prompt of the requests of that turn (reference/opencode.md §2.1), gives
 * those requests a head of their own that carries the text.
 */
import { append, blockWithBreakpoint, type BlockNode } from '../../core/chain.js';
import type { Block, Diagnostic, LlmRequest, Session, TranscriptEvent, Usage } from '../../core/model.js';
import { bump, ownGet } from '../../core/own.js';
import { messageBlocks, opaqueHeadBlock } from '../../core/wire.js';
import { findContextMessages } from '../../phux/context.js';
import type { AssistantInfo, Part, TextPart, Tokens } from './schema.js';
import { countOr } from '../numbers.js';
import type { StoredMessage, StoredSession } from './read.js';

/** Note carried by every reconstructed request. */
export const HEAD_NOTE = 'head opaque: OpenCode does not store the system prompt or tools; one opaque head block stands for them';
/** `Block.origin` of a head that carries the turn's user-message `system` text (appended to the system prompt). */
export const USER_SYSTEM_ORIGIN = 'user-system';
/** OpenCode's fixed texts ([bin] `MessageV2.toModelMessages`). */
export const COMPACTION_PROMPT_TEXT = 'What did we do so far?';
export const SUBTASK_TEXT = 'The following tool was executed by the user';
export const CLEARED_TOOL_OUTPUT = '[Old tool result content cleared]';
export const INTERRUPTED_TOOL = '[Tool execution was interrupted]';

/** Wire APIs the reconstruction encodes for. */
export type OpenCodeApi = 'anthropic-messages' | 'openai-completions' | 'openai-responses';

/** A model-message content part (AI SDK `ModelMessage` parts), with what it was built from. */
type MPart =
  | { type: 'text'; text: string; origin?: string }
  | { type: 'reasoning'; text: string; signature?: string; redacted?: string }
  | { type: 'file'; mediaType: string; url: string; filename?: string }
  | { type: 'tool-call'; id: string; name: string; input: unknown }
  | { type: 'tool-result'; id: string; name: string; value: string; error: boolean };

interface MMsg {
  role: 'user' | 'assistant' | 'tool';
  content: MPart[];
  /** Origin of parts that carry none (e.g. the compaction summary). */
  origin?: string;
}

/** A wire message object plus the origin of each content element (or of the whole message). */
interface Encoded {
  obj: Record<string, unknown>;
  origins: Array<string | undefined>;
}

// ------------------------------------------------------------------------------------------ history

/**
 * `MessageV2.filterCompacted` [bin `H6`]: the messages a request sees after the last completed
 * compaction — `[compaction user, summary, (tail kept verbatim), newer…]`.
 * @param history messages in stored order; only `history[0..end)` is used
 * @param partial a message after them (an assistant message cut before a later step)
 */
export function filterCompacted(history: StoredMessage[], end = history.length, partial?: StoredMessage): StoredMessage[] {
  const out: StoredMessage[] = [];
  const completed = new Set<string>();
  let tailId: string | undefined;
  for (let i = partial ? end : end - 1; i >= 0; i--) {
    const m = i === end ? partial! : history[i];
    out.push(m);
    if (tailId) {
      if (m.id === tailId) break;
      continue;
    }
    if (m.info.role === 'user' && completed.has(m.id)) {
      const c = m.parts.find((p) => p.part.type === 'compaction');
      if (!c) continue;
      const tail = c.part.type === 'compaction' ? c.part.tail_start_id : undefined;
      if (!tail) break;
      tailId = tail;
      if (m.id === tailId) break;
      continue;
    }
    if (m.info.role === 'assistant' && m.info.summary && m.info.finish && !m.info.error && m.info.parentID) completed.add(m.info.parentID);
  }
  out.reverse();
  const w = findLastIndex(out, (m) => m.info.role === 'user' && m.parts.some((p) => p.part.type === 'compaction' && p.part.tail_start_id !== undefined));
  if (w < 0) return out;
  const h = out[w];
  const cp = h.parts.find((p) => p.part.type === 'compaction')!.part;
  const j = out.findIndex((m, k) => k > w && m.info.role === 'assistant' && m.info.summary === true && m.info.parentID === h.id);
  const v = cp.type === 'compaction' && cp.tail_start_id ? out.findIndex((m) => m.id === cp.tail_start_id) : -1;
  if (v >= 0 && v < w && j > w) return [...out.slice(w, j + 1), ...out.slice(v, w), ...out.slice(j + 1)];
  return out;
}

function findLastIndex<T>(xs: T[], f: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (f(xs[i])) return i;
  return -1;
}

/** True for a phux context part: V1 metadata, or a synthetic text holding a context message. */
export function isPhuxPart(p: Part): p is TextPart {
  if (p.type !== 'text') return false;
  if (p.metadata && 'phuxContext' in p.metadata) return true;
  return p.synthetic === true && findContextMessages(p.text).length > 0;
}

/**
 * `MessageV2.toModelMessages` [bin `$6`] + AI SDK `convertToModelMessages`.
 * @param current provider/model of the request (reasoning of other models becomes text)
 */
export function toModelMessages(msgs: StoredMessage[], current: { providerID: string; modelID: string }): MMsg[] {
  const out: MMsg[] = [];
  for (const m of msgs) {
    if (m.parts.length === 0) continue;
    if (m.info.role === 'user') {
      const content: MPart[] = [];
      for (const { part: p } of m.parts) {
        if (p.type === 'text' && !p.ignored && p.text !== '') content.push({ type: 'text', text: p.text, origin: isPhuxPart(p) ? 'phux-context' : undefined });
        if (p.type === 'file' && p.mime !== 'text/plain' && p.mime !== 'application/x-directory') {
          content.push({ type: 'file', mediaType: p.mime, url: p.url, filename: p.filename });
        }
        if (p.type === 'compaction') content.push({ type: 'text', text: COMPACTION_PROMPT_TEXT, origin: 'compaction-summary' });
        if (p.type === 'subtask') content.push({ type: 'text', text: SUBTASK_TEXT });
      }
      if (content.length) out.push({ role: 'user', content });
      continue;
    }
    const info = m.info;
    const aborted = info.error?.name === 'MessageAbortedError' && m.parts.some((p) => p.part.type !== 'step-start' && p.part.type !== 'reasoning');
    if (info.error && !aborted) continue;
    const changed = `${current.providerID}/${current.modelID}` !== `${info.providerID}/${info.modelID}`;
    const signed = m.parts.some((p) => p.part.type === 'reasoning' && anthropicMeta(p.part.metadata)?.signature != null);
    // UI parts, split into steps at each step-start (AI SDK convertToModelMessages).
    const steps: MPart[][] = [[]];
    const origin = info.summary ? 'compaction-summary' : undefined;
    for (const { part: p } of m.parts) {
      const cur = steps[steps.length - 1];
      if (p.type === 'step-start') {
        if (cur.length) steps.push([]);
      } else if (p.type === 'text') {
        cur.push({ type: 'text', text: p.text === '' && signed ? ' ' : p.text, origin });
      } else if (p.type === 'reasoning') {
        if (changed) {
          if (p.text.trim().length > 0) cur.push({ type: 'text', text: p.text, origin });
        } else {
          const meta = anthropicMeta(p.metadata);
          cur.push({ type: 'reasoning', text: p.text, signature: str(meta?.signature), redacted: str(meta?.redactedData) });
        }
      } else if (p.type === 'tool') {
        const s = p.state;
        cur.push({ type: 'tool-call', id: p.callID, name: p.tool, input: s.input ?? {} });
        if (s.status === 'completed') {
          cur.push({ type: 'tool-result', id: p.callID, name: p.tool, value: s.time?.compacted ? CLEARED_TOOL_OUTPUT : (s.output ?? ''), error: false });
        } else if (s.status === 'error') {
          const interrupted = s.metadata?.interrupted === true && typeof s.metadata.output === 'string' ? s.metadata.output : undefined;
          cur.push({ type: 'tool-result', id: p.callID, name: p.tool, value: interrupted ?? s.error ?? '', error: interrupted === undefined });
        } else {
          cur.push({ type: 'tool-result', id: p.callID, name: p.tool, value: INTERRUPTED_TOOL, error: true });
        }
      }
    }
    for (const step of steps) {
      if (!step.length) continue;
      const content = step.filter((x) => x.type !== 'tool-result');
      const results = step.filter((x) => x.type === 'tool-result');
      out.push({ role: 'assistant', content, origin });
      if (results.length) out.push({ role: 'tool', content: results });
    }
  }
  return out;
}

function anthropicMeta(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const a = meta?.anthropic;
  return a && typeof a === 'object' ? (a as Record<string, unknown>) : undefined;
}
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

// ------------------------------------------------------------------------------------------ encoders

/** `@ai-sdk/openai-compatible` `convertToOpenAICompatibleChatMessages` (1.18.33 bundle). */
function encodeCompletions(msgs: MMsg[]): Encoded[] {
  const out: Encoded[] = [];
  for (const m of msgs) {
    if (m.role === 'user') {
      const only = m.content.length === 1 && m.content[0].type === 'text' ? m.content[0] : undefined;
      if (only && only.type === 'text') {
        out.push({ obj: { role: 'user', content: only.text }, origins: [only.origin ?? m.origin] });
        continue;
      }
      const content = m.content.map((c) => {
        if (c.type === 'text') return { type: 'text', text: c.text };
        if (c.type === 'file' && c.mediaType.startsWith('image/')) return { type: 'image_url', image_url: { url: c.url } };
        if (c.type === 'file') return { type: 'file', file: { filename: c.filename ?? 'document', file_data: c.url } };
        return { type: 'text', text: '' };
      });
      out.push({ obj: { role: 'user', content }, origins: m.content.map((c) => ('origin' in c ? c.origin : undefined) ?? m.origin) });
    } else if (m.role === 'assistant') {
      let text = '';
      let reasoning = '';
      const calls: unknown[] = [];
      for (const c of m.content) {
        if (c.type === 'text') text += c.text;
        else if (c.type === 'reasoning') reasoning += c.text;
        else if (c.type === 'tool-call') calls.push({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } });
      }
      const obj: Record<string, unknown> = { role: 'assistant', content: text };
      if (reasoning.length > 0) obj.reasoning_content = reasoning;
      if (calls.length) obj.tool_calls = calls;
      out.push({ obj, origins: [m.origin ?? firstOrigin(m)] });
    } else {
      for (const c of m.content) if (c.type === 'tool-result') out.push({ obj: { role: 'tool', tool_call_id: c.id, content: c.value }, origins: [undefined] });
    }
  }
  return out;
}

/** `@ai-sdk/anthropic` `convertToAnthropicMessagesPrompt` after OpenCode's `ProviderTransform.message`. */
/** OpenCode's `ProviderTransform.message` for Anthropic: empty text/reasoning parts, then empty messages, dropped. */
function dropEmpty(msgs: MMsg[]): MMsg[] {
  return msgs
    .map((m) => ({ ...m, content: m.content.filter((c) => !((c.type === 'text' || c.type === 'reasoning') && c.text === '')) }))
    .filter((m) => m.content.length > 0);
}

/** Anthropic groups consecutive messages of one side: `assistant`, or `user` (user + tool results). */
const side = (m: MMsg) => (m.role === 'assistant' ? 'assistant' : 'user');

function encodeAnthropic(msgs: MMsg[]): Encoded[] {
  const sanitizeId = (id: string) => id.replace(/[^a-zA-Z0-9_-]/g, '_');
  const kept = dropEmpty(msgs);
  const out: Encoded[] = [];
  let group: { role: 'user' | 'assistant'; content: unknown[]; origins: Array<string | undefined> } | null = null;
  const flush = () => {
    if (group && group.content.length) out.push({ obj: { role: group.role, content: group.content }, origins: group.origins });
    group = null;
  };
  kept.forEach((m, mi) => {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    if (!group || group.role !== role) {
      flush();
      group = { role, content: [], origins: [] };
    }
    const g = group!;
    m.content.forEach((c, ci) => {
      const origin = ('origin' in c ? c.origin : undefined) ?? m.origin;
      let block: Record<string, unknown> | undefined;
      if (c.type === 'text') {
        const lastOfPrompt = role === 'assistant' && mi === kept.length - 1 && ci === m.content.length - 1;
        block = { type: 'text', text: lastOfPrompt ? c.text.trim() : c.text };
      } else if (c.type === 'file') {
        block = c.mediaType.startsWith('image/')
          ? { type: 'image', source: { type: 'url', url: c.url } }
          : { type: 'document', source: { type: 'url', url: c.url }, title: c.filename };
      } else if (c.type === 'reasoning') {
        if (c.signature != null) block = { type: 'thinking', thinking: c.text, signature: c.signature };
        else if (c.redacted != null) block = { type: 'redacted_thinking', data: c.redacted };
      } else if (c.type === 'tool-call') {
        block = { type: 'tool_use', id: sanitizeId(c.id), name: c.name, input: c.input };
      } else if (c.type === 'tool-result') {
        block = { type: 'tool_result', tool_use_id: sanitizeId(c.id), content: c.value };
        if (c.error) block.is_error = true;
      }
      if (block) {
        g.content.push(block);
        g.origins.push(origin);
      }
    });
  });
  flush();
  return out;
}

/** `@ai-sdk/openai` Responses input items (approximate: OpenCode + OpenAI Responses was not recorded). */
function encodeResponses(msgs: MMsg[]): Encoded[] {
  const out: Encoded[] = [];
  for (const m of msgs) {
    if (m.role === 'user') {
      const content = m.content.map((c) =>
        c.type === 'text' ? { type: 'input_text', text: c.text } : c.type === 'file' ? { type: 'input_image', image_url: c.type === 'file' ? c.url : '' } : { type: 'input_text', text: '' },
      );
      out.push({ obj: { role: 'user', content }, origins: m.content.map((c) => ('origin' in c ? c.origin : undefined) ?? m.origin) });
    } else if (m.role === 'assistant') {
      for (const c of m.content) {
        if (c.type === 'text') out.push({ obj: { role: 'assistant', content: [{ type: 'output_text', text: c.text }] }, origins: [c.origin ?? m.origin] });
        else if (c.type === 'tool-call') out.push({ obj: { type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.input) }, origins: [undefined] });
      }
    } else {
      for (const c of m.content) if (c.type === 'tool-result') out.push({ obj: { type: 'function_call_output', call_id: c.id, output: c.value }, origins: [undefined] });
    }
  }
  return out;
}

function firstOrigin(m: MMsg): string | undefined {
  for (const c of m.content) if ('origin' in c && c.origin) return c.origin;
  return undefined;
}

/** Encodes model messages for an API. */
export function encodeMessages(api: OpenCodeApi, msgs: MMsg[]): Encoded[] {
  if (api === 'anthropic-messages') return encodeAnthropic(msgs);
  if (api === 'openai-responses') return encodeResponses(msgs);
  return encodeCompletions(msgs);
}

/**
 * Message blocks of an encoded list. `item` = index in the messages segment (system messages
 * excluded, as in wire mode); `path` assumes OpenCode's single system message for Chat
 * Completions / Responses (a plugin that pushes more system entries shifts the real path).
 */
export function itemBlocks(api: OpenCodeApi, encoded: Encoded[], firstItem = 0): Block[][] {
  const key = api === 'openai-responses' ? 'input' : 'messages';
  const offset = api === 'anthropic-messages' ? 0 : 1;
  return encoded.map((e, k) => {
    const i = firstItem + k;
    const blocks = messageBlocks(i, `${key}[${i + offset}]`, e.obj);
    blocks.forEach((b, j) => {
      const o = e.origins.length === blocks.length ? e.origins[j] : e.origins.find((x) => x);
      if (o) b.origin = o;
    });
    return blocks;
  });
}

// ------------------------------------------------------------------------------------------ usage

/**
 * OpenCode `tokens` → Usage. OpenCode 1.18 stores `input` without cached tokens for every
 * provider (openai-compatible: `prompt_tokens − cached_tokens`; Anthropic: `input_tokens`;
 * reference §1.3), and `total = input + output + reasoning + cache.read + cache.write`. When a
 * stored `total` shows that `input` still contains the cache (older versions), it is subtracted.
 * `output` includes reasoning tokens (both are billed as output).
 */
export function usageOf(t: Tokens): Usage {
  // A count that was not one is null (numbers.ts checkHostValues): unknown, and so is what is derived from it.
  const read = t.cache ? t.cache.read : 0;
  const write = t.cache ? t.cache.write : 0;
  const reasoning = countOr(t.reasoning);
  const output = t.output === null || reasoning === null ? null : t.output + reasoning;
  let uncached = t.input;
  if (typeof t.total === 'number' && uncached !== null && read !== null && write !== null && output !== null && read + write > 0 && t.total === uncached + output && uncached >= read + write) {
    uncached = uncached - read - write;
  }
  return { uncached, cacheRead: read, cacheWrite: write, output };
}

// ------------------------------------------------------------------------------------------ session

/** Options of the normalization. */
export interface NormalizeOptions {
  /** Wire API per provider id (from `inferApis` or the caller). */
  apis: Map<string, OpenCodeApi>;
}

/** A reconstructed request plus what wire matching needs. */
export interface ReconRequest {
  request: LlmRequest;
  /** The assistant message of the request (ordinal = its line). */
  message: StoredMessage;
  /** Messages-segment items of the reconstruction. */
  messages: number;
}

/** The reconstruction of one session. */
export interface Reconstruction {
  session: Session;
  requests: ReconRequest[];
}

/** Reconstructs one stored session. */
export function normalizeSession(s: StoredSession, opts: NormalizeOptions): Reconstruction {
  const diagnostics: Diagnostic[] = [...s.diagnostics];
  const ignored: Record<string, number> = { ...s.ignored };
  // Heads by the user message's `system` text ('' = none) and whether they carry the breakpoint
  // OpenCode puts on the system prompt for Anthropic models.
  const heads = new Map<string, BlockNode>();
  const headFor = (system: string, marked: boolean): BlockNode => {
    const key = `${marked ? 1 : 0}${system}`;
    let h = heads.get(key);
    if (!h) {
      const block: Block = system ? { ...opaqueHeadBlock(`opencode:head\nuser.system: ${system}`), origin: USER_SYSTEM_ORIGIN } : opaqueHeadBlock('opencode:head');
      if (marked) block.breakpoint = { ttlSeconds: 300 };
      heads.set(key, (h = append(null, block)));
    }
    return h;
  };
  const summaryHead = append(null, opaqueHeadBlock('opencode:head:compaction-agent'));
  const byId = new Map(s.messages.map((x) => [x.id, x]));
  const encoders = new Map<string, EncState>();
  let history: History = { list: [], end: 0, version: 0 };
  const recon: ReconRequest[] = [];
  const source = (m: StoredMessage) =>
    s.format === 'sqlite' ? { file: s.file, line: 0, row: m.row } : { file: m.row, line: 1, row: `message:${m.id}` };

  s.messages.forEach((m, pos) => {
    if (m.info.role !== 'assistant') return;
    const info = m.info;
    const starts = m.parts.map((p, i) => (p.part.type === 'step-start' ? i : -1)).filter((i) => i >= 0);
    const kind: LlmRequest['kind'] = info.summary || info.mode === 'compaction' || info.agent === 'compaction' ? 'summary' : 'agent';
    const tk = info.tokens;
    // A count that was not one (null) is not 0: its usage is unknown, the request kept.
    const hasTokens = tk !== undefined && [tk.input, tk.output, tk.cache ? tk.cache.read : 0, tk.cache ? tk.cache.write : 0].some((n) => n !== 0);
    if (starts.length === 0 && !info.error && !hasTokens) {
      bump(ignored, 'assistant:no-step');
      return;
    }
    const steps = Math.max(1, starts.length);
    const api = opts.apis.get(info.providerID) ?? 'openai-completions';
    for (let k = 0; k < steps; k++) {
      const usage = stepUsage(m, starts, k);
      const notes = [HEAD_NOTE];
      if (!opts.apis.has(info.providerID)) notes.push(`api of provider \`${info.providerID}\` unknown: encoded as openai-completions`);
      let tail: BlockNode;
      let items = 0;
      if (kind === 'summary') {
        const summarized = filterCompacted(s.messages.slice(0, Math.max(0, pos - 1)));
        const block = messageBlocks(0, api === 'anthropic-messages' ? 'messages[0]' : 'messages[1]', {
          role: 'user',
          content: `(compaction prompt over ${summarized.length} message(s): ${summarized.map((x) => x.id).join(' ')})`,
        })[0];
        tail = append(summaryHead, block);
        items = 1;
        notes.push('summary request: OpenCode builds the compaction prompt from the conversation and stores none of it; its message stands for it');
      } else {
        // The turn's user message (the assistant's parent) may carry extra system text.
        const parent = info.parentID !== undefined ? byId.get(info.parentID) : undefined;
        const system = parent?.info.role === 'user' && typeof parent.info.system === 'string' ? parent.info.system : '';
        const key = `${api}\u0000${info.providerID}/${info.modelID}\u0000${system}`;
        history = advance(history, s.messages, pos);
        const partial = k > 0 ? { ...m, parts: m.parts.slice(0, starts[k]) } : undefined;
        const anthropic = api === 'anthropic-messages';
        const state = encodeIncremental(encoders.get(key), headFor(system, anthropic), api, info, history, partial);
        encoders.set(key, state);
        items = state.itemCount;
        tail = state.nodeBefore[state.itemCount];
        if (anthropic) tail = markLastMessages(tail, 2);
      }
      const request: LlmRequest = {
        index: 0,
        source: source(m),
        provider: info.providerID,
        model: info.modelID,
        api,
        kind,
        timeMs: info.time.created,
        evidence: 'reconstructed',
        usage: info.error && (!usage || isZero(usage)) ? null : usage,
        tail,
        params: info.variant && info.variant !== 'default' ? { variant: info.variant } : {},
        notes,
      };
      if (info.error) request.error = errorText(info);
      const { created, completed } = info.time;
      if (typeof completed === 'number' && created !== null && completed >= created) request.responseEndMs = completed;
      recon.push({ request, message: m, messages: items });
    }
  });
  recon.forEach((r, i) => (r.request.index = i + 1));

  const session: Session = {
    host: 'opencode',
    id: s.id,
    path: s.file,
    requests: recon.map((r) => r.request),
    diagnostics,
    ignored,
    events: transcriptEvents(s),
    turnLines: turnLines(s),
  };
  if (s.info.title) session.title = s.info.title;
  if (s.info.directory) session.cwd = s.info.directory;
  if (s.info.parentID) session.parentId = s.info.parentID;
  return { session, requests: recon };
}

/**
 * OpenCode's `applyCaching` marks the last content block of the last 2 non-system messages
 * (reference/opencode.md §2.4, `packages/opencode/src/provider/transform.ts`). The chain's shared
 * nodes stay unmarked: the last messages' nodes are re-appended with copies that carry the mark.
 */
function markLastMessages(tail: BlockNode, count: number): BlockNode {
  const nodes: BlockNode[] = [];
  const items = new Set<number>();
  let n: BlockNode | null = tail;
  for (; n && n.block.segment === 'messages'; n = n.prev) {
    if (!items.has(n.block.item)) {
      if (items.size === count) break;
      items.add(n.block.item);
    }
    nodes.push(n);
  }
  nodes.reverse();
  let out = n;
  nodes.forEach((node, i) => {
    const b = node.block;
    const lastOfItem = i === nodes.length - 1 || nodes[i + 1].block.item !== b.item;
    out = append(out, lastOfItem ? blockWithBreakpoint(b, { ttlSeconds: 300 }) : b);
  });
  return out ?? tail;
}

/**
 * The compacted history of a session as requests advance: `filterCompacted` of the first `end`
 * messages, extended in place while no compaction completes, rebuilt (new `version`) otherwise.
 */
interface History {
  list: StoredMessage[];
  end: number;
  version: number;
}

function advance(h: History, messages: StoredMessage[], end: number): History {
  let extend = end >= h.end;
  for (let i = h.end; extend && i < end; i++) {
    const x = messages[i].info;
    // A finished summary can make a compaction effective (filterCompacted): rebuild.
    if (x.role === 'assistant' && x.summary) extend = false;
  }
  if (extend) {
    for (let i = h.end; i < end; i++) h.list.push(messages[i]);
    h.end = end;
    return h;
  }
  return { list: filterCompacted(messages, end), end, version: h.version + 1 };
}

/**
 * Encoder state after one request of an encoding context (api + request model), so that the next
 * request re-encodes only what changed: requests of a session mostly append to the history, so a
 * session costs time and memory linear in its messages. Arrays are reused in place.
 */
interface EncState {
  /** The history array and its version when encoded, and how many of its entries were used. */
  msgs: StoredMessage[];
  version: number;
  baseLen: number;
  /**
   * Per list entry: its first model message starts a wire item of its own (Anthropic merges a user
   * message into the preceding tool results), so encoding may restart there; and that item's index.
   */
  cut: boolean[];
  itemAt: number[];
  itemCount: number;
  /** nodeBefore[j] = chain node before wire item j (nodeBefore[0] = head, nodeBefore[itemCount] = tail). */
  nodeBefore: BlockNode[];
  blocks: Block[][];
}

function encodeIncremental(
  prev: EncState | undefined,
  head: BlockNode,
  api: OpenCodeApi,
  info: AssistantInfo,
  hist: History,
  partial: StoredMessage | undefined,
): EncState {
  const L = hist.list.length;
  const total = L + (partial ? 1 : 0);
  const at = (i: number) => (i < L ? hist.list[i] : partial!);
  // Longest common prefix of the entry list (the partial message of a step is never shared).
  let p = 0;
  if (prev) {
    if (prev.version === hist.version && prev.msgs === hist.list) p = Math.min(prev.baseLen, L);
    else {
      const n = Math.min(prev.baseLen, L);
      while (p < n && prev.msgs[p] === hist.list[p]) p++;
    }
  }
  // Restart at a clean cut: for Chat Completions every entry boundary; for Anthropic the last
  // boundary before p where a new wire message begins (the group before it is then closed).
  let q = 0;
  if (prev) {
    if (api === 'anthropic-messages') {
      for (let i = p - 1; i >= 0; i--) {
        if (prev.cut[i]) {
          q = i;
          break;
        }
      }
    } else q = p;
  }
  const item = !prev || q === 0 ? 0 : q < prev.cut.length ? prev.itemAt[q] : prev.itemCount;
  const oldBlocks = prev ? prev.blocks.slice(item) : [];
  const oldNodes = prev ? prev.nodeBefore.slice(item) : [];
  const state: EncState = prev ?? { msgs: hist.list, version: hist.version, baseLen: 0, cut: [], itemAt: [], itemCount: 0, nodeBefore: [head], blocks: [] };
  state.msgs = hist.list;
  state.version = hist.version;
  state.baseLen = L;
  state.cut.length = q;
  state.itemAt.length = q;
  state.itemCount = item;
  state.nodeBefore.length = item + 1;
  state.blocks.length = item;

  const current = { providerID: info.providerID, modelID: info.modelID };
  const encoded: Encoded[] = [];
  if (api === 'anthropic-messages') {
    const kept: MMsg[] = [];
    let items = item - 1;
    let lastSide: string | undefined;
    for (let i = q; i < total; i++) {
      const own = dropEmpty(toModelMessages([at(i)], current));
      state.cut[i] = own.length > 0 && side(own[0]) !== lastSide;
      own.forEach((x, k) => {
        if (side(x) !== lastSide) items++;
        lastSide = side(x);
        if (k === 0) state.itemAt[i] = items;
      });
      if (!own.length) state.itemAt[i] = Math.max(items, 0);
      kept.push(...own);
    }
    encoded.push(...encodeAnthropic(kept));
  } else {
    let items = item;
    for (let i = q; i < total; i++) {
      const e = encodeMessages(api, toModelMessages([at(i)], current));
      state.cut[i] = true;
      state.itemAt[i] = items;
      items += e.length;
      encoded.push(...e);
    }
  }
  // Chain: keep the previous nodes while the re-encoded items are byte-identical.
  let same = prev !== undefined;
  itemBlocks(api, encoded, item).forEach((blocks, k) => {
    const j = item + k;
    const old = oldBlocks[k];
    same = same && old !== undefined && old.length === blocks.length && old.every((b, x) => sameBlock(b, blocks[x]));
    let node = state.nodeBefore[j];
    if (same) node = oldNodes[k + 1];
    else for (const b of blocks) node = append(node, b);
    state.blocks[j] = same ? old! : blocks;
    state.nodeBefore[j + 1] = node;
  });
  state.itemCount = item + encoded.length;
  return state;
}

function sameBlock(a: Block, b: Block): boolean {
  return a.item === b.item && a.path === b.path && a.role === b.role && a.origin === b.origin && a.startPath === b.startPath && Buffer.compare(a.bytes, b.bytes) === 0;
}

function stepUsage(m: StoredMessage, starts: number[], k: number): Usage | null {
  const info = m.info as AssistantInfo;
  if (starts.length <= 1) {
    const t = info.tokens ?? stepFinish(m.parts.map((p) => p.part));
    return t ? usageOf(t) : null;
  }
  const end = k + 1 < starts.length ? starts[k + 1] : m.parts.length;
  const t = stepFinish(m.parts.slice(starts[k], end).map((p) => p.part));
  return t ? usageOf(t) : null;
}

function stepFinish(parts: Part[]): Tokens | undefined {
  for (const p of parts) if (p.type === 'step-finish' && p.tokens) return p.tokens;
  return undefined;
}

const isZero = (u: Usage) => u.uncached === 0 && u.cacheRead === 0 && u.cacheWrite === 0 && u.output === 0;

function errorText(info: AssistantInfo): string {
  const e = info.error;
  const data = e?.data && typeof e.data === 'object' ? (e.data as { message?: unknown }) : undefined;
  return [e?.name ?? 'error', typeof data?.message === 'string' ? data.message : ''].filter(Boolean).join(': ');
}

/**
 * phux context parts (V1, at the tail) and compactions, in transcript order. `line` is the
 * 1-based position of the message in the session (databases have no lines).
 */
export function transcriptEvents(s: StoredSession): TranscriptEvent[] {
  const out: TranscriptEvent[] = [];
  for (const m of s.messages) {
    if (m.info.role !== 'user') continue;
    for (const { part: p } of m.parts) {
      if (p.type === 'compaction') out.push({ kind: 'compaction', line: m.ordinal, timeMs: m.info.time.created });
      else if (isPhuxPart(p)) out.push({ kind: 'context', text: p.text, line: m.ordinal, placement: 'tail', timeMs: p.time?.start ?? m.info.time.created });
    }
  }
  return out;
}

/**
 * Positions (1-based) of user messages that start a turn: typed prompts, not compaction requests
 * nor the synthetic "Continue…" message OpenCode adds after an automatic compaction.
 */
export function turnLines(s: StoredSession): number[] {
  return s.messages
    .filter((m) => m.info.role === 'user')
    .filter((m) => !m.parts.some((p) => p.part.type === 'compaction'))
    .filter((m) => m.parts.some((p) => (p.part.type === 'text' && !p.part.synthetic) || p.part.type === 'file' || p.part.type === 'subtask' || p.part.type === 'agent'))
    .map((m) => m.ordinal);
}

// ------------------------------------------------------------------------------------------ apis

/** Wire APIs of OpenCode's bundled providers by provider id (models.dev ids; `npm` of each). */
export const KNOWN_APIS: Record<string, OpenCodeApi> = {
  anthropic: 'anthropic-messages',
  'google-vertex-anthropic': 'anthropic-messages',
  openai: 'openai-responses',
  azure: 'openai-responses',
};

/**
 * The wire API of each provider id seen in the sessions: known provider ids first, then
 * evidence in the stored parts (Anthropic `toolu_` tool ids or `anthropic` provider metadata;
 * OpenAI Responses `itemId` metadata; `call_` tool ids = Chat Completions). Providers without
 * evidence are left out (the caller encodes them as Chat Completions and says so).
 */
export function inferApis(sessions: StoredSession[], overrides: Record<string, OpenCodeApi> = {}): Map<string, OpenCodeApi> {
  const out = new Map<string, OpenCodeApi>();
  for (const s of sessions) {
    for (const m of s.messages) {
      if (m.info.role !== 'assistant') continue;
      const id = m.info.providerID;
      if (out.has(id)) continue;
      const known = ownGet(KNOWN_APIS, id); // a provider id is untrusted text (`constructor`…)
      if (known) {
        out.set(id, known);
        continue;
      }
      for (const { part: p } of m.parts) {
        const meta = 'metadata' in p ? (p.metadata as Record<string, unknown> | undefined) : undefined;
        if (meta && 'anthropic' in meta) out.set(id, 'anthropic-messages');
        else if (meta && typeof (meta.openai as { itemId?: unknown } | undefined)?.itemId === 'string') out.set(id, 'openai-responses');
        else if (p.type === 'tool' && p.callID.startsWith('toolu_')) out.set(id, 'anthropic-messages');
        else if (p.type === 'tool' && p.callID.startsWith('call_')) out.set(id, 'openai-completions');
        if (out.has(id)) break;
      }
    }
  }
  for (const [k, v] of Object.entries(overrides)) out.set(k, v);
  return out;
}
