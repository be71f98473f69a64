/**
 * PI-Desktop transcript rows → LlmRequests, each rebuilt in both system-message shapes.
 *
 * The model context (project reference `reference/botharness.md` B.1, B.2):
 *  - messages: user, assistant and tool rows in order; a tool row (`tool_call` blocks with `args`
 *    and `result`) becomes the assistant's tool call and its result. Rows a sub-agent produced
 *    (`meta.parentToolCallId` / `meta.agentName`, ADR 0062) are dropped from the parent's context,
 *    as the runtime does when it rebuilds it; they become the sub-agent's own session.
 *  - system messages: each persisted system row (`modelSystem.messageJson`, a pi-ai SystemMessage)
 *    placed as `orderSystemRows` does: before `beforeMessageId` / after `afterMessageId` when that
 *    message is already in the context, else where the row stands; exact duplicates (a retried
 *    persist) dropped.
 *  - compaction: the history before `firstKeptMessageId` is replaced by the summary (a user
 *    message), and the system state is folded into one checkpoint system message
 *    (`systemTranscriptCheckpoint`; `details.systemMessageJson` when the row has it, else the
 *    replayed state without `context_budget`, which expires at compaction).
 * One request per assistant row of the parent (a compaction row with `usage` is a summary request).
 *
 * The two shapes (pi-ai `resolveTranscript(ctx, supportsMidConvoSystemMessages)`):
 *  - collapsed (`collapseSystemMessages`): every system message replayed into the head
 *    (`getCurrentSystemMessage`: contents concatenated, sections patched by name, `null` deletes;
 *    tools removed then added), later system messages dropped;
 *  - mid-conversation: the first system message is the head, later ones stay in place as
 *    `{role:'system', content}` messages carrying their changed sections.
 * The system text is the content, then the sections in PI-Desktop's order (`runtime`,
 * `tool_activation`, `skills`, `skill:*` sorted, `context`, `context_budget`, then any other, e.g.
 * the resumable list, by name), joined by a blank line [inferred: `systemPromptContent` is not in
 * the reference]. Tools are the replayed tool set in both shapes.
 * The route's flag comes from pi.sqlite `models` (db.ts); unknown → collapsed, with a note.
 */
import { BlockNode, chainOf } from '../../core/chain.js';
import type { Block, DeltaCauseKind, Diagnostic, LlmRequest, SectionDelta, SectionSpan, Segment, Session, SystemDelta, SystemShape, TranscriptEvent, Usage } from '../../core/model.js';
import { bump } from '../../core/own.js';
import { familyFor } from '../../core/rules.js';
import { keepBytes, messageBlocks, opaqueHeadBlock } from '../../core/wire.js';
import type { RouteCompat } from './db.js';
import type { PdRead, PdRow } from './read.js';
import type { PdMessage, PdUsage, SystemMessage, ToolDecl } from './schema.js';

/** Note on every request. */
export const PD_NOTE = 'reconstructed from the PI-Desktop transcript: system prompt and tools from its system rows (modelSystem), messages from its rows';
/** Note when the route's flag is unknown. */
export const UNKNOWN_ROUTE_NOTE =
  "the route's supportsMidConvoSystemMessages is unknown (no pi.sqlite models row carries it): judged with the collapsed shape, pi-ai's default";

/** What the reader found out about routes, per `provider/model`. */
export type RouteLookup = (provider: string, model: string) => RouteCompat | undefined;

/** The normalized parent session plus its sub-agents' sessions. */
export interface PdNormalized {
  requests: LlmRequest[];
  events: TranscriptEvent[];
  turnLines: number[];
  /** Sub-agent sessions: one per parentToolCallId. */
  subagents: Array<{ id: string; agentName: string; callId: string; requests: LlmRequest[] }>;
  /** Token sums over every assistant row (parent and sub-agents), to cross-check `turns`; null once a row's count is unknown. */
  sums: { uncached: number | null; output: number | null };
  diagnostics: Diagnostic[];
  ignored: Record<string, number>;
}

interface Wrapped {
  obj: Record<string, unknown>;
  origin?: string;
}

interface MsgItem {
  kind: 'msg';
  id: string;
  line: number;
  wrapped: Wrapped[];
}

