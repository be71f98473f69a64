/**
 * Pi session → LlmRequests (reconstructed mode): one request per assistant entry, its prompt
 * rebuilt from the session tree with Pi's own rules, encoded the way the request's wire API does.
 *
 * Pipeline per assistant entry A (reference/pi.md §1 "Context reconstruction", §2 "Pipeline", §5):
 *  1. `buildSessionContext(entries, A.parentId)` (session-manager.ts l.315): the path root → A's
 *     parent; with a compaction on it (the last one wins): the compaction summary, then the
 *     entries from `firstKeptEntryId` up to the compaction, then everything after it.
 *     `message` → its message, `custom_message` → a user message (whatever its `display`),
 *     `branch_summary` → a user message; other entries are not sent.
 *  2. `convertToLlm` (coding-agent `messages.ts` l.148): summaries get Pi's fixed prefix/suffix
 *     text, `bashExecution` becomes `Ran \`cmd\`…` (unless excluded from context).
 *  3. `transformMessages` (pi-ai `providers/transform-messages.js`): errored/aborted assistant
 *     messages are dropped, thinking of other models becomes text, foreign tool-call ids are
 *     normalized, orphaned tool calls get synthetic "No result provided" results.
 *  4. The provider's `convertMessages` (pi-ai 0.73.1 `providers/anthropic.js` l.751,
 *     `openai-completions.js` l.561, `openai-responses-shared.js` `convertResponsesMessages`):
 *     the message list has the same items, in the same order, as the real body's messages
 *     segment, and each item is built as an object with the body's key order, so reconstructed
 *     blocks are content-equal exactly when the wire blocks are (byte-exactness is not promised).
 * The system prompt and the tools are not in a 0.73 session: every chain starts with one opaque
 * head block per session (`opaqueHeadBlock('pi:head')`).
 *
 * Cost: chains are persistent. The encoder state after an entry (per encoding context = api,
 * provider, model) is memoized on the entry and extends its parent's, so a session costs time and
 * memory linear in its entries (per encoding context); a compaction starts a new chain at the head.
 */
import { BlockNode, chainOf } from '../../core/chain.js';
import type { LlmRequest, Prices, TranscriptEvent, Usage } from '../../core/model.js';
import { ownSet } from '../../core/own.js';
import { familyFor } from '../../core/rules.js';
import { messageBlocks, opaqueHeadBlock } from '../../core/wire.js';
import { branchStart, piSessionId, type PiEntryRec, type PiRead } from './read.js';
import { JsonLiteral, textOf as literalText } from '../../core/literal.js';
import type { AssistantMessage, ContentBlock, ImageContent, LiteralTextContent, PiUsage, TextContent, ThinkingContent, ToolCall, ToolResultMessage } from './schema.js';

/** Note carried by every reconstructed request. */
export const HEAD_NOTE = 'head opaque: Pi 0.73 does not record the system prompt or tools';
/** Label of the opaque head block (same label = assumed same head). */
export const HEAD_LABEL = 'pi:head';

/** Pi `messages.ts` COMPACTION_SUMMARY_PREFIX / _SUFFIX. */
export const COMPACTION_SUMMARY_PREFIX =
  'The conversation history before this point was compacted into the following summary:\n\n<summary>\n';
export const COMPACTION_SUMMARY_SUFFIX = '\n</summary>';
/** Pi `messages.ts` BRANCH_SUMMARY_PREFIX / _SUFFIX. */
export const BRANCH_SUMMARY_PREFIX = 'The following is a summary of a branch that this conversation came back from:\n\n<summary>\n';
export const BRANCH_SUMMARY_SUFFIX = '</summary>';

/** Default Anthropic cache TTL when the retention is not known to be long (seconds). */
const DEFAULT_TTL_SECONDS = 300;

/** A user-role message after Pi's `convertToLlm`; `origin` marks what it was built from. */
export interface LlmUser {
  role: 'user';
  content: string | ContentBlock[];
  origin?: 'compaction-summary' | 'branch-summary' | 'branch-start' | 'phux-context';
}

/** A message as Pi hands it to the provider (after `convertToLlm`). */
export type LlmMessage = LlmUser | AssistantMessage | ToolResultMessage;

/** What the encoding of messages depends on: the request's API and model. */
export interface EncodeContext {
  api: string;
  provider: string;
  model: string;
}

/** The last wire message appended to a chain, kept to move the Anthropic message breakpoint onto it. */
interface LastMessage {
  obj: Record<string, unknown>;
  item: number;
  role: string;
  origin?: string;
  /** Chain node before the message's first block. */
  before: BlockNode;
}

/**
 * Encoder state after a prefix of the message list. Immutable; `flushed` memoizes `flush()`.
 * Tool results are held in `pending` until the run ends (Anthropic merges a run into one user
 * message; Completions appends image follow-ups after a run; synthetic results close a run).
 */
interface EncState {
  /** Chain through the last finalized wire item (starts at the head). */
  readonly node: BlockNode;
  /** Finalized wire items in the messages segment. */
  readonly items: number;
  /** Responses API: index of the next transformed message (`msg_<index>` ids of foreign text). */
  readonly msgIndex: number;
  readonly pending: readonly ToolResultMessage[];
  /** Tool calls of the last kept assistant message (normalized ids) awaiting results. */
  readonly calls: ReadonlyArray<{ id: string; name: string }>;
  /** Result ids seen since those calls. */
  readonly seen: readonly string[];
  /** Original → normalized tool call ids of the last kept assistant message. */
  readonly idMap: ReadonlyMap<string, string> | null;
  readonly last: LastMessage | null;
  flushed?: EncState;
}

/**
 * A new encoder state (flushed unset). An object literal with every field, not a spread of the
 * previous state: a session builds one per message and per context, and spreads cost several
 * times more (and allocate more) than a literal of a fixed shape.
 */
function encState(
  node: BlockNode,
  items: number,
  msgIndex: number,
  pending: readonly ToolResultMessage[],
  calls: ReadonlyArray<{ id: string; name: string }>,
  seen: readonly string[],
  idMap: ReadonlyMap<string, string> | null,
  last: LastMessage | null,
): EncState {
  return { node, items, msgIndex, pending, calls, seen, idMap, last, flushed: undefined };
}

const contextKey = (c: EncodeContext) => `${c.api}\u0000${c.provider}\u0000${c.model}`;

