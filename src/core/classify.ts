/**
 * Cause classification of a cache break (DESIGN.md "cause" classes).
 */
import type { BlockNode } from './chain.js';
import type { BreakPoint } from './diverge.js';
import type { Block, LlmRequest } from './model.js';
import type { CacheParam, Tier } from './rules.js';
import { describeSystemChange, systemChange } from './sections.js';

/** UTF-8 decoder shared by every call (decoding without `stream` keeps no state). */
const utf8 = new TextDecoder();

/** Cause classes, in the field's terms. */
export type CauseKind =
  | 'system-changed'
  | 'tools-changed'
  | 'history-rewritten'
  | 'representation-only'
  | 'volatile-value'
  | 'params-changed'
  | 'model-switch'
  | 'phux-context-in-head'
  | 'persona-drift'
  /** Sent while a request that wrote a longer entry was in flight: its entry was not readable yet. */
  | 'parallel-request'
  /** A live entry lies 20 or more blocks before every breakpoint that could reach it (Anthropic lookback). */
  | 'lookback-exceeded'
  /** A live entry lies after every breakpoint of the request: the breakpoints moved before the block where it was written. */
  | 'breakpoint-moved';

/** Every cause class, in the order of CauseKind (e.g. for validating `check --ignore`). */
export const CAUSE_KINDS = [
  'system-changed',
  'tools-changed',
  'history-rewritten',
  'representation-only',
  'volatile-value',
  'params-changed',
  'model-switch',
  'phux-context-in-head',
  'persona-drift',
  'parallel-request',
  'lookback-exceeded',
  'breakpoint-moved',
] as const satisfies readonly CauseKind[];
// Compile-time: the list names every CauseKind.
const _everyCause: Exclude<CauseKind, (typeof CAUSE_KINDS)[number]> extends never ? true : never = true;
void _everyCause;

/**
 * One cause of a break. `certainty` is `likely` when the evidence is indirect (e.g. an opaque
 * head in reconstructed mode), `certain` when the changed bytes show it.
 */
export interface Cause {
  kind: CauseKind;
  /** Human detail, e.g. "tool `bash` schema bytes", "compaction at message 0", "line 42". Words only: no rule reads it. */
  detail: string;
  certainty: 'certain' | 'likely';
  /**
   * `representation-only` causes only: which representation changed. `other-encoding` = the same
   * text in another encoding (a string sent as one text block, or the reverse): the provider may
   * render both as one prompt; `key-order` = the same values in another JSON key order (a
   * re-serialized tool call): other prompt text. The judge's rules key on this, never on `detail`.
   */
  representation?: Representation;
}

/** What a `representation-only` cause changed (Cause.representation). */
export type Representation = 'other-encoding' | 'key-order';

/** How many messages a removal or insertion may span to be named as one (else: an edit). */
const SHIFT_MAX = 8;

/** Changed runs longer than this (bytes, on either side) are rewrites, not volatile values. */
const VOLATILE_MAX_BYTES = 96;

/** How far the changed bytes are widened to their enclosing token, at most (bytes, each side). */
const TOKEN_MAX_BYTES = 256;

/**
 * Patterns of values that change by themselves (dates, times, ids, machine paths), tested on the
 * whole changed token (the changed bytes widened to the enclosing word, path or key=value).
 */
const VOLATILE: Array<[string, RegExp]> = [
  ['date', /\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\/\d{1,2}\/\d{2,4}\b|\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]* \w+ \d{1,2}\b/],
  ['time', /\b\d{1,2}:\d{2}(:\d{2})?\b/],
  ['uuid', /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/i],
  // An absolute path of two or more components (POSIX, home-relative or Windows, JSON-escaped).
  ['cwd', /(^|[^\w.])(~|[A-Za-z]:)?(\/|\\\\)[\w.@+-]+((\/|\\\\)[\w.@+-]+)+/],
  ['nonce', /\b[0-9a-f]{16,}\b/i],
];