interface SysItem {
  kind: 'sys';
  id: string;
  line: number;
  sm: SystemMessage;
  /** The in-place message of the mid-conversation shape. */
  inPlace: Wrapped;
  delta: SystemDelta | null;
  sent: boolean;
}

type Item = MsgItem | SysItem;

/** Order rank of a section name (PI-Desktop `desktopSectionNames`). */
function rank(name: string): number {
  if (name === 'runtime') return 0;
  if (name === 'tool_activation') return 1;
  if (name === 'skills') return 2;
  if (name.startsWith('skill:')) return 3;
  if (name === 'context') return 4;
  if (name === 'context_budget') return 5;
  return 6;
}

/** Section names in PI-Desktop's order. */
export function orderSections(names: Iterable<string>): string[] {
  return [...names].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The replayed system state (`getCurrentSystemMessage` + `getCurrentTools`). */
interface SysState {
  content: string[];
  sections: Map<string, string>;
  tools: ToolDecl[];
}

function replay(list: readonly SystemMessage[]): SysState {
  const s: SysState = { content: [], sections: new Map(), tools: [] };
  for (const m of list) applyTo(s, m);
  return s;
}

function applyTo(s: SysState, m: SystemMessage): void {
  if (m.content) s.content.push(m.content);
  for (const [k, v] of Object.entries(m.sections ?? {})) {
    if (v === null) s.sections.delete(k);
    else s.sections.set(k, v);
  }
  const removed = new Set((m.toolsRemoved ?? []).map((t) => t.name));
  const added = m.toolsAdded ?? [];
  const addedNames = new Set(added.map((t) => t.name));
  s.tools = [...s.tools.filter((t) => !removed.has(t.name) && !addedNames.has(t.name)), ...added];
}

/** JSON string escaping of a text, without the quotes. */
const esc = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * A system block: the text as a JSON string (as the body carries it), with the byte span of each
 * section inside those bytes.
 */
function systemBlock(content: string[], sections: ReadonlyMap<string, string>, path: string): Block {
  const parts: Array<{ name: string | null; text: string }> = [];
  const c = content.join('\n\n');
  if (c) parts.push({ name: null, text: c });
  for (const name of orderSections(sections.keys())) parts.push({ name, text: sections.get(name)! });
  let text = '"';
  const spans: SectionSpan[] = [];
  parts.forEach((p, i) => {
    const sep = i ? esc('\n\n') : '';
    text += sep;
    const body = esc(p.text);
    if (p.name !== null) spans.push({ name: p.name, start: Buffer.byteLength(text, 'utf8'), end: Buffer.byteLength(text, 'utf8') + Buffer.byteLength(body, 'utf8') });
    text += body;
  });
  text += '"';
  const block: Block = {
    segment: 'system',
    item: 0,
    path,
    text,
    get bytes() {
      return Buffer.from(text, 'utf8');
    },
  };
  if (spans.length) block.sections = spans;
  return block;
}

/** Plain text of a mid-conversation system message: its content and its non-null sections. */
function inPlaceText(m: SystemMessage): string {
  const parts: string[] = [];
  if (m.content) parts.push(m.content);
  const secs = m.sections ?? {};
  for (const name of orderSections(Object.keys(secs))) if (secs[name] !== null) parts.push(secs[name]!);
  return parts.join('\n\n');
}

function toolBlock(item: number, t: ToolDecl): Block {
  const text = JSON.stringify({ type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.parameters ?? {} } });
  return {
    segment: 'tools',
    item,
    path: `tools[${item}]`,
    text,
    get bytes() {
      return Buffer.from(text, 'utf8');
    },
  };
}

/** Adds a row's usage to the sums (an unknown count makes its sum unknown). */
function addSums(sums: PdNormalized['sums'], u: Usage): void {
  sums.uncached = sums.uncached === null || u.uncached === null ? null : sums.uncached + u.uncached;
  sums.output = sums.output === null || u.output === null ? null : sums.output + u.output;
}

