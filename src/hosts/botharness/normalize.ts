/**
 * DSH events → LlmRequests (and what the persona verdicts need), in log order.
 *
 * One request per model call: each `assistant/message` whose `surfaceOp` is absent or `append`
 * (as BotHarness's usage roll-up counts them, reference A.1 "Usage and cache accounting"); a step
 * whose stream finished (`assistant/chunk` `finish`) without an `assistant/message` is a request
 * too, built from its chunks (the minimal DSH fixture has only chunks).
 *
 * The prompt of a request, in render order:
 *  - tools: `request/header.header.tools`, one block per tool (`tools[i]`, JSON), or one block when
 *    DSH logged them as one value;
 *  - system: the system prompt text as DSH recorded it (`header.system`, or the latest
 *    `system/message` in log v3+), one block (`messages[0].content`) whose bytes are the prompt as
 *    a JSON string (so break offsets count the escapes, as in a request body);
 *  - messages: `header.messagePrefix`, then user messages, assistant messages and tool results
 *    since the start or the last compaction (`compaction/summary` becomes one user message), each a
 *    chat message `{role, content}` of DSH's content parts (reconstructed: DSH does not log the
 *    provider body).
 * So the head is real (the bytes DSH froze into its EpochHeader, logged only when they change),
 * and a `request/header` with reason `change` breaks the prefix at the byte that changed.
 * Usage: DSH `inputTokens` is uncached input only (`TokenUsage`: "Counts are DISJOINT"), so
 * uncached = inputTokens, cacheRead = cacheReadTokens, cacheWrite = cacheWriteTokens.
 */
import { BlockNode, chainOf } from '../../core/chain.js';
import type { Block, LlmRequest, TranscriptEvent, Usage } from '../../core/model.js';
import type { MemoryChange, PersonaRequest } from '../../core/persona.js';
import { messageBlocks, opaqueHeadBlock } from '../../core/wire.js';
import type { DshEventRec, DshRead } from './read.js';
import {
  AssistantChunkDataSchema,
  AssistantMessageDataSchema,
  CompactionSummaryDataSchema,
  RequestHeaderDataSchema,
  SystemMessageDataSchema,
  TitleDataSchema,
  ToolResultDataSchema,
  UserMessageDataSchema,
  type DshUsage,
} from './schema.js';
import { countOr } from '../numbers.js';
import { describeIssues } from '../issues.js';

/** Note on every request. */
export const DSH_NOTE = 'system prompt and tools as DSH recorded them (request/header); messages reconstructed from DSH events';
/** Note on requests before any `request/header`. */
export const DSH_HEAD_NOTE = 'head opaque: no request/header logged before this request';

/** The result of normalizing one log. */
export interface DshNormalized {
  requests: LlmRequest[];
  persona: PersonaRequest[];
  events: TranscriptEvent[];
  turnLines: number[];
  title?: string;
}

interface Head {
  system: string | null;
  tools: unknown;
  messagePrefix: unknown[];
  provider: string;
  model: string;
  /** Chain through the head blocks (tools, system, message prefix). */
  node: BlockNode | null;
}

/** A conversation message as the chat body would carry it, and its log line. */
interface Msg {
  obj: Record<string, unknown>;
  origin?: string;
}

/** The wire API a DSH provider id most likely speaks (DeepSeek and most relays: Chat Completions). */
function apiOf(provider: string): string {
  if (/anthropic|claude/i.test(provider)) return 'anthropic-messages';
  return 'openai-completions';
}

function usageOf(u: DshUsage | undefined): Usage | null {
  if (!u) return null;
  // A count that was not one is null (numbers.ts checkHostValues): unknown, not 0.
  return { uncached: u.inputTokens, cacheRead: countOr(u.cacheReadTokens), cacheWrite: countOr(u.cacheWriteTokens), output: u.outputTokens };
}

function textOfParts(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
}

/** `[Source Event <id>]` in an Inbox notice (BotHarness: "Host lifecycle notice [Source Event …]"). */
const SOURCE_EVENT = /\[Source Event ([^\]\s]+)\]/g;

/** Source event ids of known memory changes a notice names (`[Source Event <id>]`) or its source record. */
function noticeIds(text: string, source: unknown, known: Map<string, MemoryChange>): string[] {
  if (!known.size) return [];
  const ids = new Set<string>();
  const s = source as { sourceEventId?: unknown } | undefined;
  if (s && typeof s.sourceEventId === 'string' && known.has(s.sourceEventId)) ids.add(s.sourceEventId);
  for (const m of text.matchAll(SOURCE_EVENT)) if (known.has(m[1])) ids.add(m[1]);
  return [...ids];
}

/**
 * Normalizes a read log.
 * @param memoryChanges the Session's bot's memory-change Inbox admissions (botharness.db), used to
 *   recognize the notices that reached the model as user messages
 */