/** What the judge knows of the requests between the matched entry and the request. */
export interface BreakContext {
  /**
   * A compaction rewrote the history between the matched entry and the request: a change in the
   * messages is then the compaction's, wherever it first shows (OpenCode's second compaction wrote
   * the same synthetic summary, so the history first differs at the turn after it), and a change
   * before them (the system prompt, the tools, an opaque head) came with it (a BotHarness persona
   * refreshed at the compaction boundary, the developer items Codex's replacement history drops).
   */
  compaction?: CompactionEvidence;
}

/** How the judge knows a compaction came between the matched entry and the request (BreakContext). */
export interface CompactionEvidence {
  /**
   * `summary-request`: a summary request of the lineage was sent after the matched entry's;
   * `summary-block`: the request carries a compaction summary (a block of origin
   * `compaction-summary`, from the transcript) that the matched entry does not, at message `at`.
   */
  via: 'summary-request' | 'summary-block';
  /** Message index of the summary (`summary-block`). */
  at?: number;
  /**
   * `certain` when the transcript or the recorder says so; `likely` when the only witness is a
   * summary request recognized by its body's text (LlmRequest.kindEvidence `heuristic`).
   */
  certainty: Cause['certainty'];
}

/**
 * The `history-rewritten` cause of a compaction (BreakContext.compaction), ending with `tail`
 * (where the request first differs).
 */
function compactionCause(c: CompactionEvidence, tail: string): Cause {
  const why =
    c.via === 'summary-block'
      ? ` at message ${c.at}`
      : c.certainty === 'certain'
        ? ' (a summary request came after the compared one)'
        : ' (a request recognized as a summary by its text came after the compared one)';
  return { kind: 'history-rewritten', detail: `compaction: history replaced by a summary${why}${tail}`, certainty: c.certainty };
}

/**
 * Causes of a break located in the prefix bytes.
 * @param bp the break point (request vs matched entry)
 * @param entry chain tail of the matched cache entry; @param request chain tail of the request
 */
export function classifyBreak(bp: BreakPoint, entry: BlockNode, request: BlockNode, context: BreakContext = {}): Cause[] {
  const causes: Cause[] = [];
  const region = changedRegion(bp);
  // A head block the host derives from the history (Claude Code's billing header fingerprints the
  // first user message): after a compaction it changes with the history.
  if (bp.segment !== 'messages' && bp.newBlock?.origin === 'compaction-summary') {
    causes.push({ kind: 'history-rewritten', detail: `compaction: history replaced by a summary; ${bp.segment} ${bp.blockIndex} is derived from the history`, certainty: 'certain' });
  } else if (bp.segment !== 'messages' && bp.segment !== 'params' && context.compaction) {
    // The request changed before its messages, in the request that first carries a compaction:
    // the compaction is named first, the change before it after (a cause of its own).
    causes.push(compactionCause(context.compaction, `; ${bp.segment === 'head' ? 'the head' : `${bp.segment} ${bp.blockIndex}`} changed with it`));
  }
  if (bp.segment === 'tools') causes.push(toolsCause(entry, request));
  else if (bp.segment === 'system') {
    const section = systemChange(bp);
    causes.push({ kind: 'system-changed', detail: systemDetail(bp) + (section?.section ? `; ${describeSystemChange(section)}` : ''), certainty: 'certain' });
    if (insidePhuxContext(bp.newBlock?.bytes, bp.offsetInBlock) || insidePhuxContext(bp.oldBlock?.bytes, bp.offsetInBlock)) {
      causes.push({ kind: 'phux-context-in-head', detail: 'a phux context message is rendered in the system prompt', certainty: 'certain' });
    }
  } else if (bp.segment === 'head') {
    // A head that carries a user message's extra system text (origin `user-system`, e.g. OpenCode's
    // per-message `system`): the transcript records that change, so it is certain.
    const added = bp.newBlock?.origin === 'user-system';
    const removed = bp.oldBlock?.origin === 'user-system';
    causes.push(
      added || removed
        ? {
            kind: 'system-changed',
            detail: added
              ? "this turn's user message carries system text, appended to the system prompt"
              : "the system text a user message added to the system prompt is gone (this turn's message has none)",
            certainty: 'certain',
          }
        : { kind: 'system-changed', detail: 'the head (system prompt and tools) changed; the transcript does not record it', certainty: 'likely' },
    );
  } else if (bp.segment === 'messages') {
    causes.push(messagesCause(bp, entry, request, context));
  }
  // A volatile value is a short replacement (a date, an id), not a rewrite of the whole block.
  const sameKind = bp.oldBlock?.segment === bp.newBlock?.segment;
  const short = sameKind && region.oldChanged <= VOLATILE_MAX_BYTES && region.newChanged <= VOLATILE_MAX_BYTES;
  const volatile = short && bp.segment !== 'head' ? volatileKinds(bp, region) : [];
  if (volatile.length) {
    causes.push({ kind: 'volatile-value', detail: `${volatile.join(', ')} in the changed bytes`, certainty: 'likely' });
  }
  return causes;
}

