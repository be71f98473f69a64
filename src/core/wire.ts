/**
 * Wire mode: turns the exact bytes of a captured request body into prefix blocks.
 *
 * Blocks are raw byte spans of the body (never re-serialized: key order is a cause of breaks),
 * with cache markers (`cache_control`, Bedrock `cachePoint`) cut out and kept as breakpoints,
 * since markers move from request to request and are not what the cache matches.
 * Body shapes: Anthropic Messages (https://docs.claude.com/en/api/messages), OpenAI Chat
 * Completions and Responses (https://platform.openai.com/docs/api-reference); as Pi and the
 * AI SDK send them (reference/pi.md §2, reference/opencode.md).
 */
import { flat } from './flat.js';
import type { Block, CacheBreakpoint, Segment } from './model.js';
import { BLOCK_PARTS, BlockNode, COPY_BLOCK, type BlockPart } from './chain.js';
import { cutDeep, depthMessage, MAX_JSON_DEPTH } from './depth.js';
import { JsonTooDeep, member, scanSpans, type Span } from './jsonspan.js';
import { JsonLiteral } from './literal.js';
import { defaultRules, familyFor, type ProviderRules } from './rules.js';

/** UTF-8 decoder shared by every call (decoding without `stream` keeps no state). */
const utf8 = new TextDecoder();

/** The prefix-relevant content of one captured request body. */
export interface WireRequest {
  model: string;
  /**
   * Blocks in the provider's render order (provider-rules.json `renderOrder` of the model's family,
   * e.g. tools → system → messages), then body order within a segment.
   */
  blocks: Block[];
  /** Non-prefix parameters that can invalidate a cache (thinking, effort, tool_choice, max tokens). */
  params: Record<string, string | number | boolean | null>;
  /** `prompt_cache_key` when present. */
  cacheKey?: string;
  /**
   * The conversation (thread) the body says it was sent for, when it names one: Codex's
   * `client_metadata.thread_id` (a sub-agent sends its own thread id under its parent's
   * `prompt_cache_key`; observed on the 0.169 recordings).
   */
  thread?: string;
  /** Size of the whole body (bytes). */
  bodyBytes: number;
}

/** Wire APIs this module understands. */
export type WireApi = 'anthropic-messages' | 'openai-completions' | 'openai-responses';

/** Keys that are cache markers, not content. */
const MARKER_KEYS = new Set(['cache_control', 'cachePoint']);
/**
 * Keys that are request parameters (compared by value, not hashed), besides the cache-relevant
 * ones the family lists in provider-rules.json `params`. A dotted key names a member of an object.
 */
const PARAM_KEYS: Record<WireApi, string[]> = {
  'anthropic-messages': ['thinking', 'max_tokens', 'tool_choice', 'temperature', 'top_p', 'top_k', 'output_config', 'speed'],
  'openai-completions': ['reasoning_effort', 'service_tier', 'max_completion_tokens', 'max_tokens', 'tool_choice', 'temperature', 'top_p', 'prompt_cache_retention', 'parallel_tool_calls'],
  'openai-responses': ['reasoning', 'reasoning.effort', 'service_tier', 'max_output_tokens', 'tool_choice', 'temperature', 'top_p', 'prompt_cache_retention', 'parallel_tool_calls', 'text', 'include'],
};

/** Guesses the wire API from a body's keys (`input` → Responses, `system` or an `input_schema` tool → Anthropic). */
function detectApi(root: Span): WireApi {
  if (member(root, 'input')) return 'openai-responses';
  if (member(root, 'system') || member(root, 'tools')?.items?.some((t) => member(t, 'input_schema'))) return 'anthropic-messages';
  return 'openai-completions';
}

/**
 * Parses a captured body into blocks, in the render order of the model's provider family.
 *
 * What the provider caches as prefix: `tools`; the system prompt (Anthropic `system`; OpenAI
 * Responses `instructions`; the system/developer messages that open a Chat Completions `messages`
 * or Responses `input` list); then the messages. A `role: "system"` item later in the list, or
 * anywhere in an Anthropic `messages` array (some hosts and gateways send one), is rendered where it
 * stands, so it belongs to the messages tier.
 * @param body the exact request bytes (UTF-8 JSON)
 * @param api the wire API; detected from the keys when omitted
 * @param rules provider rules whose `renderOrder` orders the segments
 * @throws SyntaxError when the body is not JSON (message includes the byte offset)
 */