function usageOf(u: PdUsage | undefined): Usage | null {
  if (!u) return null;
  // host-core's name when present, else pi-ai's, else 0; null (not a count, numbers.ts checkHostValues) stays unknown.
  const pick = (a: number | null | undefined, b: number | null | undefined) => (a !== undefined ? a : b !== undefined ? b : 0);
  if (u.inputTokens === undefined && u.input === undefined && u.cacheReadTokens === undefined && u.cacheRead === undefined) return null;
  // pi-ai's `input` (and host-core's inputTokens, copied from it) is the uncached input.
  return { uncached: pick(u.inputTokens, u.input), cacheRead: pick(u.cacheReadTokens, u.cacheRead), cacheWrite: pick(u.cacheWriteTokens, u.cacheWrite), output: pick(u.outputTokens, u.output) };
}

/** The wire API a PI-Desktop provider id most likely speaks (pi-ai providers; relays speak Chat Completions). */
function apiOf(provider: string, model: string): string {
  if (/anthropic|claude/i.test(provider) || (/claude/i.test(model) && !/openrouter|relay/i.test(provider))) return 'anthropic-messages';
  return 'openai-completions';
}

const timeOf = (s: string | null | undefined): number | null => {
  if (!s) return null;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : null;
};

/** Message objects of one transcript row (a tool row: the tool calls, then one result each). */
function wrap(row: PdMessage): Wrapped[] {
  const parts = (row.blocks ?? []) as Array<Record<string, unknown>>;
  if (row.role === 'tool') {
    const calls = parts.filter((b) => b.type === 'tool_call');
    if (!calls.length) return [{ obj: { role: 'toolResult', toolName: row.toolName ?? '', content: parts } }];
    const out: Wrapped[] = [{ obj: { role: 'assistant', content: calls.map((c) => ({ type: 'toolCall', id: c.callId ?? '', name: row.toolName ?? '', arguments: c.args ?? {} })) } }];
    for (const c of calls) {
      const result = c.result;
      out.push({
        obj: {
          role: 'toolResult',
          toolCallId: c.callId ?? '',
          toolName: row.toolName ?? '',
          content: [{ type: 'text', text: typeof result === 'string' ? result : (JSON.stringify(result ?? null) ?? 'null') }],
          isError: row.isError ?? c.status === 'error',
        },
      });
    }
    return out;
  }
  const content = parts.map((b) => {
    if (b.type === 'text') return { type: 'text', text: b.text ?? '' };
    if (b.type === 'thinking') return { type: 'thinking', thinking: b.text ?? '' };
    if (b.type === 'tool_call') return { type: 'toolCall', id: b.callId ?? '', name: row.toolName ?? '', arguments: b.args ?? {} };
    return b;
  });
  return [{ obj: { role: row.role, content } }];
}

/** What the transcript rows just before a system row show about why it was written. */
interface Context {
  /** The last message row of the parent before the system row. */
  last: { row: PdMessage; line: number } | null;
  /** The latest Task (delegation) tool row, with its line. */
  lastTask: { row: PdMessage; line: number } | null;
  /** A sub-agent row came after the latest parent row. */
  subagentSince: string | null;
}

function firstCall(row: PdMessage): Record<string, unknown> | undefined {
  return (row.blocks as Array<Record<string, unknown>>).find((b) => b.type === 'tool_call');
}

