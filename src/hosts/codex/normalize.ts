/**
 * Codex rollout → LlmRequests (reconstructed mode; reference/claude-code-codex.md §2).
 *
 * One request per model response. Codex 0.169 writes a `token_usage_record` line per response
 * (response id + that response's usage); older rollouts only have `token_count` events, of which
 * the ones with `info: null` and the re-emitted copies (total unchanged) are dropped, the usage
 * being `last_token_usage` or else the difference of the cumulative totals (§2.2).
 *
 * The request's input is rebuilt from the `response_item` lines: the items recorded since the
 * last `compacted` line (whose `replacement_history` replaces everything before it), up to the
 * response's own output items (assistant messages, reasoning, tool calls written just before its
 * usage line). Each item goes out as recorded minus Codex's internal
 * `internal_chat_message_metadata_passthrough` field, in the body's key order (wireItem; observed:
 * every such item of the 0.169 recordings equals the body's input item byte for byte). Not recorded:
 * the built-in tool schemas and the instructions text as sent (the first developer input item;
 * session_meta's `base_instructions` is the model's full prompt, which Codex trims before
 * sending), so tools and instructions form one opaque head whose label changes when the recorded
 * instructions change; the leading developer items after them are system blocks 1…, as on the
 * wire. A response followed by a `compacted` line is the compaction call (kind `summary`; its
 * compaction prompt is not recorded).
 * Codex sets `prompt_cache_key` to the session id (observed in every body): the conversation id,
 * except in a sub-agent, which keeps its parent's session id (session_meta `session_id`).
 */
import { createHash } from 'node:crypto';
import { BlockNode } from '../../core/chain.js';
import type { Block, LlmRequest, TranscriptEvent, Usage } from '../../core/model.js';
import { messageBlocks, opaqueHeadBlock } from '../../core/wire.js';
import { countOr, minusKnown } from '../numbers.js';
import { codexIdOfFile } from './locate.js';
import type { CxRead } from './read.js';
import type { TokenUsage } from './schema.js';

export const HEAD_NOTE = 'head opaque: Codex does not record the tool schemas nor the instructions as sent';
/** What of the request parameters the rollout gives (checked against every recorded body). */
export const PARAMS_NOTE = 'params: model and reasoning.effort from turn_context; reasoning.summary, tool_choice, parallel_tool_calls and include are not recorded';
const OUTPUT_TYPES = new Set(['reasoning', 'function_call', 'custom_tool_call', 'web_search_call', 'local_shell_call', 'image_generation_call', 'tool_search_call']);
/** Fields Codex keeps in the rollout that the API never sees. */
const INTERNAL_FIELDS = ['internal_chat_message_metadata_passthrough'];

const isOutput = (it: Record<string, unknown>) => OUTPUT_TYPES.has(String(it.type)) || (it.type === 'message' && it.role === 'assistant');
const isLeading = (it: Record<string, unknown>) => it.type === 'message' && (it.role === 'developer' || it.role === 'system');

/**
 * The item as the API receives it: without Codex's internal fields, in the recorded key order.
 * `replacement`: an item of a `compacted` line's `replacement_history`, which stores a message's
 * keys as type, role, id, content while the body sends them as Codex serializes `response_item`s
 * (type, status, id, role, content, then the rest; observed on the 0.169 recordings).
 */
function wireItem(it: Record<string, unknown>, replacement = false): Record<string, unknown> {
  const keys = Object.keys(it).filter((k) => !INTERNAL_FIELDS.includes(k));
  if (replacement && it.type === 'message') {
    const head = ['type', 'status', 'id', 'role', 'content'].filter((k) => k in it);
    const order = [...head, ...keys.filter((k) => !head.includes(k))];
    if (order.length === Object.keys(it).length && order.every((k, i) => Object.keys(it)[i] === k)) return it;
    const out: Record<string, unknown> = {};
    for (const k of order) out[k] = it[k];
    return out;
  }
  if (keys.length === Object.keys(it).length) return it;
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = it[k];
  return out;
}

/** OpenAI usage (input includes cached) → `{uncached, cacheRead, cacheWrite, output}` tokens. */
export function usageOf(u: TokenUsage): Usage {
  // A count that was not one is null (numbers.ts checkHostValues): unknown, and so is what is derived from it.
  const read = countOr(u.cached_input_tokens);
  const write = countOr(u.cache_write_input_tokens);
  const uncached = minusKnown(u.input_tokens, read, write);
  return { uncached: uncached === null ? null : Math.max(0, uncached), cacheRead: read, cacheWrite: write, output: u.output_tokens };
}