export function parseWireBody(body: Uint8Array, api?: WireApi, rules: ProviderRules = defaultRules): WireRequest & { api: WireApi } {
  return wireOfSpans(scanSpans(body, 6, MAX_JSON_DEPTH), body, api, rules);
}

/** A body JSON but not a request body (not an object): it is not used. */
export class NotARequestBody extends Error {}

/** A captured body as analyzed: see checkedWireBody. */
export interface CheckedWireBody {
  /** The bytes the blocks point into: the body's, without a leading UTF-8 BOM; re-encoded when it was cut. */
  bytes: Uint8Array;
  wire: WireRequest & { api: WireApi };
  /** What is not as a request body should be (one sentence each): a depth cut, a missing or mistyped `messages`/`model`. */
  warnings: string[];
}

const JSON_TYPE = (s: Span | undefined): string => (s === undefined ? 'absent' : s.type === 'literal' ? 'a literal' : `${s.type === 'array' || s.type === 'object' ? 'an' : 'a'} ${s.type}`);

/**
 * Reads a captured body as every wire reader does: a leading UTF-8 BOM is dropped (as in a JSONL
 * file); a body nested deeper than MAX_JSON_DEPTH (core/depth.ts) is parsed, cut there and
 * re-encoded (JSON.stringify), with a warning: its blocks' bytes are then not the host's; an object
 * without a `messages` array (`input` for OpenAI Responses: an array or a string) or a string
 * `model` is read as it is, with a warning each.
 * @throws SyntaxError when the body is not JSON; NotARequestBody when it is JSON but not an object
 */
export function checkedWireBody(raw: Uint8Array, api?: WireApi, rules: ProviderRules = defaultRules): CheckedWireBody {
  let bytes = raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
  const warnings: string[] = [];
  let first = 0;
  while (first < bytes.length && (bytes[first] === 0x20 || bytes[first] === 0x0a || bytes[first] === 0x0d || bytes[first] === 0x09)) first++;
  // Nothing to parse: said as such, not as a JSON error at byte 0.
  if (first === bytes.length) throw new NotARequestBody(`request body is an empty file${bytes.length ? ' (only whitespace)' : ''}`);
  // An array is never a request body: not scanned (nor cut, however deep).
  if (bytes[first] === 0x5b) throw new NotARequestBody('request body is an array, not a JSON object');
  let root: Span;
  try {
    root = scanSpans(bytes, 6, MAX_JSON_DEPTH);
  } catch (e) {
    if (!(e instanceof JsonTooDeep)) throw e;
    const value = JSON.parse(utf8.decode(bytes)) as unknown; // any depth; throws SyntaxError when not JSON
    const cut = cutDeep(value);
    bytes = new TextEncoder().encode(JSON.stringify(value));
    if (cut) warnings.push(`${depthMessage(cut)} (the body is re-encoded)`);
    root = scanSpans(bytes, 6, MAX_JSON_DEPTH);
  }
  if (root.type !== 'object') throw new NotARequestBody(`request body is ${root.type === 'literal' ? utf8.decode(bytes.subarray(root.start, root.end)) : JSON_TYPE(root)}, not a JSON object`);
  const wire = wireOfSpans(root, bytes, api, rules);
  const key = wire.api === 'openai-responses' ? 'input' : 'messages';
  const messages = member(root, key);
  if (messages?.type !== 'array' && !(key === 'input' && messages?.type === 'string')) warnings.push(`request body's \`${key}\` is ${JSON_TYPE(messages)}, not an array: no message blocks`);
  const model = member(root, 'model');
  if (model?.type !== 'string') warnings.push(`request body's \`model\` is ${JSON_TYPE(model)}, not a string`);
  return { bytes, wire, warnings };
}

