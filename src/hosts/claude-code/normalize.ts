/**
 * Claude Code transcript → LlmRequests (reconstructed mode).
 *
 * One request per API call (reference/claude-code-codex.md §1.3):
 *  - Claude Code 2.1.3xx records each call as an `api-request` line (schema.ts): the request is
 *    rebuilt from it exactly as sent, in Anthropic render order — the tools and system blocks of its
 *    `api-request-shape`, preceded by the billing-header system block (not recorded, computed:
 *    billingBlock), and the messages (`keep` messages of the previous request + the `tail` blobs),
 *    with a breakpoint on every block `cacheControl` names. Its response lines (`requestRef`) give
 *    usage, response id and the API's cache diagnostics; a request with no response line is a
 *    failed attempt (the `system` `api_error` line after it gives the error).
 *  - Assistant lines without `requestRef` (older versions) are grouped by (`message.id`,
 *    `requestId`), by `message.id` alone when there is no requestId (gateways); the history is
 *    replayed from the uuid/parentUuid tree (user and assistant lines root → the request's parent,
 *    consecutive lines of one role merged into one message). Those versions do not record the
 *    tools and system prompt: the chain starts with one opaque head block.
 *  - Usage: the prompt fields are the same on every line of a request; `output_tokens` is taken
 *    from the line with the largest value (earlier lines of a streamed response carry a partial
 *    count; reference §1.3).
 *  - `progress` lines (`data.type: "agent_progress"`) copy sub-agent responses into the main file;
 *    they are requests only when the sub-agent's own file is absent (`progressCopies`).
 */
import { createHash } from 'node:crypto';
import { BlockNode } from '../../core/chain.js';
import type { Block, CacheBreakpoint, Diagnostic, LlmRequest, TranscriptEvent, Usage } from '../../core/model.js';
import { familyFor } from '../../core/rules.js';
import { messageBlocks, opaqueHeadBlock } from '../../core/wire.js';
import { countOr } from '../numbers.js';
import { plural } from '../../plural.js';
import type { CcRead, CcRec } from './read.js';
import type { ApiRequestLine, AssistantLine, CcUsage, ShapeLine } from './schema.js';

/** Label of the opaque head of versions that do not record tools and system prompt. */
export const HEAD_LABEL = 'claude-code:head';
export const HEAD_NOTE = 'head opaque: this Claude Code version does not record the system prompt or tools';
/**
 * Request parameters compared by value (core/wire.ts PARAM_KEYS for anthropic-messages, plus the
 * family's cache-relevant `params` from provider-rules.json): the same keys wire mode reads, so
 * both modes compare the same values (checked on every recorded body by the ground-truth test).
 */
const PARAM_KEYS = ['thinking', 'max_tokens', 'tool_choice', 'temperature', 'top_p', 'top_k', 'output_config', 'speed'];

/**
 * The billing-header system block Claude Code puts before its system prompt (not recorded in the
 * transcript). `cc_version` ends in a 3-hex fingerprint: the first 3 hex digits of
 * sha256("59cf53e54c78" + characters 4, 7 and 20 of the first user text ("0" past its end) +
 * version). Source: public analyses of Claude Code's attribution header; verified here against
 * every recorded body of test/fixtures/claude-code (2.1.328, main session and sub-agent).
 * @param firstText the first text block of messages[0] that is not a `<system-reminder>`
 */
export function billingText(firstText: string, version: string, entrypoint: string, subagent: boolean): string {
  const chars = [4, 7, 20].map((i) => firstText[i] ?? '0').join('');
  const fp = createHash('sha256').update(`59cf53e54c78${chars}${version}`).digest('hex').slice(0, 3);
  return `x-anthropic-billing-header: cc_version=${version}.${fp}; cc_entrypoint=${entrypoint};${subagent ? ' cc_is_subagent=true;' : ''}`;
}

/** The first user text the billing fingerprint is computed from. */
export function firstUserText(messages: Array<Record<string, unknown>>): string {
  const m = messages[0];
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (!Array.isArray(m.content)) return '';
  for (const b of m.content as Array<Record<string, unknown>>) {
    if (b?.type === 'text' && typeof b.text === 'string' && !b.text.startsWith('<system-reminder>')) return b.text;
  }
  return '';
}