function minus(a: TokenUsage, b: TokenUsage | undefined): TokenUsage {
  if (!b) return a;
  return {
    input_tokens: minusKnown(a.input_tokens, b.input_tokens),
    cached_input_tokens: minusKnown(countOr(a.cached_input_tokens), countOr(b.cached_input_tokens)),
    cache_write_input_tokens: minusKnown(countOr(a.cache_write_input_tokens), countOr(b.cache_write_input_tokens)),
    output_tokens: minusKnown(a.output_tokens, b.output_tokens),
  };
}

/** The instructions text session_meta records (`base_instructions.text`, or `instructions`). */
export function instructionsOf(read: CxRead): string {
  const b = read.meta?.base_instructions;
  return typeof b === 'string' ? b : (b?.text ?? read.meta?.instructions ?? '');
}

interface Pending {
  line: number;
  time?: string;
  responseId?: string;
  usage: Usage | null;
  model: string;
  /** Reasoning effort of the turn (turn_context), null = the model's default (not sent). */
  effort: string | null;
  items: Array<Record<string, unknown>>;
  /** Input = items[0, end). */
  end: number;
  kind: 'agent' | 'summary';
}

/**
 * Builds the requests of a rollout.
 * @param base a fork's history base (the parent rollout's first lines, `history_base`): its items
 *   (and compactions, model) are the history the fork starts from; its usage is the parent's and
 *   is not counted here
 * @param fromHead build every request's chain from its head, item by item (the straightforward
 *   walk the continued one must equal; test/unit/codex/request-chain-continued.test.ts)
 */