/** parseWireBody from the scanned spans of `body`. */
function wireOfSpans(root: Span, body: Uint8Array, api: WireApi | undefined, rules: ProviderRules): WireRequest & { api: WireApi } {
  const text = (s: Span) => utf8.decode(body.subarray(s.start, s.end));
  const json = (s: Span | undefined): unknown => (s ? JSON.parse(text(s)) : undefined);
  const resolvedApi = api ?? detectApi(root);
  const markers = collectMarkers(root, body);
  const b = new BlockBuilder(body, markers);

  const tools = member(root, 'tools');
  tools?.items?.forEach((t, i) => b.add('tools', i, `tools[${i}]`, t.start, t.end));

  const messagesKey = resolvedApi === 'openai-responses' ? 'input' : 'messages';
  const messages = member(root, messagesKey);
  if (resolvedApi === 'anthropic-messages') {
    const system = member(root, 'system');
    if (system?.items) system.items.forEach((s, i) => b.add('system', i, `system[${i}]`, s.start, s.end));
    else if (system) b.add('system', 0, 'system', system.start, system.end);
  } else if (resolvedApi === 'openai-responses') {
    // Responses renders `instructions` as the system prompt ahead of the input items (Codex sends
    // its whole system prompt there).
    const instructions = member(root, 'instructions');
    if (instructions && instructions.type !== 'literal') b.add('system', 0, 'instructions', instructions.start, instructions.end, 'system');
  }
  let systemItem = b.count('system');
  let messageItem = 0;
  // Only the system/developer items that open the list are the system prompt (OpenAI APIs).
  let leading = resolvedApi !== 'anthropic-messages';
  messages?.items?.forEach((m, i) => {
    const role = json(member(m, 'role'));
    const path = `${messagesKey}[${i}]`;
    if (leading && (role === 'system' || role === 'developer')) {
      b.add('system', systemItem++, path, m.start, m.end, String(role));
      return;
    }
    leading = false;
    b.addMessage(messageItem++, path, m, typeof role === 'string' ? role : String(json(member(m, 'type')) ?? ''));
  });
  const model = String(json(member(root, 'model')) ?? '');
  const family = familyFor(model, resolvedApi, rules);
  b.order(family.renderOrder);

  // Automatic caching: one top-level `cache_control` acts as a breakpoint on the last cacheable
  // block (https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "Automatic caching").
  const auto = member(root, 'cache_control');
  const last = b.blocks[b.blocks.length - 1];
  if (auto && last && !last.breakpoint) last.breakpoint = { ttlSeconds: ttlOf(body, auto) };

  const params: WireRequest['params'] = {};
  for (const key of new Set([...PARAM_KEYS[resolvedApi], ...family.params.map((p) => p.key)])) {
    let v: Span | undefined = root;
    for (const part of key.split('.')) v = v && member(v, part);
    if (v) params[key] = v.type === 'object' || v.type === 'array' ? text(v) : (json(v) as string | number | boolean | null);
  }
  const cacheKey = json(member(root, 'prompt_cache_key'));
  const clientMeta = member(root, 'client_metadata');
  const thread = clientMeta && json(member(clientMeta, 'thread_id'));
  return {
    api: resolvedApi,
    model,
    blocks: b.blocks,
    params,
    cacheKey: typeof cacheKey === 'string' ? cacheKey : undefined,
    ...(typeof thread === 'string' ? { thread } : {}),
    bodyBytes: body.length,
  };
}

interface Marker {
  /** Range to cut: the member with its separating comma. */
  cut: [number, number];
  breakpoint: CacheBreakpoint;
}

/** Finds every cache-marker member (within the scanned depth) and the bytes to cut for it. */
function collectMarkers(root: Span, body: Uint8Array): Marker[] {
  const out: Marker[] = [];
  const visit = (s: Span) => {
    if (s.members) {
      s.members.forEach((m, i) => {
        if (MARKER_KEYS.has(m.key)) {
          // Cut ",<key>:<value>" or, for the first member, "<key>:<value>,".
          const next = s.members![i + 1];
          const cut: [number, number] =
            i > 0 ? [s.members![i - 1].value.end, m.value.end] : [m.keyStart, next ? next.keyStart : m.value.end];
          out.push({ cut, breakpoint: { ttlSeconds: ttlOf(body, m.value) } });
        } else visit(m.value);
      });
    }
    s.items?.forEach(visit);
  };
  visit(root);
  return out.sort((a, b) => a.cut[0] - b.cut[0]);
}

function ttlOf(body: Uint8Array, v: Span): number {
  try {
    const o = JSON.parse(utf8.decode(body.subarray(v.start, v.end))) as { ttl?: string };
    return o?.ttl === '1h' ? 3600 : 300;
  } catch {
    return 300;
  }
}

/** Accumulates blocks from raw spans, cutting markers out of their bytes. */
export class BlockBuilder {
  readonly blocks: Block[] = [];
  /**
   * @param body the document the spans point into
   * @param markers cache markers to cut (from the whole document)
   * @param wire true when `body` is the exact request body (block offsets are then body offsets)
   */
  constructor(
    private readonly body: Uint8Array,
    private readonly markers: Marker[] = [],
    private readonly wire = true,
  ) {}

  count(segment: Segment): number {
    return this.blocks.filter((x) => x.segment === segment).length;
  }

