/**
 * A request's prefix as a text document to read and diff (the extension's "Compare with Matched
 * Request" opens two of them in VS Code's diff editor; `prefix-lens diff` prints their unified
 * diff): one section per block of its prefix chain, in cache order (an opaque head, then tools →
 * system → messages as the family renders them), each under a header line that names the block;
 * the block's canonical bytes follow as UTF-8 text with a line break inserted after every `\n`
 * escape, so a long system prompt or tool result reads (and diffs) line by line. Removing those
 * inserted line breaks gives the canonical bytes back exactly. What the transcript names (title,
 * model, params, role) is made single-line (sanitize.ts `safe`), so it cannot add lines.
 * Pure: no vscode, no fs.
 */
import type { BlockNode } from '../core/chain.js';
import { diverge } from '../core/diverge.js';
import type { Block, LlmRequest, Segment } from '../core/model.js';
import { safe } from '../sanitize.js';
import { n } from './reason.js';
import { plural } from '../plural.js';

/** A position in a RequestDocument (0-based line; character in UTF-16 units, as VS Code counts). */
export interface TextPosition {
  line: number;
  character: number;
}

/** A rendered request: its text, where each block's header is, and where a change starts. */
export interface RequestDocument {
  /** The document (untrusted text: shown as plain text only). */
  text: string;
  /** Header line (0-based) of each block, by chain depth − 1. */
  blockLines: number[];
  /** The first changed byte against the other request of a comparison, when there is one. */
  changeAt: TextPosition | null;
}

/**
 * How two prefixes relate: `differs` at a block (depth 1-based in the chains; `offsetInBlock` and
 * `prefixByte` in canonical bytes, as the documents' headers count them), `extends` (the later
 * one's prefix starts with the earlier one's whole prefix and is longer), `start-of` (the later
 * one's whole prefix is the start of the earlier one's), `same` (identical prefixes), `unknown` (a
 * side has no prefix chain: nothing can be compared).
 */
export type PrefixDifference =
  | { kind: 'differs'; depth: number; segment: string; path: string; offsetInBlock: number; prefixByte: number }
  | { kind: 'extends' }
  | { kind: 'start-of' }
  | { kind: 'same' }
  | { kind: 'unknown'; missing: 'base' | 'request' | 'both' };

/** Two requests of a session rendered for a diff: the earlier (`base`) and the later, and how their prefixes relate. */
export interface RequestComparison {
  base: RequestDocument;
  request: RequestDocument;
  difference: PrefixDifference;
}

const utf8 = new TextDecoder('utf-8');
/** The line breaks VS Code's text model splits on. */
const EOL = /\r\n|\r|\n/;

/**
 * `bytes` as text with a line break after every `\n` escape of a JSON string (not after `\\n`,
 * an escaped backslash followed by `n`). With `upTo`, also the position (relative: line 0 = the
 * text's first line) of the character that holds byte `upTo`.
 */
export function splitEscapedLines(bytes: Uint8Array, upTo?: number): { text: string; at: TextPosition | null } {
  const text = split(utf8.decode(bytes));
  if (upTo === undefined) return { text, at: null };
  // The characters before the one holding the byte: back to its first byte (UTF-8 continuation bytes are 10xxxxxx).
  let start = Math.min(upTo, bytes.length);
  while (start > 0 && start < bytes.length && (bytes[start] & 0xc0) === 0x80) start--;
  const lines = split(utf8.decode(bytes.subarray(0, start))).split(EOL);
  return { text, at: { line: lines.length - 1, character: lines.at(-1)!.length } };
}

function split(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== 0x5c) continue; // backslash: the next character is escaped
    if (text.charCodeAt(i + 1) === 0x6e) {
      out += text.slice(from, i + 2) + '\n';
      from = i + 2;
    }
    i++;
  }
  return out + text.slice(from);
}

/** Line breaks in `text`, as VS Code counts them (CR LF, CR, LF). */
function countLines(text: string): number {
  return text.split(EOL).length - 1;
}

/** The header line of a block: its segment, JSON path, size and where its bytes start in the prefix. */
function header(block: Block, depth: number, startByte: number, hash: string): string {
  const what = block.segment === 'head' ? 'head (opaque: the part of the prefix the transcript does not record)' : `${block.segment} · ${safe(block.startPath ?? block.path)}`;
  const extra = [block.role ? `role ${safe(block.role)}` : '', block.origin ? `from ${safe(block.origin)}` : '', block.breakpoint ? `cache breakpoint (${block.breakpoint.ttlSeconds} s)` : ''].filter(Boolean).join(' · ');
  return `──── block ${depth}: ${what} · ${n(block.bytes.length)} bytes at prefix byte ${n(startByte)} · prefix ${hash}${extra ? ` · ${extra}` : ''}`;
}

/** The nodes of a chain, first to last. */
function nodesOf(tail: BlockNode | null): BlockNode[] {
  const out: BlockNode[] = [];
  for (let x = tail; x; x = x.prev) out.push(x);
  return out.reverse();
}

/**
 * Renders `req` (its prefix chain, `req.tail`). `title`: the first line (e.g. the session's name;
 * the same on both sides of a diff, so it is no change). `change`: the depth (1-based) of a block
 * and a byte offset in it to locate.
 */