/**
 * Pi `sanitizeSurrogates`: drops unpaired UTF-16 surrogates. Almost no text has one, and the
 * native well-formedness check (no surrogate scan at all for one-byte strings) is far cheaper than
 * the regex over every byte of every tool result.
 */
function sanitize<T extends string | JsonLiteral>(text: T): T;
function sanitize(text: string | JsonLiteral): string | JsonLiteral {
  // A JsonLiteral is well-formed by construction (core/literal.ts literalOf).
  if (typeof text !== 'string' || text.isWellFormed()) return text;
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '');
}

/** pi-ai `utils/hash.js` shortHash (used for foreign Responses item ids). */
function shortHash(str: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(36) + (h1 >>> 0).toString(36);
}

const isText = (b: ContentBlock): b is Extract<ContentBlock, { type: 'text'; text: string }> =>
  b.type === 'text' && typeof (b as { text?: unknown }).text === 'string';
/** A tool result's text block: its text a string or, when long, a JsonLiteral (read.ts). */
const isResultText = (b: ContentBlock | LiteralTextContent): b is TextContent | LiteralTextContent =>
  b.type === 'text' && (typeof b.text === 'string' || b.text instanceof JsonLiteral);

/**
 * A tool result's text as pi-ai joins it (`content.filter(text).map(b => b.text).join('\n')`):
 * one text block gives its own text (a JsonLiteral stays one), several are joined as strings.
 */
function resultText(content: ToolResultMessage['content']): string | JsonLiteral {
  let one: string | JsonLiteral = '';
  let n = 0;
  for (const b of content) {
    if (isResultText(b)) {
      n++;
      one = b.text;
    }
  }
  if (n <= 1) return one;
  return content
    .filter(isResultText)
    .map((b) => literalText(b.text))
    .join('\n');
}

const isImage = (b: ContentBlock | LiteralTextContent): b is ImageContent =>
  b.type === 'image' && typeof (b as { data?: unknown }).data === 'string';
const isThinking = (b: ContentBlock): b is ThinkingContent =>
  b.type === 'thinking' && typeof (b as { thinking?: unknown }).thinking === 'string';
const isToolCall = (b: ContentBlock): b is ToolCall =>
  b.type === 'toolCall' && typeof (b as { id?: unknown }).id === 'string';

function textOf(content: string | ContentBlock[]): string {
  return typeof content === 'string' ? content : content.filter(isText).map((b) => b.text).join('\n');
}

/** True for a phux fleet context message (ADR-0067): customType `phux-context` or its tag in the text. */
export function isPhuxContext(customType: string | undefined, content: string | ContentBlock[]): boolean {
  return customType === 'phux-context' || textOf(content).includes('<phux-context');
}

/** JSON path of message item `item` in the body (Completions/Responses carry the system prompt at index 0). */
function pathFor(api: string, item: number): string {
  if (api === 'openai-responses') return `input[${item + 1}]`;
  if (api === 'openai-completions') return `messages[${item + 1}]`;
  return `messages[${item}]`;
}

/** The message Pi sends for one entry (`buildSessionContext` appendMessage + `convertToLlm`), or null. */
function llmOfEntry(rec: PiEntryRec): LlmMessage | null {
  const e = rec.entry;
  if (!e) return null;
  if (e.type === 'custom_message') {
    const content = typeof e.content === 'string' ? [{ type: 'text' as const, text: e.content }] : e.content;
    return { role: 'user', content, ...(isPhuxContext(e.customType, e.content) ? { origin: 'phux-context' as const } : {}) };
  }
  if (e.type === 'branch_summary') {
    if (!e.summary) return null;
    return {
      role: 'user',
      content: [{ type: 'text', text: BRANCH_SUMMARY_PREFIX + e.summary + BRANCH_SUMMARY_SUFFIX }],
      origin: 'branch-summary',
    };
  }
  if (e.type !== 'message') return null;
  const m = e.message;
  switch (m.role) {
    case 'user':
      // The first message of a branch a tree navigation moved to (no branch summary written).
      return branchStart(rec) ? { role: 'user', content: m.content, origin: 'branch-start' } : { role: 'user', content: m.content };
    case 'assistant':
    case 'toolResult':
      return m;
    case 'custom': {
      const content = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
      return { role: 'user', content, ...(isPhuxContext(m.customType, m.content) ? { origin: 'phux-context' as const } : {}) };
    }
    case 'bashExecution': {
      if (m.excludeFromContext) return null;
      let text = `Ran \`${m.command}\`\n`;
      text += m.output ? `\`\`\`\n${m.output}\n\`\`\`` : '(no output)';
      if (m.cancelled) text += '\n\n(command cancelled)';
      else if (m.exitCode !== null && m.exitCode !== undefined && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`;
      if (m.truncated && m.fullOutputPath) text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`;
      return { role: 'user', content: [{ type: 'text', text }] };
    }
  }
}

function compactionSummaryMessage(summary: string): LlmUser {
  return {
    role: 'user',
    content: [{ type: 'text', text: COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX }],
    origin: 'compaction-summary',
  };
}

/** Tool-call id normalization of the target API for calls of other models (`transformMessages` callback). */
function normalizeToolCallId(id: string, ctx: EncodeContext, source: AssistantMessage): string {
  switch (ctx.api) {
    case 'anthropic-messages':
      return id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
    case 'openai-completions':
      if (id.includes('|')) return id.split('|')[0].replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 40);
      if (ctx.provider === 'openai') return id.length > 40 ? id.slice(0, 40) : id;
      return id;
    case 'openai-responses': {
      const part = (p: string) => {
        const s = p.replace(/[^a-zA-Z0-9_-]/g, '_');
        return (s.length > 64 ? s.slice(0, 64) : s).replace(/_+$/, '');
      };
      // openai-responses.js OPENAI_TOOL_CALL_PROVIDERS
      if (!['openai', 'openai-codex', 'opencode'].includes(ctx.provider) || !id.includes('|')) return part(id);
      const [callId, itemId] = id.split('|');
      const foreign = source.provider !== ctx.provider || source.api !== ctx.api;
      let item = foreign ? `fc_${shortHash(itemId)}`.slice(0, 64) : part(itemId);
      if (!item.startsWith('fc_')) item = part(`fc_${item}`);
      return `${part(callId)}|${item}`;
    }
    default:
      return id;
  }
}