/** Anthropic usage → `{uncached, cacheRead, cacheWrite, output}` tokens (input excludes cache). */
export function usageOf(u: CcUsage | null | undefined, output: number | null): Usage | null {
  if (!u) return null;
  // A count that was not one is null (numbers.ts checkHostValues): unknown, not 0.
  return {
    uncached: countOr(u.input_tokens),
    cacheRead: countOr(u.cache_read_input_tokens),
    cacheWrite: countOr(u.cache_creation_input_tokens),
    output,
  };
}

/** The lines of one API response (one request). */
export interface ResponseGroup {
  key: string;
  lines: Array<{ line: number; v: AssistantLine }>;
  /** Largest output_tokens over the lines (the final count); null when a line's was not a count (unknown). */
  output: number | null;
  fromProgress: boolean;
}

/** One request under construction. */
interface Slot {
  /** Line that orders the request (the api-request line, or the first response line). */
  orderLine: number;
  api?: { line: number; v: ApiRequestLine };
  group?: ResponseGroup;
  error?: string;
}

/** Trie of chain nodes: (parent node, block key) → node, so requests share their common prefix. */
class ChainTrie {
  private readonly roots = new Map<string, BlockNode>();
  private readonly kids = new WeakMap<BlockNode, Map<string, BlockNode>>();
  node(prev: BlockNode | null, key: string, make: () => Block): BlockNode {
    let m = prev ? this.kids.get(prev) : this.roots;
    if (!m) this.kids.set(prev!, (m = new Map()));
    let n = m.get(key);
    if (!n) m.set(key, (n = new BlockNode(prev, make())));
    return n;
  }
}

const ttlOf = (v: { ttl?: string } | undefined): CacheBreakpoint => ({ ttlSeconds: v?.ttl === '1h' ? 3600 : 300 });

/** What normalize returns for one file. */
export interface CcRequests {
  /** Each with `hostMiss` where the response line carries `message.diagnostics.cache_miss_reason`. */
  requests: LlmRequest[];
  diagnostics: Diagnostic[];
}

/**
 * Builds the requests of one transcript file.
 * @param progressCopies count `agent_progress` copies as requests (the sub-agent's file is absent)
 * @param fromHead build every request's chain from its head, node by node: an api-request's from
 *   its messages, an older version's from its whole uuid path (the straightforward walks the
 *   continued ones must equal; test/unit/claude-code/api-request-replay.test.ts, tree-replay.test.ts)
 */