  /** Puts the blocks in render order: segments as `order` lists them, body order within each. */
  order(order: readonly Segment[]): void {
    const rank = (b: Block) => (b.segment === 'head' ? -1 : order.indexOf(b.segment));
    // Array.prototype.sort is stable (ES2019), so body order holds within a segment.
    this.blocks.sort((x, y) => rank(x) - rank(y));
  }

  add(segment: Segment, item: number, path: string, start: number, end: number, role?: string, startPath?: string, origin?: string): void {
    const inside = this.markers.filter((m) => m.cut[0] >= start && m.cut[1] <= end);
    const parts: Uint8Array[] = [];
    const removed: Array<[number, number]> = [];
    let at = start;
    for (const m of inside) {
      parts.push(this.body.subarray(at, m.cut[0]));
      removed.push([m.cut[0] - start, m.cut[1] - start]);
      at = m.cut[1];
    }
    parts.push(this.body.subarray(at, end));
    // A copy (the blocks outlive the body), made by the typed-array constructor in one move
    // (Uint8Array.from iterated byte by byte: a tenth of a wire run's CPU).
    const bytes = new Uint8Array(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    const breakpoint = inside.length
      ? { ttlSeconds: Math.max(...inside.map((m) => m.breakpoint.ttlSeconds)) }
      : undefined;
    const block: Block = { segment, item, path, bytes };
    if (startPath && startPath !== path) block.startPath = startPath;
    if (this.wire) block.bodyOffset = start;
    if (removed.length) block.removed = removed;
    if (breakpoint) block.breakpoint = breakpoint;
    if (role) block.role = role;
    if (origin) block.origin = origin;
    this.blocks.push(block);
  }

  /**
   * One block per content element; the message envelope is folded into the first block (from
   * the message start) and the last block (to the message end), so every byte of the message
   * belongs to a block. A string content or a non-message item is one block.
   */
  addMessage(item: number, path: string, m: Span, role: string, origin?: string): void {
    const content = member(m, 'content');
    const parts = content?.items;
    if (!parts || parts.length === 0) {
      this.add('messages', item, path, m.start, m.end, role, undefined, origin);
      return;
    }
    const shown = Math.min(parts.length, MAX_BLOCKS_PER_MESSAGE);
    for (let j = 0; j < shown; j++) {
      const p = parts[j];
      const start = j === 0 ? m.start : p.start;
      if (j === shown - 1 && shown < parts.length) {
        // The rest of an oversized content array is one block (its bytes from here to the message end).
        this.add('messages', item, `${path}.content[${j}…${parts.length - 1}]`, start, m.end, role, j === 0 ? path : undefined, origin);
        break;
      }
      const end = j === parts.length - 1 ? m.end : p.end;
      this.add('messages', item, `${path}.content[${j}]`, start, end, role, j === 0 ? path : undefined, origin);
    }
  }
}

/**
 * The chains of consecutive wire requests (one reader's bodies in send order), each sharing the
 * nodes of the previous one through their longest run of equal blocks, so that what a body
 * repeats of the previous body (the whole conversation, every request) is one node, one copy of
 * its bytes and one hash for all of them instead of one per request: each body's blocks were a
 * chain of their own, N chains of up to N nodes for N bodies, every one kept and hashed.
 *
 * Blocks are equal when every property but `bodyOffset` is (bytes, path, breakpoint, markers cut,
 * role…): a body whose earlier members grew (OpenAI Chat Completions sends `tools` after
 * `messages`) still shares its tools. Their own offsets, where they differ from the shared
 * block's, come back as `bodyOffsets` (LlmRequest.bodyOffsets; diverge reads them).
 */
export class WireChains {
  /** The nodes of the last chain built, depth k at index k - 1. */
  private nodes: BlockNode[] = [];