/** A block transformAssistant drops for the message's own model: thinking, not redacted, unsigned, blank. */
const droppedWhenSame = (b: ContentBlock): boolean => isThinking(b) && !b.redacted && !b.thinkingSignature && (!b.thinking || b.thinking.trim() === '');

/**
 * `transformMessages` first pass for one assistant message, for the request's model: for its own
 * model, when no block is dropped, the message's content itself (as transformBlocks would give it,
 * in a new array); else transformBlocks.
 */
export function transformAssistant(m: AssistantMessage, ctx: EncodeContext): { content: ContentBlock[]; idMap: Map<string, string> | null } {
  const same = m.provider === ctx.provider && m.api === ctx.api && m.model === ctx.model;
  if (same && !m.content.some(droppedWhenSame)) return { content: m.content, idMap: null };
  return transformBlocks(m, ctx);
}

/** transformAssistant block by block (the straightforward way, for every message). */
export function transformBlocks(m: AssistantMessage, ctx: EncodeContext): { content: ContentBlock[]; idMap: Map<string, string> | null } {
  const same = m.provider === ctx.provider && m.api === ctx.api && m.model === ctx.model;
  let idMap: Map<string, string> | null = null;
  const content = m.content.flatMap((b): ContentBlock[] => {
    if (isThinking(b)) {
      if (b.redacted) return same ? [b] : [];
      if (same && b.thinkingSignature) return [b];
      if (!b.thinking || b.thinking.trim() === '') return [];
      return same ? [b] : [{ type: 'text', text: b.thinking }];
    }
    if (isText(b)) return same ? [b] : [{ type: 'text', text: b.text }];
    if (isToolCall(b)) {
      if (same) return [b];
      const { thoughtSignature: _drop, ...rest } = b;
      const id = normalizeToolCallId(b.id, ctx, m);
      if (id !== b.id) (idMap ??= new Map()).set(b.id, id);
      return [{ ...rest, id }];
    }
    return [b];
  });
  return { content, idMap };
}

/** PiEncoder.exportState's plain-data form (JSON-safe): an encoder state with its chains as node indices. */
export interface StoredEncState {
  ctx: EncodeContext;
  node: number;
  items: number;
  msgIndex: number;
  /** Tool results held until their run ends (transcript values). */
  pending: unknown[];
  calls: Array<{ id: string; name: string }>;
  seen: string[];
  idMap: Array<[string, string]> | null;
  last: { obj: Record<string, unknown>; item: number; role: string; origin?: string; before: number } | null;
}

/**
 * The entries of a complete tree that more than one entry names as parent (branch points), in
 * O(entries) time and a set of the size of the answer: an entry's first child in file order is
 * usually the next entry, so only the other children are looked up.
 */
export function branchPoints(entries: readonly PiEntryRec[]): Set<PiEntryRec> {
  const out = new Set<PiEntryRec>();
  /** Parents of a child that is not the entry right after them. */
  const distant = new Set<PiEntryRec>();
  for (let i = 0; i < entries.length; i++) {
    const p = entries[i].parent;
    if (!p || entries[p.order] !== p || p.order === i - 1) continue;
    // p also has another child: the entry right after it, or an earlier distant one.
    if (entries[p.order + 1]?.parent === p || distant.has(p)) out.add(p);
    else distant.add(p);
  }
  return out;
}

/** Per-session encoder with the persistent chain cache. */
export class PiEncoder {
  private readonly headPlain: BlockNode;
  private readonly headCached: BlockNode;
  private readonly headStates = new Map<string, EncState>();
  /** Memoized state after each entry (see `branches`), per encoding context key. */
  private readonly states = new Map<string, Map<PiEntryRec, EncState>>();
  private readonly llm = new Map<PiEntryRec, LlmMessage | null>();
  /**
   * With the branch points of the whole tree (a full read, branchPoints), the memo keeps only
   * the states a later request can start from: at branch points, at compactions, and at the end
   * of the last walk through each line (dropped once a walk continues past it). Every entry's
   * state is still computed exactly once, in the same order, so the chains are the same objects
   * the full memo gives; the states of the other entries (one per entry and encoding context,
   * with their pending lists and last wire message: ~57 MiB of the 100 MiB bench session) are
   * garbage as soon as the walk moves on. Without it (a live tail, whose tree grows and may
   * branch anywhere later) every state is kept.
   */
  private readonly branches: ReadonlySet<PiEntryRec> | null;

  constructor(opts: { branches?: ReadonlySet<PiEntryRec> } = {}) {
    this.branches = opts.branches ?? null;
    // One head per session; the Anthropic variant carries the cache_control Pi puts on the system
    // block and the last tool (same bytes, so the same hash).
    this.headPlain = new BlockNode(null, opaqueHeadBlock(HEAD_LABEL));
    this.headCached = new BlockNode(null, { ...opaqueHeadBlock(HEAD_LABEL), breakpoint: { ttlSeconds: DEFAULT_TTL_SECONDS } });
  }

  /**
   * The prefix chain of a request whose context ends at `parent` (the assistant entry's parent).
   * @returns the tail node and the number of items in the messages segment
   */
  tail(parent: PiEntryRec | null, ctx: EncodeContext): { node: BlockNode; messages: number } {
    const s = this.flush(this.stateAt(parent, ctx), ctx);
    return { node: this.withMessageBreakpoint(s, ctx), messages: s.items };
  }

  /**
   * The encoder state after `rec` in `ctx` (its whole context) in plain data, for the persisted
   * tail (src/cache/tail.ts): `importState` on a new encoder makes `tail` of a child of `rec`
   * continue from it without `rec`'s ancestors. Computes the state when it is not memoized.
   * @param ref index of a chain node in the caller's table (core/tailstate.ts ChainWriter.ref)
   */
  exportState(rec: PiEntryRec, ctx: EncodeContext, ref: (n: BlockNode | null) => number): StoredEncState {
    const s = this.stateAt(rec, ctx);
    return {
      ctx: { api: ctx.api, provider: ctx.provider, model: ctx.model },
      node: ref(s.node),
      items: s.items,
      msgIndex: s.msgIndex,
      pending: s.pending.map((m) => ({ ...m })),
      calls: s.calls.map((c) => ({ id: c.id, name: c.name })),
      seen: [...s.seen],
      idMap: s.idMap ? [...s.idMap] : null,
      last: s.last ? { obj: s.last.obj, item: s.last.item, role: s.last.role, ...(s.last.origin !== undefined ? { origin: s.last.origin } : {}), before: ref(s.last.before) } : null,
    };
  }