const rec = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** The cause of a delta, where the transcript shows it. */
function causeOf(sections: SectionDelta[], toolsAdded: string[], ctx: Context): SystemDelta['cause'] {
  const names = sections.map((s) => s.name);
  const lastTool = ctx.last?.row.role === 'tool' ? ctx.last : null;
  const settled = names.some((n) => /resumable/.test(n)) || (lastTool && ctx.lastTask === lastTool) || ctx.subagentSince !== null;
  if (settled) {
    const task = ctx.lastTask;
    const call = task ? firstCall(task.row) : undefined;
    const args = rec(call?.args);
    const result = rec(call?.result);
    const who = [typeof args.agent === 'string' ? args.agent : ctx.subagentSince, typeof result.delegationId === 'string' ? result.delegationId : null].filter(Boolean).join(' / ');
    const what = typeof args.objective === 'string' ? `: ${args.objective}` : '';
    return { kind: 'delegation-settled', detail: `delegation ${who || '(unnamed)'}${what} settled${task ? ` (Task at line ${task.line})` : ''}` };
  }
  const skill = names.find((n) => n === 'skills' || n.startsWith('skill:'));
  if (skill && lastTool && /skill/i.test(lastTool.row.toolName ?? '')) {
    const a = rec(firstCall(lastTool.row)?.args);
    return { kind: 'skill-activation', detail: `${lastTool.row.toolName}${typeof a.name === 'string' ? ` ${a.name}` : ''} at line ${lastTool.line} activated ${skill}` };
  }
  if ((toolsAdded.length || names.includes('tool_activation')) && lastTool) {
    return { kind: 'tool-activation', detail: `${lastTool.row.toolName ?? 'a tool'} at line ${lastTool.line} activated ${toolsAdded.length ? toolsAdded.join(', ') : 'tools'}` };
  }
  if (toolsAdded.length || names.includes('tool_activation')) return { kind: 'tool-activation', detail: `tool activation: ${toolsAdded.join(', ') || 'tool_activation section'}` };
  if (names.includes('context_budget')) return { kind: 'context-budget', detail: 'the context-budget reminder (appended mid-turn by the runtime)' };
  return null;
}

/** Section changes of `m` against the state before it. */
function sectionDeltas(before: SysState, m: SystemMessage): SectionDelta[] {
  const out: SectionDelta[] = [];
  for (const name of orderSections(Object.keys(m.sections ?? {}))) {
    const v = m.sections![name];
    const had = before.sections.get(name);
    if (v === null) {
      if (had !== undefined) out.push({ name, change: 'removed' });
    } else if (had === undefined) out.push({ name, change: 'added' });
    else if (had !== v) out.push({ name, change: 'replaced' });
  }
  return out;
}

/**
 * Builds the chains of one context in one shape, continuing the previous request's chain: the
 * message list is kept between calls and redone only from the first context item that changed
 * (`changedFrom`), and the chain's nodes are reused up to there while the head is the same. A
 * session costs time linear in its rows plus, per head change (every system delta, collapsed),
 * one rebuild of the conversation after the head: a new head changes H_1 and so every chained hash
 * after it, and each request reports the hash of its whole chain, so the conversation is hashed
 * again once per delta epoch (the requests of one epoch share it): Θ(N²/K) blocks hashed for N
 * turns with a delta every K. It cannot be less while the prefix hash chains from the head; what
 * is avoided is serializing the messages again: a block hashed a second time keeps its bytes
 * (wire.ts keepBytes). In the mid-conversation shape a delta leaves the head as it is (unless it
 * changes the tools) and only what follows the delta's place is hashed again.
 */
class ShapeEncoder {
  private heads = new Map<string, BlockNode | null>();
  private head: BlockNode | null = null;
  private wrapped: Wrapped[] = [];
  /** Per context item k (and one past the last): messages before it, and whether a system item precedes it. */
  private wrappedAt: number[] = [0];
  private sysBefore: boolean[] = [false];
  /** Chain node after each message of `wrapped` (same length once built). */
  private nodes: Array<BlockNode | null> = [];
  /**
   * The blocks of each message of `wrapped`, with the message and index offset they were built
   * for: a head change re-hashes the conversation after it, but its blocks stay the same.
   */
  private blocks: Array<{ w: Wrapped; offset: number; blocks: Block[] }> = [];

  /** The head built for the last call's system items (the same array: unchanged), API and model. */
  private lastHead: { sys: readonly SysItem[]; api: string; model: string; head: BlockNode | null } | null = null;

  /** @param memo false: the head replayed and the messages rebuilt on every call (the straightforward walk) */
  constructor(
    private readonly shape: SystemShape,
    private readonly memo = true,
  ) {}