export function ccRequests(read: CcRead, opts: { subagent: boolean; progressCopies: boolean; fromHead?: boolean }): CcRequests {
  const diagnostics: Diagnostic[] = [];
  const shapes = new Map<string, ShapeLine>();
  const blobs = new Map<string, Record<string, unknown>>();
  const slots: Slot[] = [];
  const byApiId = new Map<string, Slot>();
  const groups = new Map<string, ResponseGroup>();
  let prevMessageCount = 0;
  let lastSlot: Slot | undefined;

  const addResponse = (line: number, v: AssistantLine, fromProgress: boolean) => {
    const id = v.message.id;
    if (!id) return;
    const key = `${id}\u0000${v.requestId ?? ''}`;
    let g = groups.get(key);
    if (!g) {
      g = { key, lines: [], output: 0, fromProgress };
      groups.set(key, g);
      const slot = v.requestRef ? byApiId.get(v.requestRef) : undefined;
      if (slot && !slot.group) slot.group = g;
      else slots.push({ orderLine: line, group: g });
    }
    g.lines.push({ line, v });
    const out = countOr(v.message.usage?.output_tokens);
    g.output = g.output === null || out === null ? null : Math.max(g.output, out);
  };

  for (const r of read.recs) {
    switch (r.type) {
      case 'api-request-shape':
        shapes.set(r.v.shapeHash, r.v);
        break;
      case 'api-request-blob':
        blobs.set(r.v.hash, r.v.message as Record<string, unknown>);
        break;
      case 'api-request': {
        if (r.v.keep > prevMessageCount) {
          diagnostics.push({ file: read.file, line: r.line, severity: 'warning', message: `api-request keeps ${plural(r.v.keep, 'message')} but the previous request had ${prevMessageCount}; the missing ones are left out` });
        }
        // The messages themselves are replayed in the request loop below (ApiReplay), in this order.
        prevMessageCount = Math.min(r.v.keep, prevMessageCount) + r.v.tail.length;
        const slot: Slot = { orderLine: r.line, api: { line: r.line, v: r.v } };
        slots.push(slot);
        byApiId.set(r.v.id, slot);
        lastSlot = slot;
        break;
      }
      case 'assistant':
        addResponse(r.line, r.v, false);
        break;
      case 'system':
        if (r.v.subtype === 'api_error' && lastSlot?.api && !lastSlot.group && !lastSlot.error) lastSlot.error = apiErrorText(r.v.error);
        break;
      case 'progress': {
        const m = r.v.data?.message as { type?: string; message?: unknown } | undefined;
        if (opts.progressCopies && r.v.data?.type === 'agent_progress' && m?.type === 'assistant' && m.message) addResponse(r.line, m as unknown as AssistantLine, true);
        break;
      }
      default:
        break;
    }
  }

  // Claude Code writes no blob for its own responses: the assistant message of a response is
  // referenced by the hash of {role, content} built from the response's lines (canonicalHash).
  for (const g of groups.values()) {
    const content = g.lines.flatMap((l) => (Array.isArray(l.v.message.content) ? l.v.message.content : []));
    const m = { role: 'assistant', content };
    const h = canonicalHash(m);
    if (!blobs.has(h)) blobs.set(h, m);
  }

  const trie = new ChainTrie();
  const replay = new ApiReplay(blobs, !opts.fromHead);
  const tree = new TreeReplay(read.recs);
  const summaries = compactSummaries(read);
  const requests: LlmRequest[] = [];
  for (const s of slots.sort((a, b) => a.orderLine - b.orderLine)) {
    const req = s.api ? fromApiRequest(read, s, shapes, replay, trie, opts.subagent, summaries, diagnostics) : fromTree(read, s.group!, tree, trie, !!opts.fromHead);
    if (!req) continue;
    req.index = requests.length + 1;
    const diag = s.group?.lines.map((l) => l.v.message.diagnostics).filter((d) => d !== undefined && d !== null).at(-1);
    if (diag && 'cache_miss_reason' in diag) {
      const m = diag.cache_miss_reason;
      req.hostMiss = { host: 'Claude Code', type: m ? m.type : null, ...(typeof m?.cache_missed_input_tokens === 'number' ? { missedTokens: m.cache_missed_input_tokens } : {}) };
    }
    requests.push(req);
  }
  return { requests, diagnostics };
}

/** JSON with object keys sorted (recursively), no whitespace: the form Claude Code hashes blobs in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonical(x))).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The key of an `api-request-blob`: sha256 (hex) of the message as canonical JSON (keys sorted,
 * no whitespace). Observed: every blob of the 2.1.328 recordings hashes to its key this way.
 */
export function canonicalHash(message: unknown): string {
  return createHash('sha256').update(canonical(message)).digest('hex');
}

function apiErrorText(e: unknown): string {
  if (e && typeof e === 'object') {
    const o = e as { status?: unknown; formatted?: unknown; message?: unknown };
    const text = typeof o.formatted === 'string' ? o.formatted : typeof o.message === 'string' ? o.message : 'API error';
    return typeof o.status === 'number' && !text.startsWith(String(o.status)) ? `HTTP ${o.status}: ${text}` : text;
  }
  return 'API error';
}