  /**
   * Makes `stored` (exportState, possibly from another process) the memoized state after `rec` in
   * its context. @param nodeOf the chain node at an index of the caller's table
   * @throws Error when a node index is missing
   */
  importState(rec: PiEntryRec, stored: StoredEncState, nodeOf: (i: number) => BlockNode | null): void {
    const node = nodeOf(stored.node);
    if (!node) throw new Error('encoder state without a chain');
    let last: LastMessage | null = null;
    if (stored.last) {
      const before = nodeOf(stored.last.before);
      if (!before) throw new Error('encoder state: last message without its chain');
      last = { obj: stored.last.obj, item: stored.last.item, role: stored.last.role, before };
      if (stored.last.origin !== undefined) last.origin = stored.last.origin;
    }
    const s = encState(node, stored.items, stored.msgIndex, stored.pending as ToolResultMessage[], stored.calls, stored.seen, stored.idMap ? new Map(stored.idMap) : null, last);
    this.memo(contextKey(stored.ctx)).set(rec, s);
  }

  private llmOf(rec: PiEntryRec): LlmMessage | null {
    let m = this.llm.get(rec);
    if (m === undefined) {
      m = llmOfEntry(rec);
      this.llm.set(rec, m);
    }
    return m;
  }

  /** contextKey of the last context asked for (requests mostly follow one model). */
  private lastCtx: EncodeContext | null = null;
  private lastKey = '';

  /** contextKey(ctx), without building it again for a context equal to the last one. */
  private keyOf(ctx: EncodeContext): string {
    const l = this.lastCtx;
    if (l !== null && (l === ctx || (l.api === ctx.api && l.provider === ctx.provider && l.model === ctx.model))) return this.lastKey;
    this.lastCtx = ctx;
    return (this.lastKey = contextKey(ctx));
  }

  private head(ctx: EncodeContext): EncState {
    const key = this.keyOf(ctx);
    let s = this.headStates.get(key);
    if (!s) {
      const node = ctx.api === 'anthropic-messages' ? this.headCached : this.headPlain;
      s = encState(node, 0, 0, [], [], [], null, null);
      this.headStates.set(key, s);
    }
    return s;
  }

  private memo(key: string): Map<PiEntryRec, EncState> {
    let m = this.states.get(key);
    if (!m) this.states.set(key, (m = new Map()));
    return m;
  }

  /** Encoder state after `rec` (its whole context); iterative, memoized per entry and context. */
  private stateAt(rec: PiEntryRec | null, ctx: EncodeContext): EncState {
    const memo = this.memo(this.keyOf(ctx));
    const todo: PiEntryRec[] = [];
    let base: EncState | undefined;
    const branches = this.branches;
    for (let r = rec; r; r = r.parent) {
      const hit = memo.get(r);
      if (hit) {
        base = hit;
        // Continued past a line's end that is no branch point: no later walk stops there (see `branches`).
        if (branches && todo.length > 0 && !branches.has(r) && r.entry?.type !== 'compaction') memo.delete(r);
        break;
      }
      if (r.entry?.type === 'compaction') {
        base = this.compactionStart(r, ctx);
        memo.set(r, base);
        break;
      }
      todo.push(r);
    }
    let s = base ?? this.head(ctx);
    for (let i = todo.length - 1; i >= 0; i--) {
      const msg = this.llmOf(todo[i]);
      if (msg) s = this.step(s, msg, ctx);
      if (!branches || i === 0 || branches.has(todo[i])) memo.set(todo[i], s);
    }
    return s;
  }

  /** State at a compaction entry: head, the summary, then the kept entries (firstKeptEntryId … compaction). */
  private compactionStart(c: PiEntryRec, ctx: EncodeContext): EncState {
    let s = this.step(this.head(ctx), compactionSummaryMessage(c.entry?.type === 'compaction' ? c.entry.summary : ''), ctx);
    const firstKept = c.entry?.type === 'compaction' ? c.entry.firstKeptEntryId : undefined;
    if (!firstKept) return s;
    const kept: PiEntryRec[] = [];
    let found = false;
    for (let r = c.parent; r; r = r.parent) {
      kept.push(r);
      if (r.id === firstKept) {
        found = true;
        break;
      }
    }
    if (!found) return s;
    for (let i = kept.length - 1; i >= 0; i--) {
      const msg = this.llmOf(kept[i]);
      if (msg) s = this.step(s, msg, ctx);
    }
    return s;
  }

  private step(s: EncState, msg: LlmMessage, ctx: EncodeContext): EncState {
    if (msg.role === 'toolResult') {
      const id = s.idMap?.get(msg.toolCallId) ?? msg.toolCallId;
      const r = id === msg.toolCallId ? msg : { ...msg, toolCallId: id };
      return encState(s.node, s.items, s.msgIndex + 1, [...s.pending, r], s.calls, [...s.seen, id], s.idMap, s.last);
    }
    const f = this.flush(s, ctx);
    if (msg.role === 'user') return this.encodeUser(f, msg, ctx);
    if (msg.stopReason === 'error' || msg.stopReason === 'aborted') return f;
    const { content, idMap } = transformAssistant(msg, ctx);
    const t = this.encodeAssistant(f, msg, content, ctx);
    const calls = content.filter(isToolCall).map((c) => ({ id: c.id, name: c.name }));
    return encState(t.node, t.items, t.msgIndex, t.pending, calls, [], idMap, t.last);
  }

  /** Ends a tool-result run: synthetic results for unanswered calls, then the run's wire items. Memoized. */
  private flush(s: EncState, ctx: EncodeContext): EncState {
    if (s.flushed) return s.flushed;
    if (s.pending.length === 0 && s.calls.length === 0) {
      s.flushed = s;
      return s;
    }
    // Usually every call has its result: no synthetic ones, and the run is the pending list.
    const seen = s.calls.length > 16 ? new Set(s.seen) : null;
    let synthetic: ToolResultMessage[] | null = null;
    for (const c of s.calls) {
      if (seen ? seen.has(c.id) : s.seen.includes(c.id)) continue;
      (synthetic ??= []).push({ role: 'toolResult', toolCallId: c.id, toolName: c.name, content: [{ type: 'text', text: 'No result provided' }], isError: true });
    }
    let t: EncState = encState(s.node, s.items, s.msgIndex + (synthetic?.length ?? 0), [], [], [], s.idMap, s.last);
    const run = synthetic ? [...s.pending, ...synthetic] : s.pending;
    if (run.length > 0) t = this.encodeRun(t, run, ctx);
    t.flushed = t;
    s.flushed = t;
    return t;
  }