  /**
   * The head chain (system block and tools) of the replayed system items: built once per distinct
   * head (`heads`), and replayed only when the system items changed since the last call (`sys` is a
   * new array then: normalizePd's sysItems), not on every request.
   */
  private headOf(sys: readonly SysItem[], api: string, model: string): BlockNode | null {
    const last = this.lastHead;
    if (this.memo && last && last.sys === sys && last.api === api && last.model === model) return last.head;
    const anthropic = api === 'anthropic-messages';
    const state = replay(sys.map((s) => s.sm));
    const headState = this.shape === 'collapsed' || !sys.length ? state : { ...replay([sys[0].sm]), tools: state.tools };
    const order = familyFor(model, api).renderOrder;
    const sysPath = anthropic ? 'system[0].text' : 'messages[0].content';
    const key = JSON.stringify([api, order, headState.content, [...headState.sections], headState.tools]);
    let head = this.heads.get(key);
    if (head === undefined) {
      const blocks: Block[] = [];
      if (sys.length) {
        const b = systemBlock(headState.content, headState.sections, sysPath);
        if (anthropic) b.breakpoint = { ttlSeconds: 300 };
        blocks.push(b);
      }
      headState.tools.forEach((t, i) => blocks.push(toolBlock(i, t)));
      if (anthropic && headState.tools.length) blocks[blocks.length - 1].breakpoint = { ttlSeconds: 300 };
      const r = (s: Segment) => order.indexOf(s);
      blocks.sort((x, y) => r(x.segment as Segment) - r(y.segment as Segment));
      if (!blocks.length) blocks.push(opaqueHeadBlock('pi-desktop:no-system-rows'));
      head = chainOf(blocks);
      this.heads.set(key, head);
    }
    this.lastHead = { sys, api, model, head };
    return head;
  }

  /**
   * @param sys the system items of `items`, in order
   * @param changedFrom lowest index of `items` changed (inserted, replaced) since the last call
   */
  chain(items: readonly Item[], sys: readonly SysItem[], changedFrom: number, api: string, model: string): BlockNode | null {
    const anthropic = api === 'anthropic-messages';
    const head = this.headOf(sys, api, model);
    // The message list, redone from the first changed item.
    const from = this.memo ? Math.min(changedFrom, this.wrappedAt.length - 1) : 0;
    const kept = this.wrappedAt[from];
    this.wrapped.length = kept;
    this.wrappedAt.length = from;
    this.sysBefore.length = from + 1;
    let seenSys = this.sysBefore[from];
    for (let k = from; k < items.length; k++) {
      this.wrappedAt[k] = this.wrapped.length;
      this.sysBefore[k] = seenSys;
      const it = items[k];
      if (it.kind === 'msg') for (const w of it.wrapped) this.wrapped.push(w);
      else if (!seenSys) seenSys = true;
      else if (this.shape === 'mid-conversation') this.wrapped.push(it.inPlace);
    }
    this.wrappedAt[items.length] = this.wrapped.length;
    this.sysBefore[items.length] = seenSys;
    this.wrappedAt.length = items.length + 1;
    this.sysBefore.length = items.length + 1;
    // Reuse the nodes of the unchanged messages while the head is the same.
    const i = head === this.head ? Math.min(kept, this.nodes.length) : 0;
    /** Messages before this one were hashed before: a new head hashes them again. */
    const hashed = this.memo ? Math.min(kept, this.nodes.length) : 0;
    this.nodes.length = i;
    this.head = head;
    const offset = anthropic || !sys.length ? 0 : 1;
    let node: BlockNode | null = i ? this.nodes[i - 1] : head;
    this.blocks.length = Math.min(this.blocks.length, this.wrapped.length);
    for (let j = i; j < this.wrapped.length; j++) {
      const w = this.wrapped[j];
      let built = this.blocks[j];
      if (!built || built.w !== w || built.offset !== offset) {
        built = { w, offset, blocks: messageBlocks(j, `messages[${j + offset}]`, w.obj, w.origin) };
        this.blocks[j] = built;
      } else if (j < hashed) {
        // Hashed again after a new head (a delta in the collapsed shape): from now on copied, not serialized.
        for (const b of built.blocks) keepBytes(b);
      }
      for (const b of built.blocks) node = new BlockNode(node, b);
      this.nodes.push(node);
    }
    const last = this.wrapped[this.wrapped.length - 1];
    if (anthropic && node && last && last.obj.role === 'user') node = node.withBreakpoint({ ttlSeconds: 300 });
    return node;
  }
}