/** Fields every request of a file shares, filled from the response lines. */
function withResponse(req: LlmRequest, g: ResponseGroup | undefined, s: Slot): void {
  if (!g) {
    req.usage = null;
    req.error = s.error ?? 'no response recorded for this request';
    return;
  }
  const first = g.lines[0].v;
  req.source.line = g.lines[0].line;
  if (first.message.id) req.responseId = first.message.id;
  req.usage = usageOf(first.message.usage, g.output);
  const split = first.message.usage?.cache_creation;
  if (split && (split.ephemeral_1h_input_tokens || split.ephemeral_5m_input_tokens)) {
    req.notes!.push(`cache write: ${countOr(split.ephemeral_5m_input_tokens) ?? 'unknown'} tokens 5 m, ${countOr(split.ephemeral_1h_input_tokens) ?? 'unknown'} tokens 1 h`);
  }
  if (first.isApiErrorMessage || first.message.model === '<synthetic>') {
    const text = first.message.content && Array.isArray(first.message.content) ? first.message.content.map((b) => (typeof b.text === 'string' ? b.text : '')).join(' ') : '';
    req.error = text || 'API error';
    req.usage = null;
  }
  if (g.fromProgress) req.notes!.push("from the main file's agent_progress copy (the sub-agent's own file is absent)");
  if (g.lines.length > 1) req.notes!.push(`${g.lines.length} transcript lines (one per content block) counted once`);
}

/**
 * The message as this request sends it. Blobs hold a user message with a string content as one
 * text block (the form it takes when it is the last message and carries the breakpoint); a
 * request where it carries no breakpoint sends the string. Observed on the 2.1.328 recordings (the
 * sub-agent's task-notification message: a block with the marker in one request, a string in the
 * next, one blob for both); every recorded body agrees with this rule (test/unit/groundtruth).
 */
function asSent(m: Record<string, unknown>, i: number, marks: Map<string, CacheBreakpoint>): Record<string, unknown> {
  const c = m.content;
  if (m.role !== 'user' || !Array.isArray(c) || c.length !== 1) return m;
  const b = c[0] as Record<string, unknown>;
  if (b?.type !== 'text' || typeof b.text !== 'string' || Object.keys(b).length !== 2 || marks.has(`messages.${i}.content.0`)) return m;
  return { ...m, content: b.text };
}

/**
 * Texts of the compaction summaries (`user` lines with `isCompactSummary`, after a
 * `compact_boundary`): the message a compaction puts at the start of the history.
 */
function compactSummaries(read: CcRead): Set<string> {
  const out = new Set<string>();
  for (const r of read.recs) {
    if (r.type !== 'user' || r.v.isCompactSummary !== true) continue;
    const c = r.v.message.content;
    if (typeof c === 'string') out.add(c);
    else
      for (const b of (c ?? []) as Array<Record<string, unknown>>) {
        if (b?.type === 'text' && typeof b.text === 'string') out.add(b.text);
      }
  }
  return out;
}

/** True when a message carries a compaction summary as one of its text blocks (or as its string content). */
function carriesSummary(m: Record<string, unknown>, summaries: Set<string>): boolean {
  if (!summaries.size || m.role !== 'user') return false;
  const c = m.content;
  if (typeof c === 'string') return summaries.has(c);
  return Array.isArray(c) && c.some((b: Record<string, unknown>) => b?.type === 'text' && typeof b.text === 'string' && summaries.has(b.text));
}

/** Signature of the cache marks on each message (index → its marks' `content…` paths and TTLs); null: a mark on `messages` this cannot place. */
function messageMarks(marks: Map<string, CacheBreakpoint>): Map<number, string> | null {
  const out = new Map<number, string>();
  for (const [key, bp] of marks) {
    if (!key.startsWith('messages')) continue;
    const m = /^messages\.(\d+)\.(.*)$/.exec(key);
    if (!m) return null;
    const i = Number(m[1]);
    out.set(i, `${out.get(i) ?? ''}${m[2]}=${bp.ttlSeconds}\u0000`);
  }
  for (const [i, sig] of out) out.set(i, sig.split('\u0000').sort().join('\u0000'));
  return out;
}

/**
 * The api-request lines' message lists, replayed in file order (each request: `keep` messages of
 * the previous one + its `tail` blobs), and the chain node after each message of the last request
 * built. A request shares the previous one's nodes up to the first message it does not keep or
 * whose cache marks differ (the trie gives the same node for the same parent and key, so
 * continuing from there is the node-by-node walk from the head, without it): a request costs its
 * new messages, not its history.
 */