  /** Appends one wire item built from `obj` (keys in wire order); `messages` = transformed messages it ends (msgIndex step). */
  private append(s: EncState, obj: Record<string, unknown>, ctx: EncodeContext, origin?: string, messages = 0): EncState {
    const item = s.items;
    const blocks = messageBlocks(item, pathFor(ctx.api, item), obj, origin);
    const node = chainOf(blocks, s.node) ?? s.node;
    const role = typeof obj.role === 'string' ? obj.role : String(obj.type ?? '');
    return encState(node, item + 1, s.msgIndex + messages, s.pending, s.calls, s.seen, s.idMap, { obj, item, role, origin, before: s.node });
  }

  private encodeUser(s: EncState, msg: LlmUser, ctx: EncodeContext): EncState {
    const { content, origin } = msg;
    let obj: Record<string, unknown> | null = null;
    switch (ctx.api) {
      case 'anthropic-messages':
        if (typeof content === 'string') {
          if (content.trim().length > 0) obj = { role: 'user', content: sanitize(content) };
        } else {
          const blocks = content
            .map((b) => (isText(b) ? { type: 'text', text: sanitize(b.text) } : isImage(b) ? anthropicImage(b) : null))
            .filter((b): b is Record<string, unknown> => b !== null && (b.type !== 'text' || String(b.text).trim().length > 0));
          if (blocks.length > 0) obj = { role: 'user', content: blocks };
        }
        break;
      case 'openai-completions':
        if (typeof content === 'string') obj = { role: 'user', content: sanitize(content) };
        else {
          const parts = content
            .map((b) =>
              isText(b)
                ? { type: 'text', text: sanitize(b.text) }
                : isImage(b)
                  ? { type: 'image_url', image_url: { url: `data:${b.mimeType};base64,${b.data}` } }
                  : null,
            )
            .filter((b) => b !== null);
          if (parts.length > 0) obj = { role: 'user', content: parts };
        }
        break;
      case 'openai-responses': {
        const parts =
          typeof content === 'string'
            ? [{ type: 'input_text', text: sanitize(content) }]
            : content
                .map((b) =>
                  isText(b)
                    ? { type: 'input_text', text: sanitize(b.text) }
                    : isImage(b)
                      ? { type: 'input_image', detail: 'auto', image_url: `data:${b.mimeType};base64,${b.data}` }
                      : null,
                )
                .filter((b) => b !== null);
        if (parts.length > 0) obj = { role: 'user', content: parts };
        break;
      }
      default:
        obj = { role: 'user', content };
    }
    if (!obj) return s;
    return this.append(s, obj, ctx, origin, 1);
  }

  private encodeAssistant(s: EncState, msg: AssistantMessage, content: ContentBlock[], ctx: EncodeContext): EncState {
    switch (ctx.api) {
      case 'anthropic-messages': {
        const blocks: Record<string, unknown>[] = [];
        for (const b of content) {
          if (isText(b)) {
            if (b.text.trim().length > 0) blocks.push({ type: 'text', text: sanitize(b.text) });
          } else if (isThinking(b)) {
            if (b.redacted) blocks.push({ type: 'redacted_thinking', data: b.thinkingSignature });
            else if (b.thinking.trim().length === 0) continue;
            else if (!b.thinkingSignature || b.thinkingSignature.trim().length === 0) blocks.push({ type: 'text', text: sanitize(b.thinking) });
            else blocks.push({ type: 'thinking', thinking: sanitize(b.thinking), signature: b.thinkingSignature });
          } else if (isToolCall(b)) {
            blocks.push({ type: 'tool_use', id: b.id, name: b.name, input: b.arguments ?? {} });
          }
        }
        if (blocks.length === 0) return s;
        return this.append(s, { role: 'assistant', content: blocks }, ctx, undefined, 1);
      }
      case 'openai-completions': {
        const obj: Record<string, unknown> = { role: 'assistant', content: null };
        const text = content
          .filter(isText)
          .filter((b) => b.text.trim().length > 0)
          .map((b) => sanitize(b.text))
          .join('');
        if (text.length > 0) obj.content = text;
        const thinking = content.filter(isThinking).filter((b) => b.thinking.trim().length > 0);
        const signature = thinking[0]?.thinkingSignature;
        // The signature names the field (e.g. `reasoning_content`): untrusted, so an own property even for `__proto__`.
        if (signature) ownSet(obj, signature, thinking.map((b) => b.thinking).join('\n'));
        const calls = content.filter(isToolCall);
        if (calls.length > 0) {
          obj.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
          const details = calls
            .filter((c) => c.thoughtSignature)
            .map((c) => {
              try {
                return JSON.parse(c.thoughtSignature!) as unknown;
              } catch {
                return null;
              }
            })
            .filter(Boolean);
          if (details.length > 0) obj.reasoning_details = details;
        }
        if (text.length === 0 && calls.length === 0) return s;
        return this.append(s, obj, ctx, undefined, 1);
      }
      case 'openai-responses': {
        const items: Record<string, unknown>[] = [];
        const differentModel = msg.model !== ctx.model && msg.provider === ctx.provider && msg.api === ctx.api;
        for (const b of content) {
          if (isThinking(b)) {
            if (b.thinkingSignature) {
              try {
                items.push(JSON.parse(b.thinkingSignature) as Record<string, unknown>);
              } catch {
                // not a reasoning item: Pi would throw; skip it
              }
            }
          } else if (isText(b)) {
            const sig = parseTextSignature(b.textSignature);
            let id = sig?.id;
            if (!id) id = `msg_${s.msgIndex}`;
            else if (id.length > 64) id = `msg_${shortHash(id)}`;
            const item: Record<string, unknown> = {
              type: 'message',
              role: 'assistant',
              content: [{ type: 'output_text', text: sanitize(b.text), annotations: [] }],
              status: 'completed',
              id,
            };
            if (sig?.phase) item.phase = sig.phase;
            items.push(item);
          } else if (isToolCall(b)) {
            const [callId, rawItem] = b.id.split('|');
            const itemId = differentModel && rawItem?.startsWith('fc_') ? undefined : rawItem;
            const item: Record<string, unknown> = { type: 'function_call' };
            if (itemId !== undefined) item.id = itemId;
            Object.assign(item, { call_id: callId, name: b.name, arguments: JSON.stringify(b.arguments) });
            items.push(item);
          }
        }
        if (items.length === 0) return s;
        let t = s;
        for (const item of items) t = this.append(t, item, ctx);
        return encState(t.node, t.items, s.msgIndex + 1, t.pending, t.calls, t.seen, t.idMap, t.last);
      }
      default:
        return this.append(s, { role: 'assistant', content }, ctx, undefined, 1);
    }
  }

