/**
 * A request's prefix as a text document to read and diff (the extension's "Compare with Matched
 * Request" opens two of them in VS Code's diff editor): one section per block of its prefix chain,
 * in cache order (an opaque head, then tools → system → messages as the family renders them), each
 * under a header line that names the block; the block's canonical bytes follow as UTF-8 text with
 * a line break inserted after every `\n` escape, so a long system prompt or tool result reads (and
 * diffs) line by line. Removing those inserted line breaks gives the canonical bytes back exactly.
 * Pure: no vscode, no fs.
 */
import type { BlockNode } from '../core/chain.js';
import { diverge, type BreakPoint } from '../core/diverge.js';
import type { Block, LlmRequest, Segment } from '../core/model.js';

/** A position in a RequestDocument (0-based line; character in UTF-16 units, as VS Code counts). */
export interface TextPosition {
  line: number;
  character: number;
}

/** A rendered request: its text, and where the block a break falls in starts and where its first changed byte is. */
export interface RequestDocument {
  /** The document (untrusted text: shown as plain text only). */
  text: string;
  /** Header line (0-based) of each block, by chain depth − 1. */
  blockLines: number[];
  /** The first changed byte against the other request of a comparison, when there is one. */
  changeAt: TextPosition | null;
}

/** Two requests of a session rendered for a diff: the earlier (`base`) and the later, and where they diverge. */
export interface RequestComparison {
  base: RequestDocument;
  request: RequestDocument;
  /** The first difference between the two prefixes (core/diverge.ts), null when the later one extends the earlier. */
  break: BreakPoint | null;
}

const utf8 = new TextDecoder('utf-8');

/**
 * `bytes` as text with a line break after every `\n` escape of a JSON string (not after `\\n`,
 * an escaped backslash followed by `n`). Returns the text and, when `upTo` is given, the position
 * of byte `upTo` in it (relative: line 0 = the text's first line).
 */
export function splitEscapedLines(bytes: Uint8Array, upTo?: number): { text: string; at: TextPosition | null } {
  const text = utf8.decode(bytes);
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
  out += text.slice(from);
  if (upTo === undefined) return { text: out, at: null };
  // The same split over the bytes before `upTo` (a character cut at its end decodes as U+FFFD: one unit, as the whole character's first).
  const head = splitEscapedLines(bytes.subarray(0, Math.min(upTo, bytes.length))).text;
  const lines = head.split('\n');
  return { text: out, at: { line: lines.length - 1, character: lines.at(-1)!.length } };
}

/** The header line of a block: its segment, JSON path, size and where its bytes start in the prefix. */
function header(block: Block, depth: number, startByte: number, hash: string): string {
  const what = block.segment === 'head' ? 'head (opaque: the part of the prefix the transcript does not record)' : `${block.segment} · ${block.startPath ?? block.path}`;
  const extra = [block.role ? `role ${block.role}` : '', block.origin ? `from ${block.origin}` : '', block.breakpoint ? `cache breakpoint (${block.breakpoint.ttlSeconds} s)` : ''].filter(Boolean).join(' · ');
  return `──── block ${depth}: ${what} · ${block.bytes.length.toLocaleString('en-US')} bytes at prefix byte ${startByte.toLocaleString('en-US')} · prefix ${hash}${extra ? ` · ${extra}` : ''}`;
}

/** Line breaks in `text`. */
function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The nodes of a chain, first to last. */
function nodesOf(tail: BlockNode | null): BlockNode[] {
  const out: BlockNode[] = [];
  for (let n = tail; n; n = n.prev) out.push(n);
  return out.reverse();
}

/**
 * Renders `req` (its prefix chain, `req.tail`). `title`: the first line (e.g. the session and
 * request number). `change`: the depth (1-based) of a block and a byte offset in it to locate.
 */
export function requestDocument(req: LlmRequest, title: string, change?: { depth: number; offsetInBlock: number }): RequestDocument {
  const lines: string[] = [title, `${req.provider}/${req.model} · ${req.api} · ${req.evidence} · ${req.tail ? `${req.tail.depth} blocks, ${req.tail.bytesThrough.toLocaleString('en-US')} bytes` : 'no prefix known'}`];
  const params = Object.entries(req.params);
  if (params.length) lines.push(`params: ${params.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')}`);
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
 * `base` (an earlier request, e.g. the matched one) and `req` rendered for a diff, each with the
 * position of the first changed byte. `renderOrder`: the provider family's segment order
 * (provider-rules.json), as the judge used it.
 */
export function compareRequests(base: LlmRequest, req: LlmRequest, titles: { base: string; request: string }, renderOrder?: readonly Segment[]): RequestComparison {
  const b = diverge(base.tail, req.tail, renderOrder);
  const at = b ? { depth: b.depth, offsetInBlock: b.offsetInBlock } : undefined;
  return { base: requestDocument(base, titles.base, at), request: requestDocument(req, titles.request, at), break: b };
}