class ApiReplay {
  /** Blob hashes of the last request's messages, in order. */
  readonly hashes: string[] = [];
  /** How many of `hashes` name no blob (then messages are filtered and not continued). */
  missing = 0;
  /** Chain node after each message of the last request built (empty: start from its head). */
  readonly ends: BlockNode[] = [];
  head: BlockNode | null = null;
  marks: Map<number, string> | null = null;
  /** @param continued false: every request from its head (nothing shared) */
  constructor(
    readonly blobs: Map<string, Record<string, unknown>>,
    private readonly continued: boolean,
  ) {}
  /** Moves the list to the request's messages (`keep` of the last + `tail`). */
  advance(keep: number, tail: readonly string[]): void {
    const kept = Math.min(keep, this.hashes.length);
    for (let i = kept; i < this.hashes.length; i++) if (!this.blobs.has(this.hashes[i])) this.missing--;
    this.hashes.length = kept;
    for (const h of tail) {
      this.hashes.push(h);
      if (!this.blobs.has(h)) this.missing++;
    }
  }
  /** Messages 0..n−1 that need no new node: kept (`keep`), same head, same marks. */
  shared(keep: number, head: BlockNode | null, marks: Map<number, string> | null): number {
    if (!this.continued || head !== this.head || !marks || !this.marks || this.missing > 0) return 0;
    let n = Math.min(keep, this.ends.length);
    for (const i of new Set([...marks.keys(), ...this.marks.keys()])) if (i < n && marks.get(i) !== this.marks.get(i)) n = i;
    return n;
  }
}

function fromApiRequest(
  read: CcRead,
  s: Slot,
  shapes: Map<string, ShapeLine>,
  replay: ApiReplay,
  trie: ChainTrie,
  subagent: boolean,
  summaries: Set<string>,
  diagnostics: Diagnostic[],
): LlmRequest | null {
  const a = s.api!;
  const blobs = replay.blobs;
  replay.advance(a.v.keep, a.v.tail);
  const hashes = replay.hashes;
  const shape = shapes.get(a.v.shapeHash);
  const notes: string[] = [];
  const marks = new Map<string, CacheBreakpoint>();
  for (const c of a.v.cacheControl ?? []) marks.set(c.path.join('.'), ttlOf(c.value));
  // A blob missing: the messages found, in order (their indices shift), each built again.
  const filtered = replay.missing > 0
    ? hashes.flatMap((h): Array<Record<string, unknown>> => {
        const m = blobs.get(h);
        return m ? [m] : [];
      })
    : null;
  const messageAt = (i: number) => (filtered ? filtered[i] : blobs.get(hashes[i])!);
  const count = filtered ? filtered.length : hashes.length;
  if (filtered) {
    diagnostics.push({ file: read.file, line: a.line, severity: 'warning', message: `api-request names ${plural(hashes.length - filtered.length, 'message blob')} not found in the file; left out` });
    notes.push('some messages of this request are not in the transcript');
  }
  const model = a.v.params?.model ?? s.group?.lines[0].v.message.model ?? '';
  let node: BlockNode | null = null;
  if (shape) {
    (shape.shape.tools ?? []).forEach((t, i) => {
      const bp = marks.get(`tools.${i}`);
      node = trie.node(node, `t:${a.v.shapeHash}:${i}:${bp?.ttlSeconds ?? 0}`, () => jsonBlock('tools', i, `tools[${i}]`, t, bp));
    });
    const first = firstUserText(count ? [messageAt(0)] : []);
    const billing = billingText(first, read.version ?? '', read.entrypoint ?? 'cli', subagent);
    // The billing fingerprint follows the first user text: after a compaction, the summary's.
    const fromSummary = summaries.has(first);
    node = trie.node(node, `b:${billing}:${fromSummary}`, () => {
      const b = jsonBlock('system', 0, 'system[0]', { type: 'text', text: billing });
      if (fromSummary) b.origin = 'compaction-summary';
      return b;
    });
    (shape.shape.system ?? []).forEach((b, j) => {
      const bp = marks.get(`system.${j}`);
      node = trie.node(node, `s:${a.v.shapeHash}:${j}:${bp?.ttlSeconds ?? 0}`, () => jsonBlock('system', j + 1, `system[${j + 1}]`, b, bp));
    });
    notes.push('system[0] (billing header) computed, not recorded');
  } else {
    diagnostics.push({ file: read.file, line: a.line, severity: 'warning', message: `api-request names shape ${a.v.shapeHash.slice(0, 12)} not found in the file; tools and system unknown` });
    node = trie.node(null, HEAD_LABEL, () => opaqueHeadBlock(HEAD_LABEL));
    notes.push(HEAD_NOTE);
  }
  const head = node;
  const perMessage = messageMarks(marks);
  const from = replay.shared(a.v.keep, head, perMessage);
  const ends = replay.ends;
  ends.length = from;
  if (from > 0) node = ends[from - 1];
  for (let i = from; i < count; i++) {
    const m0 = messageAt(i);
    const m = asSent(m0, i, marks);
    const blocks = messageBlocks(i, `messages[${i}]`, m, carriesSummary(m0, summaries) ? 'compaction-summary' : undefined);
    blocks.forEach((b, k) => {
      const bp = marks.get(`messages.${i}.content.${k}`);
      if (bp) b.breakpoint = bp;
      node = trie.node(node, `m:${hashes[i]}:${k}:${bp?.ttlSeconds ?? 0}`, () => b);
    });
    ends.push(node!);
  }
  replay.head = head;
  replay.marks = filtered ? null : perMessage;
  const params: LlmRequest['params'] = {};
  const p = (a.v.params ?? {}) as Record<string, unknown>;
  for (const k of new Set([...PARAM_KEYS, ...familyFor(model, 'anthropic-messages').params.map((x) => x.key)])) {
    const v = p[k];
    if (v === undefined) continue;
    params[k] = v !== null && typeof v === 'object' ? JSON.stringify(v) : (v as string | number | boolean | null);
  }
  const req: LlmRequest = {
    index: 0,
    source: { file: read.file, line: a.line },
    provider: 'anthropic',
    model,
    api: 'anthropic-messages',
    kind: 'agent',
    timeMs: isoMs(a.v.timestamp),
    evidence: 'reconstructed',
    usage: null,
    tail: node,
    params,
    notes,
  };
  withResponse(req, s.group, s);
  return req;
}