  /** A run of consecutive tool results, as the API sends it. */
  private encodeRun(s: EncState, run: readonly ToolResultMessage[], ctx: EncodeContext): EncState {
    switch (ctx.api) {
      case 'anthropic-messages':
        return this.append(
          s,
          {
            role: 'user',
            content: run.map((r) => ({ type: 'tool_result', tool_use_id: r.toolCallId, content: anthropicToolContent(r.content), is_error: r.isError })),
          },
          ctx,
        );
      case 'openai-completions': {
        let t = s;
        const images: Record<string, unknown>[] = [];
        for (const r of run) {
          const text = resultText(r.content);
          t = this.append(t, { role: 'tool', content: sanitize(text.length > 0 ? text : '(see attached image)'), tool_call_id: r.toolCallId }, ctx);
          for (const b of r.content) if (isImage(b)) images.push({ type: 'image_url', image_url: { url: `data:${b.mimeType};base64,${b.data}` } });
        }
        if (images.length > 0) {
          t = this.append(t, { role: 'user', content: [{ type: 'text', text: 'Attached image(s) from tool result:' }, ...images] }, ctx);
        }
        return t;
      }
      case 'openai-responses': {
        let t = s;
        for (const r of run) {
          const text = resultText(r.content);
          const imgs = r.content.filter(isImage);
          const output =
            imgs.length > 0
              ? [
                  ...(text.length > 0 ? [{ type: 'input_text', text: sanitize(text) }] : []),
                  ...imgs.map((b) => ({ type: 'input_image', detail: 'auto', image_url: `data:${b.mimeType};base64,${b.data}` })),
                ]
              : sanitize(text.length > 0 ? text : '(see attached image)');
          t = this.append(t, { type: 'function_call_output', call_id: r.toolCallId.split('|')[0], output }, ctx);
        }
        return t;
      }
      default: {
        let t = s;
        for (const r of run) t = this.append(t, { role: 'toolResult', toolCallId: r.toolCallId, content: r.content }, ctx);
        return t;
      }
    }
  }

  /**
   * Anthropic: Pi puts `cache_control` on the last block of the last message when it is a user
   * message (a string content becomes a one-block array for it). The breakpoint-carrying
   * occurrence is a copy on a new tail node; shared nodes are never mutated.
   */
  private withMessageBreakpoint(s: EncState, ctx: EncodeContext): BlockNode {
    const last = s.last;
    if (ctx.api !== 'anthropic-messages' || !last || last.role !== 'user') return s.node;
    const bp = { ttlSeconds: DEFAULT_TTL_SECONDS };
    if (typeof last.obj.content === 'string') {
      const blocks = messageBlocks(last.item, pathFor(ctx.api, last.item), { role: 'user', content: [{ type: 'text', text: last.obj.content }] }, last.origin);
      blocks[blocks.length - 1].breakpoint = bp;
      return chainOf(blocks, last.before) ?? s.node;
    }
    return s.node.withBreakpoint(bp);
  }
}

function anthropicImage(b: ImageContent): Record<string, unknown> {
  return { type: 'image', source: { type: 'base64', media_type: b.mimeType, data: b.data } };
}

/** anthropic.js `convertContentBlocks`: text only → one string; with images → blocks (placeholder text first if none). */
function anthropicToolContent(content: ToolResultMessage['content']): unknown {
  if (!content.some(isImage)) return sanitize(resultText(content));
  const blocks = content
    .map((b) => (isResultText(b) ? { type: 'text', text: sanitize(b.text) } : isImage(b) ? anthropicImage(b) : null))
    .filter((b) => b !== null);
  if (!blocks.some((b) => b.type === 'text')) blocks.unshift({ type: 'text', text: '(see attached image)' });
  return blocks;
}

/** openai-responses-shared.js parseTextSignature: `{"v":1,"id","phase"?}` JSON or a legacy plain id. */
function parseTextSignature(sig: string | undefined): { id: string; phase?: string } | undefined {
  if (!sig) return undefined;
  if (sig.startsWith('{')) {
    try {
      const p = JSON.parse(sig) as { v?: unknown; id?: unknown; phase?: unknown };
      if (p.v === 1 && typeof p.id === 'string') {
        return p.phase === 'commentary' || p.phase === 'final_answer' ? { id: p.id, phase: p.phase } : { id: p.id };
      }
    } catch {
      // legacy plain string below
    }
  }
  return { id: sig };
}

// ---------------------------------------------------------------------------------------------
// Requests, usage, prices, events
// ---------------------------------------------------------------------------------------------

/** Pi usage (already normalized per API, reference/pi.md §1) → `{uncached, cacheRead, cacheWrite, output}` tokens. */
export function usageOf(u: PiUsage | undefined): Usage | null {
  if (!u) return null;
  return { uncached: u.input, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, output: u.output };
}

type Rates = Partial<Record<keyof Prices, number>>;
const PRICE_FIELDS: Array<[keyof Prices, 'input' | 'output' | 'cacheRead' | 'cacheWrite']> = [
  ['input', 'input'],
  ['output', 'output'],
  ['cacheRead', 'cacheRead'],
  ['cacheWrite', 'cacheWrite'],
];

/**
 * USD per million tokens from one Pi usage record: `cost.<kind> / tokens × 1e6`, only for kinds with
 * tokens > 0 (Pi computes `cost.<kind> = tokens × model.cost.<kind> / 1e6`, pi-ai `models.ts` calculateCost).
 */