/** Bytes that end a token: whitespace and the punctuation around values in text and JSON. */
const TOKEN_END = new Set([...' \t\r\n"\'`<>()[]{},;|'].map((c) => c.charCodeAt(0)));
/** Second bytes of JSON escapes that stand for a token end (`\n`, `\t`, `\r`, `\"`). */
const ESCAPED_END = new Set([...'ntr"'].map((c) => c.charCodeAt(0)));
const BACKSLASH = 0x5c;
const QUOTE = 0x22;
/** `n` of the JSON escape `\n`. */
const NEWLINE_ESCAPE = 0x6e;

/** Whether byte `i` of JSON-encoded text ends a token (a delimiter, or part of an escaped one). */
function tokenEnd(b: Uint8Array, i: number): boolean {
  const c = b[i];
  if (TOKEN_END.has(c)) return true;
  if (c === BACKSLASH && ESCAPED_END.has(b[i + 1])) return true;
  return i > 0 && b[i - 1] === BACKSLASH && ESCAPED_END.has(c);
}

/**
 * The whole changed token on each side: the changed bytes widened left to where the token starts
 * (from the shared prefix) and right to where it ends (into the shared suffix), at most
 * TOKEN_MAX_BYTES each way. A cwd changed in its last components, `cch=56445` → `cch=81234` or a
 * counter then show their whole value, not only the changed digits.
 */
function changedTokens(bp: BreakPoint, suffix: number): { old: string; new: string; oldRun: string; newRun: string } {
  const o = bp.oldBlock?.bytes ?? new Uint8Array();
  const n = bp.newBlock?.bytes ?? new Uint8Array();
  const off = bp.offsetInBlock;
  let start = off;
  while (start > 0 && off - start < TOKEN_MAX_BYTES && !tokenEnd(n, start - 1)) start--;
  const end = (b: Uint8Array) => {
    let e = b.length - suffix;
    const stop = Math.min(b.length, e + TOKEN_MAX_BYTES);
    while (e < stop && !tokenEnd(b, e)) e++;
    return e;
  };
  const oldEnd = Math.max(off, end(o));
  const newEnd = Math.max(off, end(n));
  return {
    old: utf8.decode(o.subarray(start, oldEnd)),
    new: utf8.decode(n.subarray(start, newEnd)),
    oldRun: numberRun(o, off, o.length - suffix),
    newRun: numberRun(n, off, n.length - suffix),
  };
}

/** Whether a byte is an ASCII hex digit. */
function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/**
 * The run of hex digits the change [from, to) sits in (widened both ways), or '' when a changed
 * byte is not a hex digit: the value of a counter or a short nonce (`56445` of `cch=56445`).
 */