/** A block of a JSON value, serialized as Claude Code serializes the body (JSON.stringify). */
function jsonBlock(segment: 'tools' | 'system', item: number, path: string, value: unknown, breakpoint?: CacheBreakpoint): Block {
  const text = JSON.stringify(value);
  const block: Block = { segment, item, path, bytes: Buffer.from(text, 'utf8'), text };
  if (breakpoint) block.breakpoint = breakpoint;
  return block;
}

/**
 * The conversation up to a line of the tree: the chain node after its complete messages, how many
 * there are, and the message still open (the next user or assistant line may extend it).
 */
interface TreeState {
  node: BlockNode;
  count: number;
  open: { role: string; content: unknown[] } | null;
}

/** uuid/parentUuid tree of the conversation lines, for versions without `api-request` lines. */
class TreeReplay {
  private readonly byUuid = new Map<string, CcRec & { type: 'user' | 'assistant' | 'system' | 'node' }>();
  /** State after each line whose path to the root was walked without a cycle. */
  private readonly states = new Map<string, TreeState>();
  constructor(recs: CcRec[]) {
    for (const r of recs) if (r.type === 'user' || r.type === 'assistant' || r.type === 'system' || r.type === 'node') this.byUuid.set(r.v.uuid, r);
  }
  /** API messages of the path root → `parent` (user and assistant lines; a compact boundary has no parent, so the path stops there). */
  messagesBefore(parent: string | null | undefined): Array<{ role: string; content: unknown[] }> {
    const path: CcRec[] = [];
    const seen = new Set<string>();
    for (let u = parent; u && !seen.has(u); ) {
      seen.add(u);
      const r = this.byUuid.get(u);
      if (!r) break;
      path.push(r);
      u = r.v.parentUuid ?? null;
    }
    path.reverse();
    const out: Array<{ role: string; content: unknown[] }> = [];
    for (const r of path) {
      if (r.type !== 'user' && r.type !== 'assistant') continue;
      const c = r.v.message.content;
      const blocks = typeof c === 'string' ? [{ type: 'text', text: c }] : (c ?? []);
      const last = out[out.length - 1];
      // Lines of one response (one per content block) and consecutive user lines (tool results)
      // are one wire message: the API alternates roles.
      if (last && last.role === r.type) last.content.push(...blocks);
      else out.push({ role: r.type, content: [...blocks] });
    }
    return out;
  }

