/**
 * Divergence: where a request's prefix chain first differs from a cache entry's chain.
 */
import { commonDepth, type BlockNode } from './chain.js';
import type { Block, BreakSegment, Segment } from './model.js';
import { pathAtOffset } from './jsonspan.js';

/** UTF-8 decoder shared by every call (decoding without `stream` keeps no state). */
const utf8 = new TextDecoder();

/** Bytes of excerpt shown on each side of a break (before = cached entry, after = request). */
export const EXCERPT_BYTES = 80;
/** Of those, how many come before the first changed byte. */
const EXCERPT_LEAD = 24;

/**
 * The first divergence of a request against a cache entry.
 * `byteOffset`: in wire mode the offset of the first changed byte in the request body (bytes);
 * in reconstructed mode the offset in the request's canonical prefix bytes.
 */
export interface BreakPoint {
  segment: BreakSegment;
  /** Index of the item within its segment (tool index, system block index, message index). */
  blockIndex: number;
  /** JSON path of the first changed byte, e.g. `messages[0].content[0].text`. */
  path: string;
  byteOffset: number;
  /** Up to 80 bytes of the cached entry around the change (UTF-8 text, untrusted). */
  before: string;
  /** Up to 80 bytes of the request around the change (UTF-8 text, untrusted). */
  after: string;
  /**
   * Index (UTF-16 units) in `before` and in `after` of the character that holds the first changed
   * byte (the text before it is the same on both sides); 0 when there is no excerpt.
   */
  excerptAt: number;
  /** Depth (1-based block count) of the first differing block in the request chain. */
  depth: number;
  /** Offset of the first changed byte inside the differing block (bytes). */
  offsetInBlock: number;
  /** The differing blocks (old = cache entry's, new = request's); absent when one side ends. */
  oldBlock?: Block;
  newBlock?: Block;
}

/** Render order used when the caller gives none (Anthropic, reference/providers.md §1.2). */
const DEFAULT_ORDER: readonly Segment[] = ['tools', 'system', 'messages'];

/**
 * Locates the first divergence between an entry chain and a request chain.
 * Returns null when the request extends (or equals, or is a prefix of) the entry.
 * @param renderOrder the provider family's segment order (provider-rules.json `renderOrder`); an
 *   opaque head always comes first
 * @param bodyOffsets the request's own body offsets of shared blocks, by depth (LlmRequest.bodyOffsets)
 */
export function diverge(entry: BlockNode | null, request: BlockNode | null, renderOrder: readonly Segment[] = DEFAULT_ORDER, bodyOffsets?: ReadonlyMap<number, number>): BreakPoint | null {
  if (!request) return null;
  const common = commonDepth(entry, request);
  if (!entry || common >= entry.depth || common >= request.depth) return null;
  const oldNode = entry.at(common + 1)!;
  const newNode = request.at(common + 1)!;
  return locate(oldNode, newNode, renderOrder, bodyOffsets?.get(common + 1));
}

/** @param own the request's own body offset of newNode's block when it differs from the block's `bodyOffset` (a shared block) */
function locate(oldNode: BlockNode, newNode: BlockNode, renderOrder: readonly Segment[], own?: number): BreakPoint {
  const o = oldNode.block;
  const n = newNode.block;
  const sameItem = o.segment === n.segment;
  const off = sameItem ? firstDiff(o.bytes, n.bytes) : 0;
  // The differing blocks are of different segments when one side's segment ended there: a block
  // was removed from the end of the old side's segment, or added at the end of the new side's.
  // The break is in the earlier of the two segments in render order (a removed last tool is a
  // tools change, not a system change), at the item that was removed or added; a removed item is
  // named by its path in the entry, since the request has no such item.
  const rank = (s: Block['segment']) => (s === 'head' ? -1 : renderOrder.indexOf(s));
  const oldFirst = !sameItem && rank(o.segment) < rank(n.segment);
  const at = oldFirst ? o : n;
  const base = at.startPath ?? at.path;
  const inner = at.segment === 'head' || oldFirst ? '' : pathAtOffset(n.bytes, off);
  const body = own ?? n.bodyOffset;
  const byteOffset = body !== undefined ? body + rawOffset(off, n.removed) : (newNode.prev?.bytesThrough ?? 0) + off;
  return {
    segment: at.segment,
    blockIndex: at.item,
    path: at.segment === 'head' ? '(head)' : base + inner,
    byteOffset,
    before: excerpt(o.bytes, off),
    after: excerpt(n.bytes, off),
    excerptAt: excerptIndex(n.bytes, off),
    depth: newNode.depth,
    offsetInBlock: off,
    oldBlock: o,
    newBlock: n,
  };
}

/** Offset of the first differing byte (length of the common prefix of two byte strings). */
export function firstDiff(a: Uint8Array, b: Uint8Array): number {
  const len = Math.min(a.length, b.length);
  let i = 0;
  while (i < len && a[i] === b[i]) i++;
  return i;
}

/** Maps an offset in marker-stripped bytes back to the raw span (markers re-inserted). */
function rawOffset(off: number, removed: Array<[number, number]> | undefined): number {
  let raw = off;
  for (const [s, e] of removed ?? []) {
    if (s <= raw) raw += e - s;
    else break;
  }
  return raw;
}

/** First byte of the excerpt around `off`: EXCERPT_LEAD bytes before it, moved to a character start. */
function excerptStart(bytes: Uint8Array, off: number): number {
  let start = Math.max(0, off - EXCERPT_LEAD);
  while (start < off && start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  return start;
}

/** Index (UTF-16 units) in `excerpt(bytes, off)` of the character that holds byte `off`. */
export function excerptIndex(bytes: Uint8Array, off: number): number {
  const start = excerptStart(bytes, off);
  let charStart = Math.min(off, bytes.length);
  while (charStart > start && (bytes[charStart] & 0xc0) === 0x80) charStart--;
  return utf8.decode(bytes.subarray(start, charStart)).length;
}

/** UTF-8 text around `off`, at most EXCERPT_BYTES bytes, never splitting a character. */
export function excerpt(bytes: Uint8Array, off: number): string {
  let start = excerptStart(bytes, off);
  let end = Math.min(bytes.length, start + EXCERPT_BYTES);
  while (start < end && (bytes[start] & 0xc0) === 0x80) start++;
  while (end > start && end < bytes.length && (bytes[end] & 0xc0) === 0x80) end--;
  return utf8.decode(bytes.subarray(start, end));
}