function numberRun(b: Uint8Array, from: number, to: number): string {
  for (let i = from; i < to; i++) if (!isHex(b[i])) return '';
  let s = from;
  let e = Math.max(from, to);
  while (s > 0 && isHex(b[s - 1])) s--;
  while (e < b.length && isHex(b[e])) e++;
  return utf8.decode(b.subarray(s, e));
}

/**
 * Kinds of volatile value in the changed tokens: the patterns above, plus a `counter` (a decimal
 * number that went up by at most 1000) and a short `nonce` (a changed run of at least 4 digits or
 * hex digits with a digit in it, such as `cch=56445`).
 */
function volatileKinds(bp: BreakPoint, region: { suffix: number }): string[] {
  const t = changedTokens(bp, region.suffix);
  const kinds = VOLATILE.filter(([, re]) => re.test(t.old) || re.test(t.new)).map(([name]) => name);
  if (kinds.length || !t.oldRun || !t.newRun) return kinds;
  const decimal = /^\d+$/;
  if (decimal.test(t.oldRun) && decimal.test(t.newRun) && t.oldRun.length <= 9 && t.newRun.length <= 9) {
    const step = Number(t.newRun) - Number(t.oldRun);
    if (step > 0 && step <= 1000) return ['counter'];
  }
  const long = (r: string) => r.length >= 4 && /\d/.test(r);
  return long(t.oldRun) && long(t.newRun) ? ['nonce'] : [];
}

/** Tiers from the widest: a change of several parameters invalidates the widest of their tiers. */
const TIER_WIDTH: Record<Tier, number> = { all: 3, system: 2, messages: 1 };

/**
 * The cause for parameters that differ between two requests of a lineage in a way the family says
 * invalidates the cache (provider-rules.json `params`: Anthropic thinking → messages tier, OpenAI
 * service_tier → everything), with the widest tier the changed ones invalidate.
 * @returns null when no cache-relevant parameter changed
 */
export function paramsCause(prev: LlmRequest, req: LlmRequest, params: readonly CacheParam[]): { cause: Cause; tier: Tier } | null {
  const changed = params.filter((p) => (own(prev.params, p.key) ?? null) !== (own(req.params, p.key) ?? null));
  if (!changed.length) return null;
  const tier = changed.reduce<Tier>((t, p) => (TIER_WIDTH[p.invalidates] > TIER_WIDTH[t] ? p.invalidates : t), 'messages');
  const what = tier === 'all' ? 'the whole prefix' : `the ${tier} tier${tier === 'system' ? ' and what follows' : ''}`;
  const detail = `${changed.map((p) => `${p.key}: ${show(own(prev.params, p.key))} → ${show(own(req.params, p.key))}`).join('; ')} (invalidates ${what})`;
  return { cause: { kind: 'params-changed', detail, certainty: 'certain' }, tier };
}

/** A parameter's value when it is an own property (parameter names come from the rules file). */
function own(params: LlmRequest['params'], key: string): LlmRequest['params'][string] | undefined {
  return Object.hasOwn(params, key) ? params[key] : undefined;
}

function show(v: unknown): string {
  return v === undefined || v === null ? '(none)' : String(v);
}

/**
 * Whether byte `off` of a block lies inside a `<phux-context …>…</phux-context>` element (the
 * element may be JSON-escaped inside the block; the tags themselves have no escapes).
 */
function insidePhuxContext(bytes: Uint8Array | undefined, off: number): boolean {
  if (!bytes) return false;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const open = text.lastIndexOf('<phux-context', off);
  if (open < 0) return false;
  const close = text.indexOf('</phux-context>', open);
  return close < 0 || off < close + '</phux-context>'.length;
}

/**
 * How many bytes changed on each side: from the first change to the common suffix (`suffix`
 * bytes, never reaching back before the first change).
 */