  /**
   * The chain of `blocks` (render order), sharing the previous chain's nodes while its blocks are
   * equal. Cost: one comparison per shared block and one node per other block.
   * @returns the last node (null for no blocks) and the request's own body offsets (bytes) of the
   *   shared blocks whose `bodyOffset` differs, by depth (absent when none does)
   */
  chain(blocks: readonly Block[]): { tail: BlockNode | null; bodyOffsets?: Map<number, number> } {
    const prev = this.nodes;
    const nodes: BlockNode[] = [];
    let bodyOffsets: Map<number, number> | undefined;
    let node: BlockNode | null = null;
    let k = 0;
    for (; k < blocks.length && k < prev.length && sameWireBlock(prev[k].block, blocks[k]); k++) {
      node = prev[k];
      const own = blocks[k].bodyOffset;
      if (own !== node.block.bodyOffset && own !== undefined) (bodyOffsets ??= new Map()).set(k + 1, own);
      nodes.push(node);
    }
    for (; k < blocks.length; k++) nodes.push((node = new BlockNode(node, blocks[k])));
    this.nodes = nodes;
    return bodyOffsets ? { tail: node, bodyOffsets } : { tail: node };
  }
}

/** Equal wire blocks (WireChains): the same bytes and the same value of every property but `bodyOffset`. */
function sameWireBlock(a: Block, b: Block): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (k === 'bytes' || k === 'bodyOffset') continue;
    if (!sameValue((a as unknown as Record<string, unknown>)[k], (b as unknown as Record<string, unknown>)[k])) return false;
  }
  const x = a.bytes;
  const y = b.bytes;
  return x.length === y.length && Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));
}

/** Deep equality of plain data (strings, numbers, arrays, plain objects: a block's properties). */
function sameValue(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null || Array.isArray(x) !== Array.isArray(y)) return false;
  const kx = Object.keys(x);
  if (kx.length !== Object.keys(y).length) return false;
  for (const k of kx) if (!Object.hasOwn(y, k) || !sameValue((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k])) return false;
  return true;
}

/**
 * Reconstructed mode: blocks of one message given as a plain object, split exactly the way a
 * wire body's message is (envelope folded into the first and last content blocks). The bytes are
 * those of `JSON.stringify(message)` (insertion key order), so a reader should build the object
 * with the keys in the order the host sends them. Built piecewise, without re-scanning the text.
 *
 * The blocks do not hold their bytes: `text` and `bytes` are getters that serialize the block's
 * part of the message on each access (the chain node reads its parts once to hash them), so the
 * message object must not be changed afterwards. `text`, `bytes` and `path` are getters of the
 * block's class, not own properties (a constructor that defined them on each block was ~0.3 s of
 * the bench corpus's cold run): a spread copy lacks them; copy a block with chain.ts
 * blockWithBreakpoint.
 * @param item message index within the messages segment
 * @param path JSON path of the message in the body the host would send, e.g. `messages[4]`
 */
export function messageBlocks(item: number, path: string, message: Record<string, unknown>, origin?: string): Block[] {
  const role = typeof message.role === 'string' ? message.role : typeof message.type === 'string' ? message.type : '';
  const content = message.content;
  if (!Array.isArray(content) || content.length === 0) return [new MessageBlock(item, path, -1, -1, role, origin, '', message, '')];
  let pre: string;
  let post: string;
  if (roleAndContent(message)) {
    // The common `{role, content}`: its envelope by role, without serializing it again.
    pre = rolePre(role);
    post = ROLE_POST;
  } else {
    pre = '{';
    post = ']';
    let seen = false;
    for (const k in message) {
      if (k === 'content') {
        seen = true;
        continue;
      }
      const json = JSON.stringify(message[k]);
      if (json === undefined) continue; // JSON.stringify drops undefined and functions
      const pair = `${JSON.stringify(k)}:${json}`;
      if (seen) post += `,${pair}`;
      else pre += `${pair},`;
    }
    pre += '"content":[';
    post += '}';
    // Flat and shared: the concatenations above are trees of pieces (a rope node per `+`), and
    // most messages of a session have one of a few envelopes, which every block would otherwise
    // keep a copy of for the whole session (~5 MiB of the 100 MiB bench session).
    pre = envelope(pre);
    post = envelope(post);
  }
  const last = content.length - 1;
  const out: Block[] = [];
  const shown = Math.min(content.length, MAX_BLOCKS_PER_MESSAGE);
  for (let j = 0; j < shown; j++) {
    if (j === shown - 1 && shown < content.length) {
      // The rest of an oversized content array is one block: its elements joined by commas, as
      // the wire reader's block over the same bytes.
      out.push(new MessageBlock(item, path, j, last, role, origin, j === 0 ? pre : '', content.slice(j), post, true));
      break;
    }
    out.push(new MessageBlock(item, path, j, j, role, origin, j === 0 ? pre : '', content[j], j === last ? post : ''));
  }
  return out;
}

/**
 * Content elements of one message that get a block each; the rest of a longer content array is
 * one block. Real messages have at most a few hundred (Anthropic takes ≤ 100 images per request);
 * a million-element array (hostile input) would otherwise cost a chain node and a hash per element
 * in every request that carries it.
 */