/**
 * Normalizes a read transcript.
 * @param route the route flag lookup (pi.sqlite `models`)
 * @param fallback provider and model of the session row, for rows without meta
 * @param fromScratch every request's system items, deltas, heads and messages found and built
 *   again from all items (the straightforward walk the carried state must equal;
 *   test/unit/pi-desktop/request-state.test.ts)
 */
export function normalizePd(
  read: PdRead,
  route: RouteLookup,
  fallback: { provider: string | null; model: string | null } = { provider: null, model: null },
  fromScratch = false,
): PdNormalized {
  const file = read.file;
  const out: PdNormalized = { requests: [], events: [], turnLines: [], subagents: [], sums: { uncached: 0, output: 0 }, diagnostics: [], ignored: {} };
  let items: Item[] = [];
  /** The system items of `items`, in order: a new array whenever they change (the encoders compare it by identity). */
  let sysItems: SysItem[] = [];
  /** How many of `sysItems` no request has sent yet (their deltas go to the next request). */
  let unsent = 0;
  const systemItems = () => (fromScratch ? items.filter((i): i is SysItem => i.kind === 'sys') : sysItems);
  const seen = new Set<string>();
  const enc = { collapsed: new ShapeEncoder('collapsed', !fromScratch), 'mid-conversation': new ShapeEncoder('mid-conversation', !fromScratch) } as const;
  const ctx: Context = { last: null, lastTask: null, subagentSince: null };
  const subs = new Map<string, { agentName: string; rows: Array<{ row: PdMessage; line: number }> }>();
  let lastTime: number | null = null;
  let provider = fallback.provider ?? 'unknown';
  let model = fallback.model ?? 'unknown';
  const unknownRoutes = new Set<string>();

  /** Lowest index of `items` changed since the last request was built (both encoders are called per request). */
  let changedFrom = 0;
  const position = (id: string) => items.findIndex((i) => i.id === id);
  const emit = (line: number, kind: LlmRequest['kind'], usage: Usage | null, time: number | null, end: number | null, error?: string, extraNote?: string) => {
    const api = apiOf(provider, model);
    const compat = route(provider, model);
    const used: SystemShape = compat ? (compat.supportsMidConvoSystemMessages ? 'mid-conversation' : 'collapsed') : 'collapsed';
    const other: SystemShape = used === 'collapsed' ? 'mid-conversation' : 'collapsed';
    const sys = systemItems();
    const tail = enc[used].chain(items, sys, changedFrom, api, model);
    const alternate = enc[other].chain(items, sys, changedFrom, api, model);
    changedFrom = items.length;
    const notes = [PD_NOTE];
    if (!compat) {
      notes.push(UNKNOWN_ROUTE_NOTE);
      unknownRoutes.add(`${provider}/${model}`);
    }
    if (extraNote) notes.push(extraNote);
    const req: LlmRequest = {
      index: out.requests.length + 1,
      source: { file, line },
      provider,
      model,
      api,
      kind,
      timeMs: time,
      evidence: 'reconstructed',
      usage,
      tail,
      params: {},
      notes,
      systemShape: { used, known: !!compat, source: compat ? compat.source : 'unknown: collapsed by default', alternate },
    };
    if (end !== null) req.responseEndMs = end;
    if (error) req.error = error;
    const deltas: SystemDelta[] = [];
    if (unsent || fromScratch) {
      for (const it of sys) {
        if (it.sent) continue;
        it.sent = true;
        if (it.delta) deltas.push(it.delta);
      }
      unsent = 0;
    }
    if (deltas.length) req.systemDeltas = deltas;
    out.requests.push(req);
  };

  const addSystem = (r: Extract<PdRow, { kind: 'system' }>) => {
    const json = r.modelSystem.messageJson;
    if (seen.has(json)) {
      out.diagnostics.push({ file, line: r.line, severity: 'info', message: `system row ${r.row.id} repeats an earlier system row byte for byte (a retried persist): dropped, as orderSystemRows does` });
      bump(out.ignored, 'system:duplicate');
      return;
    }
    seen.add(json);
    const before = replay(systemItems().map((s) => s.sm));
    const isFirst = !systemItems().length;
    const sections = sectionDeltas(before, r.message);
    const toolsAdded = (r.message.toolsAdded ?? []).map((t) => t.name);
    const toolsRemoved = (r.message.toolsRemoved ?? []).map((t) => t.name);
    const item: SysItem = {
      kind: 'sys',
      id: r.row.id,
      line: r.line,
      sm: r.message,
      inPlace: { obj: { role: 'system', content: inPlaceText(r.message) }, origin: 'system-delta' },
      delta: isFirst ? null : { line: r.line, id: r.row.id, sections, toolsAdded, toolsRemoved, cause: causeOf(sections, toolsAdded, ctx) },
      sent: false,
    };
    const { beforeMessageId: b, afterMessageId: a } = r.modelSystem;
    let at = items.length;
    if (b !== undefined && position(b) >= 0) at = position(b);
    else if (a !== undefined && position(a) >= 0) {
      at = position(a) + 1;
      while (at < items.length && items[at].kind === 'sys') at++;
    } else if (a !== undefined) {
      out.diagnostics.push({ file, line: r.line, severity: 'warning', message: `system row ${r.row.id}: afterMessageId ${a} is not in the context before it; placed where the row stands` });
    }
    items.splice(at, 0, item);
    sysItems = items.filter((i): i is SysItem => i.kind === 'sys');
    unsent++;
    changedFrom = Math.min(changedFrom, at);
    ctx.subagentSince = null;
  };

  for (const r of read.rows) {
    if (r.kind === 'system') {
      addSystem(r);
      // Persisted before dispatch: the next request is sent after it.
      lastTime = timeOf(r.row.createdAt) ?? lastTime;
      continue;
    }
    if (r.kind === 'compaction') {
      const c = r.row;
      if (c.providerId) provider = c.providerId;
      if (c.modelId) model = c.modelId;
      const t = timeOf(c.createdAt);
      const u = usageOf(c.usage);
      if (u) {
        addSums(out.sums, u);
        emit(r.line, 'summary', u, lastTime, t, undefined, 'compaction call: the summarization prompt is not recorded; its prefix is the conversation it summarized');
      }
      const state = replay(systemItems().map((s) => s.sm));
      let checkpoint: SystemMessage;
      if (r.checkpoint) checkpoint = r.checkpoint;
      else {
        const sections: Record<string, string> = {};
        for (const name of orderSections(state.sections.keys())) if (name !== 'context_budget') sections[name] = state.sections.get(name)!;
        checkpoint = { role: 'system', content: state.content.join('\n\n'), sections, toolsAdded: state.tools };
      }
      const after = replay([checkpoint]);
      const changed: SectionDelta[] = [];
      for (const name of orderSections(new Set([...state.sections.keys(), ...after.sections.keys()]))) {
        const x = state.sections.get(name);
        const y = after.sections.get(name);
        if (x === y) continue;
        changed.push({ name, change: y === undefined ? 'removed' : x === undefined ? 'added' : 'replaced' });
      }
      const keptFrom = c.firstKeptMessageId !== undefined ? position(c.firstKeptMessageId) : -1;
      if (c.firstKeptMessageId !== undefined && keptFrom < 0) {
        out.diagnostics.push({ file, line: r.line, severity: 'warning', message: `compaction ${c.id}: firstKeptMessageId ${c.firstKeptMessageId} is not in the context; nothing kept but the summary` });
      }
      const kept = keptFrom >= 0 ? items.slice(keptFrom).filter((i): i is MsgItem => i.kind === 'msg') : [];
      const cp: SysItem = {
        kind: 'sys',
        id: c.id,
        line: r.line,
        sm: checkpoint,
        inPlace: { obj: { role: 'system', content: inPlaceText(checkpoint) } },
        delta: systemItems().length
          ? { line: r.line, id: c.id, sections: changed, toolsAdded: [], toolsRemoved: [], cause: { kind: 'compaction-checkpoint' as DeltaCauseKind, detail: `compaction ${c.id} folded the system messages into one checkpoint${changed.length ? ` (${changed.map((s) => `${s.name} ${s.change}`).join(', ')})` : ''}` } }
          : null,
        sent: false,
      };
      changedFrom = 0;
      sysItems = [cp];
      unsent = 1;
      items = [cp, { kind: 'msg', id: `${c.id}:summary`, line: r.line, wrapped: [{ obj: { role: 'user', content: [{ type: 'text', text: c.summary }] }, origin: 'compaction-summary' }] }, ...kept];
      out.events.push({ kind: 'compaction', line: r.line, timeMs: t });
      ctx.last = null;
      continue;
    }
    const m = r.row;
    const t = timeOf(m.createdAt);
    const sub = m.meta?.parentToolCallId ?? (m.meta?.agentName !== undefined ? `agent:${m.meta.agentName}` : undefined);
    if (sub !== undefined) {
      const s = subs.get(sub) ?? { agentName: m.meta?.agentName ?? 'subagent', rows: [] };
      s.rows.push({ row: m, line: r.line });
      subs.set(sub, s);
      bump(out.ignored, 'subagent-row');
      ctx.subagentSince = s.agentName;
      const u = usageOf(m.meta?.usage);
      if (u) {
        addSums(out.sums, u);
      }
      continue;
    }
    if (m.meta?.providerId) provider = m.meta.providerId;
    if (m.meta?.modelId) model = m.meta.modelId;
    if (m.role === 'assistant') {
      const u = usageOf(m.meta?.usage);
      if (u) {
        addSums(out.sums, u);
      }
      const err = m.meta?.error !== undefined ? (typeof m.meta.error === 'string' ? m.meta.error : JSON.stringify(m.meta.error)) : m.meta?.status === 'error' ? 'error' : undefined;
      emit(r.line, 'agent', u, lastTime ?? t, t, err);
    } else if (m.role === 'user') out.turnLines.push(r.line);
    else if (m.role !== 'tool') bump(out.ignored, `message:${m.role}`);
    if (m.role === 'user' || m.role === 'assistant' || m.role === 'tool') {
      changedFrom = Math.min(changedFrom, items.length);
      items.push({ kind: 'msg', id: m.id, line: r.line, wrapped: wrap(m) });
      ctx.last = { row: m, line: r.line };
      if (m.role === 'tool' && /^task$/i.test(m.toolName ?? '')) ctx.lastTask = ctx.last;
      ctx.subagentSince = null;
    }
    if (t !== null) lastTime = t;
  }
  for (const r of unknownRoutes) {
    out.diagnostics.push({ file, line: 1, severity: 'info', message: `route ${r}: supportsMidConvoSystemMessages unknown (no pi.sqlite models row carries it); requests judged with the collapsed shape` });
  }
  for (const [callId, s] of subs) out.subagents.push({ id: `${read.header?.sessionId ?? 'session'}:${s.agentName}:${callId}`, agentName: s.agentName, callId, requests: subagentRequests(file, s.agentName, s.rows, provider, model) });
  return out;
}