export function normalizeDsh(read: DshRead, memoryChanges: MemoryChange[] = []): DshNormalized {
  const file = read.file;
  const known = new Map(memoryChanges.map((m) => [m.sourceEventId, m]));
  const out: DshNormalized = { requests: [], persona: [], events: [], turnLines: [] };
  const head: Head = { system: null, tools: undefined, messagePrefix: [], provider: '', model: '', node: null };
  let headKnown = false;
  let messages: Msg[] = [];
  /** Chain through head + messages, rebuilt when the head changes or history is rewritten. */
  let node: BlockNode | null = null;
  let dirty = true;
  let headerReason: string | null = null;
  let compactionLine: number | null = null;
  let summary: string | null = null;
  let inbox: PersonaRequest['inbox'] = [];
  const stepTime = new Map<string, number>();
  /** A finished stream not (yet) followed by its assistant message. */
  let pending: { line: number; turn?: number; step?: number; parts: unknown[]; usage: Usage | null; time: number | null } | null = null;
  let streamParts: unknown[] = [];
  let streamUsage: Usage | null = null;

  const rebuildHead = () => {
    const blocks: Block[] = [];
    if (Array.isArray(head.tools)) {
      head.tools.forEach((t, i) => blocks.push(textBlock('tools', i, `tools[${i}]`, JSON.stringify(t) ?? 'null')));
    } else if (head.tools !== undefined) blocks.push(textBlock('tools', 0, 'tools', typeof head.tools === 'string' ? head.tools : (JSON.stringify(head.tools) ?? 'null')));
    // As the chat body carries it: a JSON string (so a JSON path inside it is just the field's).
    if (head.system !== null) blocks.push(textBlock('system', 0, 'messages[0].content', JSON.stringify(head.system)));
    if (!blocks.length) blocks.push(opaqueHeadBlock('dsh:head'));
    head.node = chainOf(blocks);
  };
  rebuildHead();
  const sys = () => (head.system !== null ? 1 : 0);
  const path = (item: number) => `messages[${item + sys()}]`;
  const allMessages = (): Msg[] => [
    ...head.messagePrefix.map((m) => ({ obj: typeof m === 'string' ? { role: 'user', content: [{ type: 'text', text: m }] } : (m as Record<string, unknown>), origin: 'message-prefix' })),
    ...(summary !== null ? [{ obj: { role: 'user', content: [{ type: 'text', text: summary }] }, origin: 'compaction-summary' }] : []),
    ...messages,
  ];
  const chain = (): BlockNode | null => {
    if (dirty) {
      node = head.node;
      allMessages().forEach((m, i) => {
        for (const b of messageBlocks(i, path(i), m.obj, m.origin)) node = new BlockNode(node, b);
      });
      dirty = false;
    }
    return node;
  };
  const addMessage = (m: Msg) => {
    const all = head.messagePrefix.length + (summary !== null ? 1 : 0) + messages.length;
    messages.push(m);
    if (!dirty) for (const b of messageBlocks(all, path(all), m.obj, m.origin)) node = new BlockNode(node, b);
  };

  const emit = (line: number, time: number | null, turn: number | undefined, step: number | undefined, usage: Usage | null, route: { provider?: string; model?: string } | undefined) => {
    const provider = route?.provider || head.provider || 'unknown';
    const model = route?.model || head.model || 'unknown';
    const sent = stepTime.get(`${turn}:${step}`) ?? time;
    const req: LlmRequest = {
      index: out.requests.length + 1,
      source: { file, line },
      provider,
      model,
      api: apiOf(provider),
      kind: 'agent',
      timeMs: sent,
      evidence: 'reconstructed',
      usage,
      tail: chain(),
      params: {},
      notes: headKnown ? [DSH_NOTE] : [DSH_NOTE, DSH_HEAD_NOTE],
    };
    out.requests.push(req);
    out.persona.push({ index: req.index, line, timeMs: sent, system: head.system, headerReason, compactionLine, inbox });
    headerReason = null;
    compactionLine = null;
    inbox = [];
  };
  const flushPending = () => {
    if (!pending) return;
    const p = pending;
    pending = null;
    emit(p.line, p.time, p.turn, p.step, p.usage, undefined);
    addMessage({ obj: { role: 'assistant', content: p.parts } });
  };
  const bad = (r: DshEventRec, what: string, issues: string) =>
    read.diagnostics.push({ file, line: r.line, severity: 'warning', message: `${what} does not fit its schema; skipped: ${issues}` });

  for (const r of read.events) {
    const { ev } = r;
    const appended = ev.surfaceOp === undefined || ev.surfaceOp === 'append';
    if (ev.type !== 'assistant/chunk' && ev.type !== 'assistant/message') flushPending();
    switch (ev.type) {
      case 'step/start': {
        const d = ev.data as { turn?: unknown; step?: unknown } | undefined;
        if (ev.time !== null) stepTime.set(`${d?.turn}:${d?.step}`, ev.time);
        break;
      }
      case 'request/context': {
        // `{provider, model, contextWindow?}`: the route when no header names one (BotHarness usage.ts).
        const d = ev.data as { provider?: unknown; model?: unknown } | undefined;
        if (typeof d?.provider === 'string' && !head.provider) head.provider = d.provider;
        if (typeof d?.model === 'string' && !head.model) head.model = d.model;
        break;
      }
      case 'session/title': {
        const d = TitleDataSchema.safeParse(ev.data);
        if (d.success) out.title = d.data.title;
        break;
      }
      case 'request/header': {
        const d = RequestHeaderDataSchema.safeParse(ev.data);
        if (!d.success) {
          bad(r, 'request/header', describeIssues(d.error));
          break;
        }
        const h = d.data.header;
        headKnown = true;
        if (h.system !== undefined) head.system = h.system;
        head.tools = h.tools;
        head.messagePrefix = h.messagePrefix ?? [];
        head.provider = h.config?.provider ?? head.provider;
        head.model = h.config?.model ?? head.model;
        rebuildHead();
        dirty = true;
        headerReason = d.data.reason ?? 'unknown';
        break;
      }
      case 'system/message': {
        const d = SystemMessageDataSchema.safeParse(ev.data);
        if (!d.success) {
          bad(r, 'system/message', describeIssues(d.error));
          break;
        }
        headKnown = true;
        head.system = textOfParts(d.data.message?.content ?? d.data.content);
        rebuildHead();
        dirty = true;
        // A replace says more than the header logged with it; an append keeps the header's reason.
        headerReason = typeof ev.surfaceOp === 'object' && ev.surfaceOp ? 'system/message replace' : (headerReason ?? 'system/message');
        break;
      }
      case 'user/message': {
        if (!appended) break;
        const d = UserMessageDataSchema.safeParse(ev.data);
        if (!d.success) {
          bad(r, 'user/message', describeIssues(d.error));
          break;
        }
        const content = d.data.content ?? [{ type: 'text', text: d.data.text ?? '' }];
        out.turnLines.push(r.line);
        const ids = noticeIds(textOfParts(content), d.data.source, known);
        for (const id of ids) inbox.push({ line: r.line, sourceEventId: id, paths: known.get(id)!.paths });
        addMessage({ obj: { role: 'user', content }, ...(ids.length ? { origin: 'inbox-memory-change' } : {}) });
        break;
      }
      case 'assistant/chunk': {
        const d = AssistantChunkDataSchema.safeParse(ev.data);
        if (!d.success) break;
        const c = d.data.chunk;
        if (c.type === 'block-start' && c.index === 0) {
          streamParts = [];
          streamUsage = null;
        }
        if (c.type === 'block-end' && c.block) streamParts.push(c.block);
        if (c.type === 'usage') streamUsage = usageOf(c.usage);
        if (c.type === 'finish') {
          pending = { line: r.line, turn: d.data.turn, step: d.data.step, parts: streamParts, usage: streamUsage, time: ev.time };
          streamParts = [];
          streamUsage = null;
        }
        break;
      }
      case 'assistant/message': {
        if (!appended) break;
        const d = AssistantMessageDataSchema.safeParse(ev.data);
        if (!d.success) {
          bad(r, 'assistant/message', describeIssues(d.error));
          break;
        }
        const streamed: Usage | null = pending && pending.turn === d.data.turn && pending.step === d.data.step ? pending.usage : null;
        pending = null;
        emit(r.line, ev.time, d.data.turn, d.data.step, usageOf(d.data.usage) ?? streamed, d.data.provenance ?? d.data.source);
        const req = out.requests[out.requests.length - 1];
        if (d.data.error !== undefined) req.error = typeof d.data.error === 'string' ? d.data.error : JSON.stringify(d.data.error);
        else addMessage({ obj: { role: 'assistant', content: d.data.content ?? [] } });
        break;
      }
      case 'tool/result': {
        if (!appended) break;
        const d = ToolResultDataSchema.safeParse(ev.data);
        if (!d.success) {
          bad(r, 'tool/result', describeIssues(d.error));
          break;
        }
        addMessage({ obj: { role: 'tool', tool_call_id: d.data.callId, content: d.data.content ?? [{ type: 'text', text: d.data.text ?? '' }] } });
        break;
      }
      case 'compaction/summary': {
        const d = CompactionSummaryDataSchema.safeParse(ev.data);
        if (d.success) summary = d.data.summary ?? d.data.text ?? textOfParts(d.data.content);
        break;
      }
      case 'compaction/end': {
        // The history before the boundary is replaced by its summary (when one was logged).
        messages = [];
        dirty = true;
        compactionLine = r.line;
        out.events.push({ kind: 'compaction', line: r.line, timeMs: ev.time });
        break;
      }
    }
  }
  flushPending();
  return out;
}

/** A head block whose bytes are a text's UTF-8 (hashed from the text once by the chain). */
function textBlock(segment: 'tools' | 'system', item: number, path: string, text: string): Block {
  return {
    segment,
    item,
    path,
    text,
    get bytes() {
      return Buffer.from(text, 'utf8');
    },
  };
}