function changedRegion(bp: BreakPoint): { oldChanged: number; newChanged: number; suffix: number } {
  const o = bp.oldBlock?.bytes ?? new Uint8Array();
  const n = bp.newBlock?.bytes ?? new Uint8Array();
  let suffix = 0;
  const max = Math.min(o.length, n.length) - bp.offsetInBlock;
  while (suffix < max && o[o.length - 1 - suffix] === n[n.length - 1 - suffix]) suffix++;
  return { suffix, oldChanged: o.length - suffix - bp.offsetInBlock, newChanged: n.length - suffix - bp.offsetInBlock };
}

/** Blocks of one segment of a chain, in order (walks from the start; segments are contiguous). */
function segmentBlocks(tail: BlockNode, segment: Block['segment']): Block[] {
  const out: Block[] = [];
  for (let d = 1; d <= tail.depth; d++) {
    const b = tail.at(d)!.block;
    if (b.segment === segment) out.push(b);
    else if (out.length) break;
  }
  return out;
}

function parse(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    return undefined;
  }
}

function toolName(b: Block): string {
  const t = parse(b.bytes) as { name?: string; function?: { name?: string } } | undefined;
  return t?.name ?? t?.function?.name ?? `#${b.item}`;
}

/** Deep equality ignoring object key order (to tell "key order only" from real schema changes). */
function sameIgnoringKeyOrder(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || !a || !b) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => k in b && sameIgnoringKeyOrder((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function toolsCause(entry: BlockNode, request: BlockNode): Cause {
  const oldTools = segmentBlocks(entry, 'tools');
  const newTools = segmentBlocks(request, 'tools');
  const oldNames = oldTools.map(toolName);
  const newNames = newTools.map(toolName);
  const added = newNames.filter((n) => !oldNames.includes(n));
  const removed = oldNames.filter((n) => !newNames.includes(n));
  const parts: string[] = [];
  if (added.length) parts.push(`added ${added.join(', ')}`);
  if (removed.length) parts.push(`removed ${removed.join(', ')}`);
  if (!added.length && !removed.length && oldNames.join('\0') !== newNames.join('\0')) {
    parts.push(`reordered: ${oldNames.join(', ')} → ${newNames.join(', ')}`);
    // A reorder can hide an edit of a tool in the same request: compare each tool by name.
    const byName = new Map(oldTools.map((t) => [toolName(t), t]));
    const edited = newTools.filter((t) => Buffer.compare(t.bytes, byName.get(toolName(t))?.bytes ?? t.bytes) !== 0);
    const keyOrder = edited.filter((t) => sameIgnoringKeyOrder(parse(t.bytes), parse(byName.get(toolName(t))!.bytes)));
    const schema = edited.filter((t) => !keyOrder.includes(t));
    if (keyOrder.length) parts.push(`key order only in ${keyOrder.map(toolName).join(', ')}`);
    if (schema.length) parts.push(`schema bytes of ${schema.map(toolName).join(', ')}`);
  }
  if (!parts.length) {
    // Each changed tool on its own: one tool re-keyed and another edited are two different things.
    const changed = newTools.filter((t, i) => Buffer.compare(t.bytes, oldTools[i]?.bytes ?? new Uint8Array()) !== 0);
    const keyOrder = changed.filter((t) => sameIgnoringKeyOrder(parse(t.bytes), parse(oldTools[t.item]?.bytes ?? new Uint8Array())));
    const schema = changed.filter((t) => !keyOrder.includes(t));
    if (keyOrder.length) parts.push(`key order only in ${keyOrder.map(toolName).join(', ')}`);
    if (schema.length) parts.push(`schema bytes of ${schema.map(toolName).join(', ')}`);
    if (!changed.length) parts.push('tool definitions changed (no single tool differs)');
  }
  return { kind: 'tools-changed', detail: parts.join('; '), certainty: 'certain' };
}

/** "line N: <text>" of a system text block around the changed byte (JSON-escaped newlines counted). */
function systemDetail(bp: BreakPoint): string {
  // A block removed from the end of the system prompt (the request goes on with its messages).
  if (bp.newBlock && bp.newBlock.segment !== 'system') return `block ${bp.blockIndex} removed`;
  const added = bp.oldBlock !== undefined && bp.oldBlock.segment !== 'system';
  const where = `block ${bp.blockIndex}${added ? ' added' : ''}`;
  const bytes = bp.newBlock?.bytes ?? new Uint8Array();
  // A whole block added: its first line, i.e. the start of its first string value.
  const firstValue = () => (bytes[0] === QUOTE ? 1 : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(':"') + 2);
  const off = Math.min(added ? Math.max(0, firstValue()) : bp.offsetInBlock, bytes.length);
  // The JSON string the first changed byte is in (a system block's text, a system message's
  // content); lines are counted within it, not from the block's JSON wrapper.
  let open = -1;
  for (let i = 0; i < off; i++) {
    if (open >= 0) {
      if (bytes[i] === BACKSLASH) i++;
      else if (bytes[i] === QUOTE) open = -1;
    } else if (bytes[i] === QUOTE) open = i;
  }
  if (open < 0) return where;
  let line = 1;
  let start = open + 1;
  for (let i = open + 1; i < off; i++) {
    if (bytes[i] !== BACKSLASH) continue;
    if (bytes[i + 1] === NEWLINE_ESCAPE) {
      line++;
      start = i + 2;
    }
    i++;
  }
  let end = start;
  while (end < bytes.length && bytes[end] !== QUOTE && !(bytes[end] === BACKSLASH && bytes[end + 1] === NEWLINE_ESCAPE)) end += bytes[end] === BACKSLASH ? 2 : 1;
  let lineText = utf8.decode(bytes.subarray(start, Math.min(end, bytes.length)));
  try {
    lineText = JSON.parse(`"${lineText}"`) as string;
  } catch {
    /* keep the raw text */
  }
  return `${where}, line ${line}: ${lineText.slice(0, 120)}`;
}

/**
 * The whole JSON of message `item` as a request chain holds it (blocks joined back). Its last
 * block is found by binary search over depth (head blocks come first, then messages in item
 * order), so a break early in a long history does not walk the whole history per message.
 */
function messageJson(tail: BlockNode, item: number): unknown {
  let lo = 0;
  let hi = tail.depth;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    const b = tail.at(mid)!.block;
    if (b.segment !== 'messages' || b.item <= item) lo = mid;
    else hi = mid - 1;
  }
  const parts: Uint8Array[] = [];
  for (let n = tail.at(lo); n && n.block.segment === 'messages' && n.block.item === item; n = n.prev) parts.unshift(n.block.bytes);
  const text = parts.map((p) => utf8.decode(p)).join(',');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Text part types of the wire shapes (Anthropic / Chat `text`, Responses `input_text` / `output_text`). */
const TEXT_TYPES = new Set(['text', 'input_text', 'output_text']);

/**
 * What a message says, independent of how it is encoded: object keys sorted, null members
 * dropped, JSON text in strings parsed (tool-call `arguments`), content given as a string or as
 * text parts made one list of parts with adjacent texts joined and empty ones dropped. Two
 * messages with the same meaning give the same JSON of this form; a changed value (a tool call's
 * input, an id, a role) does not, also when the assistant text around it is empty.
 */
function meaning(v: unknown): unknown {
  if (typeof v === 'string') {
    const t = v.trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return { json: meaning(JSON.parse(v)) };
      } catch {
        /* not JSON: plain text */
      }
    }
    return v;
  }
  if (Array.isArray(v)) return v.map(meaning);
  if (!v || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) {
    if (o[k] === null || o[k] === undefined) continue;
    out[k] = k === 'content' ? contentMeaning(o[k]) : meaning(o[k]);
  }
  if ('role' in o && !('content' in out)) out.content = [];
  return out;
}