export const MAX_BLOCKS_PER_MESSAGE = 1024;

/**
 * True when `message`'s enumerable keys are exactly `role` (a string) then `content` (the
 * caller checked it is an array): its envelope is then `{"role":<role>,"content":[` … `]}`.
 */
function roleAndContent(message: Record<string, unknown>): boolean {
  if (typeof message.role !== 'string') return false;
  let i = 0;
  for (const k in message) {
    if (i === 0 ? k !== 'role' : i === 1 ? k !== 'content' : true) return false;
    i++;
  }
  return i === 2;
}

/** The envelope tail of a `{role, content}` message. */
const ROLE_POST = ']}';
/** Envelope heads of `{role, content}` messages by role (flat), bounded. */
const rolePres = new Map<string, string>();

/** `{"role":<role>,"content":[` as messageBlocks' general path writes it, shared per role. */
function rolePre(role: string): string {
  let pre = rolePres.get(role);
  if (pre === undefined) {
    pre = envelope(flat(`{"role":${JSON.stringify(role)},"content":[`));
    if (rolePres.size >= ENVELOPES) rolePres.clear();
    rolePres.set(role, pre);
  }
  return pre;
}

/** Envelope strings seen (flat), so equal ones are one string; bounded (an id in an envelope makes it unique). */
const envelopes = new Map<string, string>();
const ENVELOPES = 4096;
/** Envelopes longer than this are not shared (characters). */
const ENVELOPE_CHARS = 256;

/** `s` flat, and the same string object as an equal envelope seen before. */
function envelope(s: string): string {
  if (s.length > ENVELOPE_CHARS) return flat(s);
  const known = envelopes.get(s);
  if (known !== undefined) return known;
  if (envelopes.size >= ENVELOPES) envelopes.clear();
  envelopes.set(s, flat(s));
  return s;
}

/** Where a MessageBlock keeps its parts: its text is `HEAD + JSON.stringify(VALUE) + TAIL`. */
const HEAD = Symbol('head');
const VALUE = Symbol('value');
const TAIL = Symbol('tail');
/** Set on a block standing for several content elements (GROUP_TEXT). */
const GROUP = Symbol('group');
/**
 * Where a MessageBlock's `path` is derived from (so a block keeps no path string of its own):
 * MESSAGE = the message's path; FIRST..LAST = the content elements it stands for (-1: the whole
 * message).
 */
const MESSAGE = Symbol('message');
/**
 * A compacted block's canonical bytes as parts (compactChains): one Buffer, or strings and the
 * shared bytes of the JsonLiterals its value held; its value is then dropped.
 */
const UTF8 = Symbol('utf8');
/** The method compactChains calls on a block. */
const COMPACT = Symbol('compact');
/** The method keepBytes calls on a block. */
const KEEP = Symbol('keep');
/** Serialized values at least this long are kept as UTF-8 bytes by compactChains (characters). */
const COMPACT_CHARS = 512;
const FIRST = Symbol('first');
const LAST = Symbol('last');

interface Parts {
  [HEAD]: string;
  [VALUE]: unknown;
  [TAIL]: string;
  [UTF8]: readonly BlockPart[] | undefined;
}

/** The text of compacted parts (UTF8). */
function partsText(parts: readonly BlockPart[]): string {
  if (parts.length === 1) return typeof parts[0] === 'string' ? parts[0] : Buffer.from(parts[0].buffer, parts[0].byteOffset, parts[0].byteLength).toString('utf8');
  let t = '';
  for (const p of parts) t += typeof p === 'string' ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('utf8');
  return t;
}

/**
 * `JSON.stringify(value)` as parts, when `value` is a plain object with a JsonLiteral among its
 * own properties (a tool result's text, core/literal.ts): the literal's UTF-8 bytes as they are,
 * the JSON around them as strings; else undefined (then `JSON.stringify(value)` is the text, a
 * JsonLiteral deeper down written through its `toJSON`). The same bytes either way.
 */
function literalParts(value: unknown): BlockPart[] | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const o = value as Record<string, unknown>;
  let found = false;
  for (const k in o) {
    if (o[k] instanceof JsonLiteral) {
      found = true;
      break;
    }
  }
  if (!found || typeof o.toJSON === 'function' || Object.getPrototypeOf(o) !== Object.prototype) return undefined;
  const parts: BlockPart[] = [];
  let acc = '{';
  let first = true;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (v instanceof JsonLiteral) {
      parts.push(`${acc}${first ? '' : ','}${JSON.stringify(k)}:`, v.bytes);
      acc = '';
      first = false;
      continue;
    }
    const json = JSON.stringify(v);
    if (json === undefined) continue; // JSON.stringify drops undefined and functions
    acc += `${first ? '' : ','}${JSON.stringify(k)}:${json}`;
    first = false;
  }
  parts.push(`${acc}}`);
  return parts;
}