export function codexRequests(read: CxRead, base?: CxRead, fromHead = false): LlmRequest[] {
  const records = read.recs.some((r) => r.type === 'usage');
  const pending: Pending[] = [];
  let items: Array<Record<string, unknown>> = [];
  let runStart: number | null = null;
  let runLine = 0;
  let runTime: string | undefined;
  let model = '';
  let effort: string | null = null;
  let lastTotal: TokenUsage | undefined;
  let afterUsage = false;
  const respond = (line: number, time: string | undefined, usage: Usage | null, responseId?: string) => {
    const end = runStart ?? items.length;
    pending.push({ line: runStart !== null ? runLine : line, time: runStart !== null ? runTime : time, responseId, usage, model, effort, items, end, kind: 'agent' });
    runStart = null;
    afterUsage = true;
  };
  const baseRecs = base?.recs ?? [];
  for (let i = 0; i < baseRecs.length + read.recs.length; i++) {
    const inBase = i < baseRecs.length;
    const r = inBase ? baseRecs[i] : read.recs[i - baseRecs.length];
    // The parent's responses are the parent's requests: only its history carries over.
    if (inBase && (r.type === 'usage' || r.type === 'count')) continue;
    if (i === baseRecs.length) {
      runStart = null;
      afterUsage = false;
    }
    switch (r.type) {
      case 'turn':
        if (r.model) model = r.model;
        effort = r.effort ?? null;
        break;
      case 'item': {
        const it = wireItem(r.item);
        if (isOutput(it)) {
          if (runStart === null) {
            runStart = items.length;
            runLine = r.line;
            runTime = r.time;
          }
        } else {
          runStart = null;
          afterUsage = false;
        }
        items.push(it);
        break;
      }
      case 'usage':
        if (records) respond(r.line, r.time, usageOf(r.usage), r.responseId);
        break;
      case 'count': {
        if (records || !r.total) break;
        // Re-emitted copies (unchanged totals) are not new requests (reference §2.2).
        if (lastTotal && r.total.total_tokens === lastTotal.total_tokens && r.total.input_tokens === lastTotal.input_tokens && r.total.output_tokens === lastTotal.output_tokens) break;
        const u = r.last ?? minus(r.total, lastTotal);
        lastTotal = r.total;
        respond(r.line, r.time, usageOf(u));
        break;
      }
      case 'compacted': {
        const last = pending[pending.length - 1];
        if (last && afterUsage) last.kind = 'summary';
        items = r.history.map((x) => wireItem(x, true));
        runStart = null;
        afterUsage = false;
        break;
      }
    }
  }

  const instructions = instructionsOf(read) || (base ? instructionsOf(base) : '');
  const heads = new Map<string, BlockNode>();
  // Chain nodes by (parent node, step): an item's step is its id (a leading developer item) or id.k
  // (block k of a message), so requests that send the same items share their nodes.
  const kids = new WeakMap<BlockNode, Map<string, BlockNode>>();
  const step = (prev: BlockNode, key: string, make: () => Block): BlockNode => {
    let m = kids.get(prev);
    if (!m) kids.set(prev, (m = new Map()));
    let n = m.get(key);
    if (!n) m.set(key, (n = new BlockNode(prev, make())));
    return n;
  };
  const ids = new Map<Record<string, unknown>, number>();
  const idOf = (o: Record<string, unknown>) => {
    let id = ids.get(o);
    if (id === undefined) ids.set(o, (id = ids.size));
    return id;
  };
  // The node after each item of the last request built, with the items and head it was built
  // for: a request sending a longer run of the same items continues from its last node (the same
  // nodes a walk from the head finds), so it costs its new items, not its history. The leading
  // items of the kept ones are the same: the lead ends at the first non-leading item.
  let last: { items: Array<Record<string, unknown>>; label: string; ends: BlockNode[] } | null = null;
  const requests: LlmRequest[] = [];
  for (const p of pending) {
    const input = p.items;
    const end = p.end;
    let lead = 0;
    while (lead < end && isLeading(input[lead])) lead++;
    // Codex sends its compaction call without tools (`tools: []`, 0.169 recording body 008) and
    // OpenAI renders tools first, so that call shares no prefix with the agent requests: its head
    // is its own (on the wire it reads nothing and is cold; one head made it a false head break).
    const tools = p.kind === 'summary' ? 'tools:none' : '';
    const label = `codex:head:${createHash('sha256').update(instructions).update(tools).digest('hex').slice(0, 16)}`;
    let head = heads.get(label);
    if (!head) heads.set(label, (head = new BlockNode(null, opaqueHeadBlock(label))));
    if (fromHead || !last || last.items !== input || last.label !== label) last = { items: input, label, ends: [] };
    const ends = last.ends;
    const from = Math.min(end, ends.length);
    ends.length = from;
    let node: BlockNode = from ? ends[from - 1] : head;
    for (let i = from; i < end; i++) {
      const it = input[i];
      if (i < lead) {
        // The leading developer items are recorded as sent: system blocks after the instructions
        // (the body's system[0]), as the wire reader splits the body, so a change among them (one
        // dropped by a compaction's replacement history) is located and described, not opaque.
        node = step(node, `${idOf(it)}`, () => systemItemBlock(i + 1, `input[${i + 1}]`, it));
      } else {
        // The body's input[0] is the instructions message, so recorded item i is input[i + 1].
        messageBlocks(i - lead, `input[${i + 1}]`, it).forEach((b, k) => {
          node = step(node, `${idOf(it)}.${k}`, () => b);
        });
      }
      ends.push(node);
    }
    const req: LlmRequest = {
      index: requests.length + 1,
      source: { file: read.file, line: p.line },
      provider: 'openai',
      model: p.model,
      api: 'openai-responses',
      kind: p.kind,
      timeMs: isoMs(p.time),
      evidence: 'reconstructed',
      usage: p.usage,
      tail: node,
      // turn_context's effort is the body's reasoning.effort (absent at the model's default).
      params: p.effort !== null ? { 'reasoning.effort': p.effort } : {},
      notes: [HEAD_NOTE, PARAMS_NOTE],
    };
    // The cache key Codex sends: the session id, which a sub-agent shares with its parent
    // (session_meta `session_id`; 0.169 recordings), else the conversation id (the file name's
    // when session_meta is missing or damaged).
    const cacheKey = read.meta?.session_id ?? read.meta?.id ?? codexIdOfFile(read.file);
    if (cacheKey) req.cacheKey = cacheKey;
    if (p.responseId) req.responseId = p.responseId;
    if (p.kind === 'summary') req.notes!.push('compaction call: its compaction prompt is not recorded in the rollout');
    if (!records) req.notes!.push('usage from token_count events (re-emitted copies dropped)');
    requests.push(req);
  }
  return requests;
}

/**
 * A leading system/developer input item as a system block: the item's JSON (the wire reader's
 * block over the same item is its bytes in the body, which the rollout item equals byte for byte
 * in the 0.169 recordings), its role as origin (as the wire reader gives it).
 * @param item system block index (1-based here: the unrecorded instructions item is system[0])
 */
function systemItemBlock(item: number, path: string, it: Record<string, unknown>): Block {
  const text = JSON.stringify(it);
  return { segment: 'system', item, path, bytes: new TextEncoder().encode(text), text, origin: String(it.role) };
}

export function isoMs(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

/** Compactions (`compacted` lines), in file order. */
export function codexEvents(read: CxRead): TranscriptEvent[] {
  return read.recs.filter((r) => r.type === 'compacted').map((r) => ({ kind: 'compaction' as const, line: r.line, timeMs: isoMs(r.time) }));
}