/** Content as a list of parts: a string is one text part; adjacent text parts are joined. */
function contentMeaning(c: unknown): unknown {
  const parts = typeof c === 'string' ? [{ type: 'text', text: c }] : Array.isArray(c) ? c : null;
  if (!parts) return meaning(c);
  const out: unknown[] = [];
  let text: string | null = null;
  const flush = () => {
    if (text) out.push({ text, type: 'text' });
    text = null;
  };
  for (const p of parts) {
    const part = p as { type?: unknown; text?: unknown } | null;
    const keys = part && typeof part === 'object' ? Object.keys(part).filter((k) => (part as Record<string, unknown>)[k] !== null) : [];
    if (typeof part === 'string' || (part && TEXT_TYPES.has(String(part.type)) && typeof part.text === 'string' && keys.length === 2)) {
      text = (text ?? '') + (typeof part === 'string' ? part : (part!.text as string));
      continue;
    }
    flush();
    out.push(meaning(p));
  }
  flush();
  return out;
}

/** Deep equality ignoring object key order only (the bytes differ, every value is the same). */
function sameValuesOtherKeyOrder(a: unknown, b: unknown): boolean {
  return a !== undefined && sameIgnoringKeyOrder(a, b);
}

/** A value with its JSON-text strings (tool-call `arguments`) parsed, keys and shapes kept. */
function meaningOfStrings(v: unknown): unknown {
  if (typeof v === 'string') {
    const t = v.trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return meaningOfStrings(JSON.parse(v));
      } catch {
        return v;
      }
    }
    return v;
  }
  if (Array.isArray(v)) return v.map(meaningOfStrings);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, meaningOfStrings(x)]));
}