interface PathParts {
  [MESSAGE]: string;
  [FIRST]: number;
  [LAST]: number;
}

/**
 * A reconstructed messages-segment block: `head + JSON.stringify(value) + tail`, serialized on
 * each access of `text` (and `bytes`), so the block holds no copy of the transcript.
 */
class MessageBlock implements Block {
  readonly segment = 'messages';
  declare startPath?: string;
  declare role?: string;
  declare origin?: string;
  declare breakpoint?: CacheBreakpoint;
  readonly [MESSAGE]: string;
  readonly [FIRST]: number;
  readonly [LAST]: number;
  [HEAD]: string;
  [VALUE]: unknown;
  [TAIL]: string;
  [UTF8]: readonly BlockPart[] | undefined = undefined;
  readonly [GROUP]: boolean;

  /**
   * @param message path of the message, e.g. `messages[4]`
   * @param first index of the first content element the block stands for, -1 for the whole message
   * @param last index of the last one (= first for one element)
   */
  constructor(
    readonly item: number,
    message: string,
    first: number,
    last: number,
    role: string,
    origin: string | undefined,
    head: string,
    value: unknown,
    tail: string,
    group = false,
  ) {
    this[MESSAGE] = message;
    this[FIRST] = first;
    this[LAST] = last;
    this[HEAD] = head;
    this[GROUP] = group;
    this[VALUE] = value;
    this[TAIL] = tail;
    // The first element's bytes begin at the message (its envelope is folded in).
    if (first === 0) this.startPath = message;
    if (role) this.role = role;
    if (origin) this.origin = origin;
  }

  /** JSON path, built on each access from the message path and the element range (see MESSAGE). */
  get path(): string {
    const first = this[FIRST];
    if (first < 0) return this[MESSAGE];
    const last = this[LAST];
    return last === first ? `${this[MESSAGE]}.content[${first}]` : `${this[MESSAGE]}.content[${first}…${last}]`;
  }

  /** The canonical text, serialized on each access (a group's VALUE is its elements' array, written without its brackets). */
  get text(): string {
    const b = this[UTF8];
    if (b) return partsText(b);
    const json = JSON.stringify(this[VALUE]);
    return this[HEAD] + (this[GROUP] ? json.slice(1, -1) : json) + this[TAIL];
  }