export function ratesOf(u: PiUsage | undefined): Rates {
  const out: Rates = {};
  if (!u?.cost) return out;
  for (const [field, kind] of PRICE_FIELDS) {
    const tokens = u[kind];
    const cost = u.cost[kind];
    // A count or cost that was not one (null, numbers.ts checkHostValues) gives no rate.
    if (tokens !== null && tokens > 0 && typeof cost === 'number') out[field] = round((cost / tokens) * 1e6);
  }
  return out;
}

const families = new Map<string, ReturnType<typeof familyFor>>();
/** The last familyOf answer (requests mostly follow one model). */
let lastFamily: { model: string; api: string; family: ReturnType<typeof familyFor> } | null = null;
function familyOf(model: string, api: string): ReturnType<typeof familyFor> {
  if (lastFamily !== null && lastFamily.model === model && lastFamily.api === api) return lastFamily.family;
  const key = `${api}\u0000${model}`;
  let f = families.get(key);
  if (!f) families.set(key, (f = familyFor(model, api)));
  lastFamily = { model, api, family: f };
  return f;
}

/** Rounded values seen (a session's rates repeat; toPrecision is slow), bounded. */
const rounded = new Map<number, number>();

/** 12 significant digits (rates computed from Pi's rounded costs). */
function round(x: number): number {
  let r = rounded.get(x);
  if (r === undefined) {
    r = Number(x.toPrecision(12));
    if (rounded.size > 4096) rounded.clear();
    rounded.set(x, r);
  }
  return r;
}

/**
 * Prices of one request: Pi's own rates (this request's `usage.cost`, else another request of the
 * same provider/model in the session); a rate never observed (no tokens of that kind) is derived
 * from the input rate with the provider family's cache multipliers (core provider-rules.json),
 * and the note says so. Undefined when neither output nor any input-side rate is known.
 */
function pricesFor(m: AssistantMessage, session: Rates, own: Rates = ratesOf(m.usage)): { prices?: Prices; note?: string } {
  // Own rates over the session's, field by field (no merged copy: this runs once per request).
  const output = own.output ?? session.output;
  if (output === undefined) return {};
  const inputRate = own.input ?? session.input;
  const cacheRead = own.cacheRead ?? session.cacheRead;
  const cacheWrite = own.cacheWrite ?? session.cacheWrite;
  const family = familyOf(m.model, m.api);
  const mult = family.multipliers;
  const input = inputRate ?? (cacheRead !== undefined ? cacheRead / mult.read : cacheWrite !== undefined ? cacheWrite / mult.write5m : undefined);
  if (input === undefined) return {};
  const prices: Prices = {
    input: round(input),
    output: round(output),
    cacheRead: round(cacheRead ?? input * mult.read),
    cacheWrite: round(cacheWrite ?? input * mult.write5m),
  };
  if (inputRate !== undefined && cacheRead !== undefined && cacheWrite !== undefined) return { prices, note: undefined };
  // PRICE_FIELDS order: input, output, cacheRead, cacheWrite (output is known here).
  const derived: string[] = [];
  if (inputRate === undefined) derived.push('input');
  if (cacheRead === undefined) derived.push('cacheRead');
  if (cacheWrite === undefined) derived.push('cacheWrite');
  return {
    prices,
    note: `prices: ${derived.join(', ')} not observed in this session (no such tokens); derived from the ${family.id} cache multipliers`,
  };
}

/** PiRequestBuilder.exportState's plain-data form. */
export interface BuilderState {
  count: number;
  taken: number;
  rates: Array<[string, Partial<Record<keyof Prices, number>>]>;
}

/** The result of reconstructing a session's agent requests. */
export interface Reconstruction {
  /** One request per assistant entry, in file order, indexed 1…n. */
  requests: LlmRequest[];
  /** Request of each assistant entry. */
  byEntry: Map<PiEntryRec, LlmRequest>;
  /** Messages-segment item count of each request (same order as `requests`). */
  messageCounts: Map<LlmRequest, number>;
}

/**
 * Builds one reconstructed LlmRequest per assistant entry (kind `agent`, evidence
 * `reconstructed`). Summary requests (compaction, branch summary) leave no trace in a 0.73 session
 * and are not requests here.
 *
 * Fields: usage from `message.usage` (null for an error with zero usage: nothing was reported);
 * prices from `usage.cost` (see pricesFor: own rates, else the same model's elsewhere in the
 * session, since Pi prices with fixed per-model rates; unobserved rates derived, with a note); `timeMs` = `message.timestamp` (taken just before the HTTP request);
 * `params.thinking` = the thinking level on the path; `cacheKey` = the session id for
 * openai-responses (Pi always sends it as `prompt_cache_key`; the file name's when the header is damaged); `error` for stopReason `error`.
 */
export function reconstructRequests(read: PiRead, encoder = new PiEncoder()): Reconstruction {
  const b = new PiRequestBuilder(read, encoder);
  b.extend();
  return { requests: b.requests, byEntry: b.byEntry, messageCounts: b.messageCounts };
}

/**
 * `reconstructRequests` continued as the entry list grows (the live tail): `extend` builds the
 * requests of the entries appended since the last call, the earlier ones are kept. The requests
 * are those a full reconstruction of the entries would build, except when an appended entry
 * gives a rate (usage.cost) a model of the session had not shown yet: earlier requests of that
 * model were priced without it, so `extend` returns false and the caller rebuilds.
 */
export class PiRequestBuilder {
  readonly requests: LlmRequest[] = [];
  readonly byEntry = new Map<PiEntryRec, LlmRequest>();
  readonly messageCounts = new Map<LlmRequest, number>();
  private readonly sessionRates = new Map<string, Rates>();
  /** Entries of `read.entries` already taken. */
  private taken = 0;

  constructor(
    private readonly read: PiRead,
    private readonly encoder = new PiEncoder(),
  ) {}

  /** What `restore` needs to continue (the persisted tail): requests built, entries taken, the session's rates per provider/model. */
  exportState(): BuilderState {
    return { count: this.requests.length, taken: this.taken, rates: [...this.sessionRates].map(([k, r]) => [k, { ...r }]) };
  }