function messagesCause(bp: BreakPoint, entry: BlockNode, request: BlockNode, context: BreakContext): Cause {
  const n = bp.newBlock!;
  const at = `message ${bp.blockIndex}`;
  if (n.origin === 'compaction-summary') {
    return { kind: 'history-rewritten', detail: `compaction: history replaced by a summary at ${at}`, certainty: 'certain' };
  }
  // A branch summary, or the first message after a tree navigation that wrote none (Pi: the entry
  // appended away from the one before it in file order).
  if (n.origin === 'branch-summary' || n.origin === 'branch-start') {
    return { kind: 'history-rewritten', detail: `branch: the conversation moved to another branch at ${at}`, certainty: 'certain' };
  }
  const oldMsg = messageJson(entry, bp.oldBlock!.item);
  const newMsg = messageJson(request, n.item);
  // Same meaning, other bytes: key order of a re-serialized tool call, a string sent as a block
  // array. A changed value is a rewrite however little text surrounds it.
  if (oldMsg !== undefined && newMsg !== undefined && JSON.stringify(meaning(oldMsg)) === JSON.stringify(meaning(newMsg))) {
    const keyOrder = sameValuesOtherKeyOrder(oldMsg, newMsg) || sameValuesOtherKeyOrder(meaningOfStrings(oldMsg), meaningOfStrings(newMsg));
    return {
      kind: 'representation-only',
      detail: `${keyOrder ? 'same values in another key order' : 'same text, other encoding'} at ${at}`,
      certainty: 'certain',
      representation: keyOrder ? 'key-order' : 'other-encoding',
    };
  }
  if (context.compaction) return compactionCause(context.compaction, `, first changed at ${at}`);
  // Messages dropped (pruning) or inserted: the history goes on unchanged a few messages later.
  const same = (x: unknown, y: unknown) => x !== undefined && y !== undefined && JSON.stringify(x) === JSON.stringify(y);
  for (let j = 1; j <= SHIFT_MAX; j++) {
    if (same(messageJson(entry, bp.oldBlock!.item + j), newMsg)) {
      return { kind: 'history-rewritten', detail: `${j === 1 ? 'message' : `${j} messages`} removed at ${at}`, certainty: 'certain' };
    }
    if (same(oldMsg, messageJson(request, n.item + j))) {
      return { kind: 'history-rewritten', detail: `${j === 1 ? 'message' : `${j} messages`} inserted at ${at}`, certainty: 'certain' };
    }
  }
  return { kind: 'history-rewritten', detail: `edit at ${at}`, certainty: 'certain' };
}