  /** The canonical bytes: a new copy on each access (a caller may keep or change what it gets). */
  get bytes(): Uint8Array {
    const b = this[UTF8];
    if (!b) return Buffer.from(this.text, 'utf8');
    return Buffer.concat(b.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
  }

  /** The same block (same parts, still lazy, or the same compacted bytes), breakpoint included. */
  [COPY_BLOCK](): Block {
    const b = new MessageBlock(this.item, this[MESSAGE], this[FIRST], this[LAST], this.role ?? '', this.origin, this[HEAD], this[VALUE], this[TAIL], this[GROUP]);
    b[UTF8] = this[UTF8];
    if (this.breakpoint) b.breakpoint = this.breakpoint;
    return b;
  }

  /**
   * Keeps the block's canonical text as UTF-8 bytes and drops the parts it was serialized from,
   * when its value is long (COMPACT_CHARS) and well-formed (so decoding gives the text back
   * exactly). `shared` maps a value already compacted with the same envelope to its bytes.
   * @param size the block's UTF-8 byte length (its chain node's `size`): a block shorter than
   *   COMPACT_CHARS bytes has a shorter serialized value (a UTF-16 unit is at least one byte), so
   *   it is not serialized again to find that out; the bytes are written straight into a buffer
   *   of this size (no concatenated text to flatten, check and measure first)
   */
  [COMPACT](shared: Map<unknown, Array<{ head: string; tail: string; group: boolean; bytes: readonly BlockPart[] }>>, size: number): void {
    if (this[UTF8] || size < COMPACT_CHARS) return;
    const value = this[VALUE];
    const group = this[GROUP];
    const head = this[HEAD];
    const tail = this[TAIL];
    const literal = group ? undefined : literalParts(value);
    const known = literal ? undefined : shared.get(value)?.find((k) => k.head === head && k.tail === tail && k.group === group);
    if (literal) {
      // The literals' bytes are shared with the transcript (and every other block of them); the
      // JSON around them is short and stays text (JSON.stringify's output is well-formed).
      if (!head.isWellFormed() || !tail.isWellFormed()) return;
      literal[0] = flat(head + (literal[0] as string));
      literal[literal.length - 1] = flat((literal[literal.length - 1] as string) + tail);
      this[UTF8] = literal.filter((p) => typeof p !== 'string' || p.length > 0);
    } else if (known) {
      this[UTF8] = known.bytes;
    } else {
      const json = JSON.stringify(value);
      if (json.length < COMPACT_CHARS) return;
      // JSON.stringify's output is well-formed (lone surrogates are escaped); the envelope need not be.
      if (!head.isWellFormed() || !tail.isWellFormed()) return;
      const body = group ? json.slice(1, -1) : json;
      // Written into room for one more character: filling exactly `size` bytes then proves the
      // size right (a longer text would have written into the spare room).
      const room = Buffer.allocUnsafe(size + 4);
      let at = room.write(head, 0, 'utf8');
      at += room.write(body, at, 'utf8');
      at += room.write(tail, at, 'utf8');
      if (at !== size) return;
      const bytes = [room.subarray(0, size)];
      let list = shared.get(value);
      if (!list) shared.set(value, (list = []));
      list.push({ head, tail, group, bytes });
      this[UTF8] = bytes;
    }
    this[VALUE] = undefined;
    this[HEAD] = '';
    this[TAIL] = '';
  }

  /**
   * Keeps the block's canonical bytes (one Buffer) in place of the value they are serialized
   * from, whatever its length, when its envelope is well-formed (so `text` decodes back the same).
   */
  [KEEP](): void {
    if (this[UTF8] || !this[HEAD].isWellFormed() || !this[TAIL].isWellFormed()) return;
    const parts = this[BLOCK_PARTS]();
    this[UTF8] = [Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)))];
    this[VALUE] = undefined;
    this[HEAD] = '';
    this[TAIL] = '';
  }

  /** The bytes as parts (chain.ts BLOCK_PARTS): the same as `text`, without concatenating it. */
  [BLOCK_PARTS](): readonly BlockPart[] {
    if (this[UTF8]) return this[UTF8];
    const literal = this[GROUP] ? undefined : literalParts(this[VALUE]);
    if (literal) return [this[HEAD], ...literal, this[TAIL]];
    const json = JSON.stringify(this[VALUE]);
    return [this[HEAD], this[GROUP] ? json.slice(1, -1) : json, this[TAIL]];
  }
}

/**
 * Keeps the long reconstructed message blocks of these chains as UTF-8 bytes instead of the
 * transcript values they serialize (each block's `text`, `bytes` and hash stay the same). A
 * transcript's strings take 2 bytes per character as soon as one character is outside Latin-1 (a
 * curly quote in a tool result), and the blocks are what keeps them alive after the read; for a
 * reader whose transcript objects are released after the requests are built (a full Pi read).
 * Each node is visited once; blocks of one value with the same envelope share their bytes.
 */
export function compactChains(tails: Iterable<BlockNode | null | undefined>): void {
  const seen = new Set<BlockNode>();
  const shared = new Map<unknown, Array<{ head: string; tail: string; group: boolean; bytes: readonly BlockPart[] }>>();
  for (const tail of tails) {
    for (let n = tail ?? null; n && !seen.has(n); n = n.prev) {
      seen.add(n);
      if (n.block instanceof MessageBlock) n.block[COMPACT](shared, n.size);
    }
  }
}

/**
 * Keeps a reconstructed message block's canonical bytes (its `text`, `bytes` and hash stay the
 * same), for a block its reader hashes again and again: a PI-Desktop conversation after each new
 * collapsed head (pi-desktop/normalize.ts ShapeEncoder) is then copied, not serialized again.
 * Other blocks are left as they are.
 */
export function keepBytes(block: Block): void {
  if (block instanceof MessageBlock) block[KEEP]();
}

/**
 * Reconstructed mode: one opaque block standing for the head (tools + system) that the host
 * did not record. Readers share one such block per session (or per known head version).
 * @param label distinguishes heads known to differ (e.g. `"pi:opaque"`); same label = assumed same head
 */
export function opaqueHeadBlock(label: string): Block {
  return { segment: 'head', item: 0, path: '(head)', bytes: new TextEncoder().encode(label) };
}