export function requestDocument(req: LlmRequest, title: string, change?: { depth: number; offsetInBlock: number }): RequestDocument {
  const lines: string[] = [safe(title), `${safe(`${req.provider}/${req.model}`)} · ${safe(req.api)} · ${req.evidence} · ${req.tail ? `${plural(req.tail.depth, 'block', { shown: n(req.tail.depth) })}, ${plural(req.tail.bytesThrough, 'byte', { shown: n(req.tail.bytesThrough) })}` : 'no prefix known'}`];
  const params = Object.entries(req.params);
  if (params.length) lines.push(`params: ${params.map(([k, v]) => safe(`${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)).join(', ')}`);
  const blockLines: number[] = [];
  let changeAt: TextPosition | null = null;
  // Document line of the next entry of `lines` (a block's body spans several).
  let line = lines.length;
  for (const node of nodesOf(req.tail)) {
    lines.push('');
    blockLines.push(line + 1);
    lines.push(header(node.block, node.depth, node.bytesThrough - node.size, node.shortHash));
    line += 2;
    const here = change?.depth === node.depth ? change.offsetInBlock : undefined;
    const body = splitEscapedLines(node.block.bytes, here);
    if (body.at) changeAt = { line: line + body.at.line, character: body.at.character };
    lines.push(body.text);
    line += 1 + countLines(body.text);
  }
  return { text: `${lines.join('\n')}\n`, blockLines, changeAt };
}

/**
 * How `req`'s prefix relates to `base`'s (core/diverge.ts on the two whole chains).
 * `renderOrder`: the provider family's segment order (provider-rules.json), as the judge uses it.
 */
export function prefixDifference(base: LlmRequest, req: LlmRequest, renderOrder?: readonly Segment[]): PrefixDifference {
  if (!base.tail || !req.tail) return { kind: 'unknown', missing: !base.tail && !req.tail ? 'both' : !base.tail ? 'base' : 'request' };
  const b = diverge(base.tail, req.tail, renderOrder);
  if (!b) return base.tail.sameHash(req.tail) ? { kind: 'same' } : req.tail.depth > base.tail.depth ? { kind: 'extends' } : { kind: 'start-of' };
  const node = req.tail.at(b.depth) ?? base.tail.at(b.depth)!;
  return { kind: 'differs', depth: b.depth, segment: b.segment, path: b.path, offsetInBlock: b.offsetInBlock, prefixByte: node.bytesThrough - node.size + b.offsetInBlock };
}

/**
 * `base` (an earlier request, e.g. the matched one) and `req` rendered for a diff under one title,
 * each with the position of the first changed byte.
 */
export function compareRequests(base: LlmRequest, req: LlmRequest, title: string, renderOrder?: readonly Segment[]): RequestComparison {
  const difference = prefixDifference(base, req, renderOrder);
  const at = difference.kind === 'differs' ? { depth: difference.depth, offsetInBlock: difference.offsetInBlock } : undefined;
  return { base: requestDocument(base, title, at), request: requestDocument(req, title, at), difference };
}

/**
 * The one line that names a comparison, e.g. `pi lab session: #8 ↔ #9 · verdict break
 * (history-rewritten) · first difference in block 2 (messages · messages[0].content[0].text),
 * byte 49 of the block, prefix byte 56`. `base`, `index`: the two requests' numbers (core/numbering.ts:
 * `9`, `8.1`). `verdict`: the judge's verdict and cause kinds of request
 * `index`, given only when `base` is the request the judge compared it with (the verdict is about
 * that comparison), with `breakSegment` the segment of its break point (null without one): a break
 * the judge put in an opaque head (the system prompt and tools a transcript does not record, e.g.
 * Pi's) is said to be there, where the recorded prefixes show no difference. Single-line and control-free.
 */
export function comparisonLine(name: string, base: string, index: string, d: PrefixDifference, verdict?: { verdict: string; causes: string[]; breakSegment?: string | null }): string {
  const parts = [`${safe(name)}: #${base} ↔ #${index}`];
  if (verdict) parts.push(`verdict ${verdict.verdict}${verdict.causes.length ? ` (${verdict.causes.join(', ')})` : ''}`);
  if (d.kind === 'differs') parts.push(`first difference in block ${d.depth} (${d.segment} · ${safe(d.path)}), byte ${n(d.offsetInBlock)} of the block, prefix byte ${n(d.prefixByte)}`);
  // The head's bytes here are a stand-in (the same on both sides): the change the judge found in it is not shown.
  else if ((d.kind === 'extends' || d.kind === 'same') && verdict?.breakSegment === 'head')
    parts.push(`${d.kind === 'same' ? 'recorded prefixes identical' : `#${index}'s recorded prefix extends #${base}'s`}: the change is in the head the transcript does not record (opaque, not shown)`);
  else if (d.kind === 'extends') parts.push(`#${index}'s prefix extends #${base}'s`);
  else if (d.kind === 'start-of') parts.push(`#${index}'s prefix is the start of #${base}'s`);
  else if (d.kind === 'same') parts.push('identical prefixes');
  else parts.push(`no prefix known for ${d.missing === 'both' ? 'either' : `#${d.missing === 'base' ? base : index}`}`);
  return parts.join(' · ');
}