  /**
   * The conversation up to `parent` as messagesBefore builds it, continued from the nearest line
   * above it already walked (each line is walked once, not once per request below it); null when
   * the path meets a line twice (a cycle: messagesBefore's walk decides where it stops).
   */
  stateAt(parent: string | null | undefined, head: BlockNode, trie: ChainTrie): TreeState | null {
    const below: Array<CcRec & { type: 'user' | 'assistant' | 'system' | 'node' }> = [];
    const seen = new Set<string>();
    let state: TreeState = { node: head, count: 0, open: null };
    for (let u = parent; u; ) {
      const known = this.states.get(u);
      if (known) {
        state = known;
        break;
      }
      if (seen.has(u)) return null;
      seen.add(u);
      const r = this.byUuid.get(u);
      if (!r) break;
      below.push(r);
      u = r.v.parentUuid ?? null;
    }
    for (let j = below.length - 1; j >= 0; j--) {
      const r = below[j];
      if (r.type === 'user' || r.type === 'assistant') {
        const c = r.v.message.content;
        const blocks = typeof c === 'string' ? [{ type: 'text', text: c }] : (c ?? []);
        if (state.open && state.open.role === r.type) state = { ...state, open: { role: r.type, content: [...state.open.content, ...blocks] } };
        else if (state.open) state = { node: treeMessage(trie, state.node, state.count, state.open), count: state.count + 1, open: { role: r.type, content: [...blocks] } };
        else state = { ...state, open: { role: r.type, content: [...blocks] } };
      }
      this.states.set(r.v.uuid, state);
    }
    return state;
  }
}

/** The chain node after message `i` appended to `node` (no record of the bytes: each block's key is its serialization, so shared prefixes share nodes). */
function treeMessage(trie: ChainTrie, node: BlockNode, i: number, m: { role: string; content: unknown[] }): BlockNode {
  for (const [k, b] of messageBlocks(i, `messages[${i}]`, m).entries()) node = trie.node(node, `r:${i}:${k}:${b.text}`, () => b);
  return node;
}

function fromTree(read: CcRead, g: ResponseGroup, tree: TreeReplay, trie: ChainTrie, fromHead: boolean): LlmRequest {
  const first = g.lines[0].v;
  const head = trie.node(null, HEAD_LABEL, () => opaqueHeadBlock(HEAD_LABEL));
  const state = fromHead ? null : tree.stateAt(first.parentUuid, head, trie);
  let node: BlockNode;
  if (state) node = state.open ? treeMessage(trie, state.node, state.count, state.open) : state.node;
  else {
    node = head;
    tree.messagesBefore(first.parentUuid).forEach((m, i) => (node = treeMessage(trie, node, i, m)));
  }
  const req: LlmRequest = {
    index: 0,
    source: { file: read.file, line: g.lines[0].line },
    provider: 'anthropic',
    model: first.message.model ?? '',
    api: 'anthropic-messages',
    kind: 'agent',
    timeMs: isoMs(first.timestamp),
    evidence: 'reconstructed',
    usage: null,
    tail: node,
    params: {},
    notes: [HEAD_NOTE, 'messages replayed from the uuid tree (no api-request line)'],
  };
  if (first.isSidechain && !read.agentId) req.cacheKey = 'sidechain';
  withResponse(req, g, { orderLine: g.lines[0].line });
  return req;
}

export function isoMs(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

/** Compactions (compact_boundary lines) and branches (a line whose parent is not the previous node), in file order. */
export function ccEvents(read: CcRead): TranscriptEvent[] {
  const out: TranscriptEvent[] = [];
  for (const r of read.recs) {
    if (r.type === 'system' && r.v.subtype === 'compact_boundary') out.push({ kind: 'compaction', line: r.line, timeMs: isoMs(r.v.timestamp) });
  }
  return out;
}