  /**
   * A builder continuing from `state` over `read` (whose entries beyond `state.taken` are the
   * appended ones): `requests` has the length of the requests built before (their places empty),
   * so the next request gets the next index.
   */
  static restore(read: PiRead, encoder: PiEncoder, state: BuilderState): PiRequestBuilder {
    const b = new PiRequestBuilder(read, encoder);
    b.requests.length = state.count;
    b.taken = state.taken;
    for (const [k, r] of state.rates) b.sessionRates.set(k, { ...r });
    return b;
  }

  /** Builds the requests of the entries appended since the last call; false when the earlier ones must be rebuilt (see the class comment). */
  extend(): boolean {
    const read = this.read;
    const sessionRates = this.sessionRates;
    // `rates`: the session's rates object of the request's provider/model (filled by this loop,
    // read after it: the object sessionRates holds for that key).
    const assistants: Array<{ rec: PiEntryRec; m: AssistantMessage; own: Rates; rates: Rates }> = [];
    let stale = false;
    for (let i = this.taken; i < read.entries.length; i++) {
      const rec = read.entries[i];
      const e = rec.entry;
      if (e?.type !== 'message' || e.message.role !== 'assistant') continue;
      const own = ratesOf(e.message.usage);
      const key = `${e.message.provider}\u0000${e.message.model}`;
      const had = sessionRates.get(key);
      const known = had ?? {};
      assistants.push({ rec, m: e.message, own, rates: known });
      for (const [field] of PRICE_FIELDS) {
        if (known[field] === undefined && own[field] !== undefined) {
          known[field] = own[field];
          // A rate earlier requests of this model were priced without.
          if (had && this.requests.length) stale = true;
        }
      }
      sessionRates.set(key, known);
    }
    this.taken = read.entries.length;

    const { requests, byEntry, messageCounts, encoder } = this;
    for (const { rec, m, own, rates } of assistants) {
      const ctx: EncodeContext = { api: m.api, provider: m.provider, model: m.model };
      const { node, messages } = encoder.tail(rec.parent, ctx);
      const notes = [HEAD_NOTE];
      const { prices, note } = pricesFor(m, rates, own);
      if (note) notes.push(note);
      const usage = m.stopReason === 'error' && isZero(m.usage) ? null : usageOf(m.usage);
      // Pi appends the assistant entry when the message ends: the response's end.
      const ended = isoMs(rec.timestamp);
      const req: LlmRequest = {
        index: requests.length + 1,
        source: { file: read.file, line: rec.line },
        provider: m.provider,
        model: m.model,
        api: m.api,
        kind: 'agent',
        timeMs: m.timestamp ?? ended,
        evidence: 'reconstructed',
        usage,
        tail: node,
        params: { thinking: rec.sentThinking ?? rec.thinkingLevel },
        notes,
      };
      if (m.responseId) req.responseId = m.responseId;
      if (ended !== null && Number.isFinite(ended) && req.timeMs !== null && ended >= req.timeMs) req.responseEndMs = ended;
      if (m.api === 'openai-responses') req.cacheKey = piSessionId(read);
      if (prices) req.prices = prices;
      if (m.stopReason === 'error') req.error = m.errorMessage ?? 'error';
      if (m.stopReason === 'aborted') notes.push('aborted: the response was cut off');
      requests.push(req);
      byEntry.set(rec, req);
      messageCounts.set(req, messages);
    }
    return !stale;
  }
}

function isZero(u: PiUsage | undefined): boolean {
  return !u || (u.input === 0 && u.output === 0 && u.cacheRead === 0 && u.cacheWrite === 0);
}

/** ms since epoch of an ISO timestamp, or null. Pi's own form is read without Date.parse (fixedIsoMs). */
export function isoMs(iso: string | undefined): number | null {
  if (!iso) return null;
  const fixed = fixedIsoMs(iso);
  if (fixed !== undefined) return fixed;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

/** Digit value of `s` at `i` (0–9), else a negative number or one above 9. */
const digitAt = (s: string, i: number): number => s.charCodeAt(i) - 48;

/** The number written by the decimal digits s[from, to), or -1 when one is not a digit. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = digitAt(s, i);
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * ms since epoch of a timestamp in the form Pi writes (`Date.toISOString`:
 * `YYYY-MM-DDTHH:MM:SS.sssZ`, 24 characters), `Date.parse`'s value without its general parser;
 * undefined for any other text, and for values Date.parse would treat in a way of its own (a year
 * before 1970, day 29–31, hour 24, second 60, a month out of range): the caller then asks
 * Date.parse. Tested against Date.parse on every fixture's timestamps (test/unit/pi/iso-time.test.ts).
 */
export function fixedIsoMs(s: string): number | undefined {
  if (s.length !== 24 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90) {
    return undefined;
  }
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 7);
  const day = digits(s, 8, 10);
  const hour = digits(s, 11, 13);
  const minute = digits(s, 14, 16);
  const second = digits(s, 17, 19);
  const ms = digits(s, 20, 23);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/**
 * Transcript events for the phux checks, in file order: a phux context message (custom_message
 * with customType `phux-context` or a `<phux-context` tag; Pi appends it after the user message,
 * so placement `tail`), a compaction, and a branch (a `branch_summary` entry, or a tree movement:
 * an entry whose parent is not the previous entry in file order).
 */
export function transcriptEvents(read: PiRead, from = 0, events: TranscriptEvent[] = []): TranscriptEvent[] {
  // `from`/`events`: continue a list made for the first `from` entries (the live tail).
  for (let i = from; i < read.entries.length; i++) {
    const rec = read.entries[i];
    const timeMs = isoMs(rec.timestamp);
    const e = rec.entry;
    let ctx: { customType: string; content: string | ContentBlock[] } | null = null;
    if (e?.type === 'custom_message') ctx = e;
    else if (e?.type === 'message' && e.message.role === 'custom') ctx = e.message;
    if (ctx && isPhuxContext(ctx.customType, ctx.content)) {
      events.push({ kind: 'context', text: textOf(ctx.content), line: rec.line, placement: 'tail', timeMs });
    }
    if (e?.type === 'compaction') {
      events.push({ kind: 'compaction', line: rec.line, timeMs });
      continue;
    }
    const prev = i > 0 ? read.entries[i - 1] : null;
    const moved = prev !== null && (rec.parentId === null || (rec.parent !== null && rec.parent !== prev));
    if (e?.type === 'branch_summary' || moved) events.push({ kind: 'branch', line: rec.line, timeMs });
  }
  return events;
}