/** A sub-agent's requests: its rows as messages behind an opaque head (its system prompt is not recorded). */
function subagentRequests(file: string, agent: string, rows: Array<{ row: PdMessage; line: number }>, provider0: string, model0: string): LlmRequest[] {
  const out: LlmRequest[] = [];
  let node: BlockNode | null = new BlockNode(null, opaqueHeadBlock(`pi-desktop:subagent:${agent}`));
  let n = 0;
  let last: number | null = null;
  for (const { row, line } of rows) {
    const t = timeOf(row.createdAt);
    if (row.role === 'assistant') {
      const provider = row.meta?.providerId ?? provider0;
      const model = row.meta?.modelId ?? model0;
      out.push({
        index: out.length + 1,
        source: { file, line },
        provider,
        model,
        api: apiOf(provider, model),
        kind: 'agent',
        timeMs: last ?? t,
        responseEndMs: t ?? undefined,
        evidence: 'reconstructed',
        usage: usageOf(row.meta?.usage),
        tail: node,
        params: {},
        notes: [`sub-agent ${agent}: head opaque (its system prompt is not in the transcript); messages from its rows`],
      });
    }
    for (const w of wrap(row)) {
      for (const b of messageBlocks(n, `messages[${n}]`, w.obj, w.origin)) node = new BlockNode(node, b);
      n++;
    }
    if (t !== null) last = t;
  }
  return out;
}
