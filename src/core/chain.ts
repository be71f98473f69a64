/**
 * Persistent prefix chains with chained SHA-256 hashes.
 *
 * A request's prefix is a linked list of blocks in render order, from the head (tools, system)
 * to the newest message block. Requests that share a prefix share nodes, so building every
 * request of an append-only session costs time and memory linear in its distinct blocks.
 *
 * Hash of the chain at depth k (DESIGN.md "prefix hash"):
 *   H_0 = 32 zero bytes, H_k = sha256(H_{k-1} ‖ len_k as 8-byte big-endian ‖ bytes_k)
 * computed once per node: when the node is built for a block given as text (reconstructed mode:
 * the text is read once, hashed and not kept), lazily otherwise (wire mode: the bytes are kept).
 */
import { createHash, hash as sha256Once } from 'node:crypto';
import type { Block, CacheBreakpoint } from './model.js';

/** H_0, as a digest string (see BlockNode.digest). */
const ZERO = '\0'.repeat(32);

/**
 * Scratch buffer for one hash input `H_{k-1} ‖ len_k ‖ bytes_k`, so that a block is UTF-8 encoded
 * straight into reused memory and hashed in one call (no per-block Buffer, no Hash object).
 * Hashing is synchronous, so one buffer serves every chain. Larger blocks are streamed.
 */
let scratch = Buffer.allocUnsafe(256 * 1024);
const MAX_SCRATCH = 8 * 1024 * 1024;

/**
 * H_k from H_{k-1} and block k (its `text` when given, else its `bytes`), `size` = its byte length.
 * Digests are 32-character binary (latin1) strings: one small string per node instead of a
 * Buffer with its ArrayBuffer, compared with `===`.
 */
function chainStep(prev: string, size: number, block: Block, text: string | undefined): string {
  const need = 40 + size;
  if (need > MAX_SCRATCH) {
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(size));
    const h = createHash('sha256').update(prev, 'latin1').update(len);
    if (text !== undefined) h.update(text, 'utf8');
    else h.update(block.bytes);
    return h.digest('binary');
  }
  ensureScratch(need);
  scratch.write(prev, 0, 32, 'latin1');
  writeLength(size);
  if (text !== undefined) scratch.write(text, 40, size, 'utf8');
  else scratch.set(block.bytes, 40);
  return sha256Once('sha256', scratch.subarray(0, need), 'binary');
}

/** UTF-8 length of the text the last `textStep` hashed (bytes). */
let textSize = 0;

/**
 * H_k for a block given as text, encoding it once: straight into the scratch buffer when it fits
 * (UTF-8 takes at most 3 bytes per UTF-16 unit), the length then being what was written.
 * Sets `textSize`.
 */
function textStep(prev: string, block: Block, text: string): string {
  const max = 40 + 3 * text.length;
  if (max > MAX_SCRATCH) {
    textSize = Buffer.byteLength(text, 'utf8');
    return chainStep(prev, textSize, block, text);
  }
  ensureScratch(max);
  scratch.write(prev, 0, 32, 'latin1');
  textSize = scratch.write(text, 40, 'utf8');
  writeLength(textSize);
  return sha256Once('sha256', scratch.subarray(0, 40 + textSize), 'binary');
}

/**
 * A block class may offer its canonical bytes as parts under this key: strings (UTF-8 encoded
 * here) and byte ranges (copied as they are), whose concatenation is exactly the UTF-8 encoding
 * of its `text`; or undefined, and the node reads `text`. Reconstructed message blocks give
 * their envelope and serialized value apart (wire.ts), so no concatenated text is built and
 * flattened (a copy of every block) only to be encoded.
 */
export const BLOCK_PARTS: unique symbol = Symbol('prefix-lens.blockParts');

/** One part of a block's canonical bytes (see BLOCK_PARTS). */
export type BlockPart = string | Uint8Array;

/** H_k for a block given as parts (BLOCK_PARTS), written once into the scratch buffer. Sets `textSize`. */
function partsStep(prev: string, parts: readonly BlockPart[]): string {
  let max = 40;
  for (const p of parts) max += typeof p === 'string' ? 3 * p.length : p.length;
  if (max > MAX_SCRATCH) {
    let size = 0;
    for (const p of parts) size += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length;
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(size));
    const h = createHash('sha256').update(prev, 'latin1').update(len);
    for (const p of parts) {
      if (typeof p === 'string') h.update(p, 'utf8');
      else h.update(p);
    }
    textSize = size;
    return h.digest('binary');
  }
  ensureScratch(max);
  scratch.write(prev, 0, 32, 'latin1');
  let at = 40;
  for (const p of parts) {
    if (typeof p === 'string') at += scratch.write(p, at, 'utf8');
    else {
      scratch.set(p, at);
      at += p.length;
    }
  }
  textSize = at - 40;
  writeLength(textSize);
  return sha256Once('sha256', scratch.subarray(0, at), 'binary');
}

function ensureScratch(bytes: number): void {
  if (bytes > scratch.length) scratch = Buffer.allocUnsafe(Math.min(MAX_SCRATCH, Math.max(bytes, scratch.length * 2)));
}

/** len_k as 8-byte big-endian at scratch[32..40). */
function writeLength(size: number): void {
  scratch.writeUInt32BE(Math.floor(size / 0x100000000), 32);
  scratch.writeUInt32BE(size >>> 0, 36);
}

/**
 * A block class may offer a cheap copy of itself under this key (same bytes, same laziness):
 * BlockNode.withBreakpoint uses it instead of copying every property descriptor.
 */
export const COPY_BLOCK: unique symbol = Symbol('prefix-lens.copyBlock');

/** Two lowercase hex digits of each byte value. */
const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** One block in a prefix chain. `depth` counts blocks from the start (1-based). */
export class BlockNode {
  /**
   * An ancestor further up (skew-binary jump pointer, Myers 1983: its depth depends only on this
   * node's depth), null for a first node. With `prev` it reaches any ancestor, and the divergence
   * of two chains, in O(log n) steps, at one pointer per node (an array of 2^i ancestors per node
   * was a tenth of a long session's heap).
   */
  private readonly jump: BlockNode | null;
  /** H through this node as a 32-character binary string, once computed. */
  private digest: string | undefined;
  private hex: string | undefined;
  /** Byte length of the block's canonical bytes. */
  readonly size: number;
  /** Total canonical bytes from the first block through this one (bytes). */
  readonly bytesThrough: number;
  /** The nearest node at or above this one whose block carries a cache breakpoint. */
  readonly lastMarked: BlockNode | null;
  readonly depth: number;

  /**
   * @param same a node with the same predecessor and the same block bytes (only the breakpoint
   *   differs): its size and hash are reused instead of reading the block again
   */
  constructor(
    readonly prev: BlockNode | null,
    readonly block: Block,
    same?: BlockNode,
  ) {
    this.depth = prev ? prev.depth + 1 : 1;
    if (same) {
      this.size = same.size;
      this.digest = same.digest;
    } else {
      const parts = (block as Block & { [BLOCK_PARTS]?: () => readonly BlockPart[] | undefined })[BLOCK_PARTS]?.();
      const text = parts ? undefined : block.text;
      if (parts) {
        this.digest = partsStep(prev ? prev.hashKey : ZERO, parts);
        this.size = textSize;
      } else if (text !== undefined) {
        // Read the text once (it may be re-serialized on each access) and hash it now.
        this.digest = textStep(prev ? prev.hashKey : ZERO, block, text);
        this.size = textSize;
      } else {
        const bytes = block.bytes;
        if (!(bytes instanceof Uint8Array)) {
          throw new TypeError(`block ${block.path} has neither text nor bytes`);
        }
        this.size = bytes.length;
      }
    }
    this.bytesThrough = (prev ? prev.bytesThrough : 0) + this.size;
    this.lastMarked = block.breakpoint ? this : (prev?.lastMarked ?? null);
    // Jump twice as far as the parent does when its two jumps span equal distances, else to the parent.
    const pj = prev?.jump ?? null;
    this.jump = prev && pj && pj.jump && prev.depth - pj.depth === pj.depth - pj.jump.depth ? pj.jump : prev;
  }

  /**
   * The chained hash as a 32-character binary string: equal for equal hashes, a compact map key.
   * Computes missing ancestors iteratively.
   */
  get hashKey(): string {
    if (this.digest !== undefined) return this.digest;
    const pending: BlockNode[] = [];
    let n: BlockNode | null = this;
    while (n && n.digest === undefined) {
      pending.push(n);
      n = n.prev;
    }
    let h = n?.digest ?? ZERO;
    for (let i = pending.length - 1; i >= 0; i--) {
      const node = pending[i];
      h = chainStep(h, node.size, node.block, node.block.text);
      node.digest = h;
    }
    return h;
  }

  /** Full hex form of the hash (64 chars), memoized. */
  get hashHex(): string {
    return (this.hex ??= Buffer.from(this.hashKey, 'latin1').toString('hex'));
  }

  /** True when both chains hash the same (content-equal prefixes). */
  sameHash(other: BlockNode): boolean {
    return this === other || this.hashKey === other.hashKey;
  }

  /**
   * Short hex form of the hash as shown in the UI (12 hex chars): the first 6 bytes of the digest
   * through a table (the full hex, a Buffer and its encoding per request node, was ~1.5 % of a
   * run's CPU, profile of an 8.4 MiB session).
   */
  get shortHash(): string {
    if (this.hex !== undefined) return this.hex.slice(0, 12);
    const k = this.hashKey;
    return HEX_BYTE[k.charCodeAt(0)] + HEX_BYTE[k.charCodeAt(1)] + HEX_BYTE[k.charCodeAt(2)] + HEX_BYTE[k.charCodeAt(3)] + HEX_BYTE[k.charCodeAt(4)] + HEX_BYTE[k.charCodeAt(5)];
  }

  /**
   * The same block at the same place carrying `breakpoint` instead (the breakpoint is not part of
   * the bytes): shares the predecessor, size and hash; the block is copied by blockWithBreakpoint
   * (nothing is serialized).
   */
  withBreakpoint(breakpoint: CacheBreakpoint | undefined): BlockNode {
    return new BlockNode(this.prev, blockWithBreakpoint(this.block, breakpoint), this);
  }

  /** The jump pointer (see `jump`), for commonDepth. */
  get jumpNode(): BlockNode | null {
    return this.jump;
  }

  /** The ancestor (or self) at `depth` (1-based); null when depth < 1 or > this.depth. */
  at(depth: number): BlockNode | null {
    if (depth < 1 || depth > this.depth) return null;
    let n: BlockNode = this;
    while (n.depth > depth) n = n.jump!.depth >= depth ? n.jump! : n.prev!;
    return n;
  }
}

/**
 * A copy of `block` carrying `breakpoint` instead (none when undefined): the block's own copy
 * (COPY_BLOCK: same bytes, same laziness) when it offers one, else a copy with its prototype and
 * property descriptors (getters stay getters, so nothing is serialized). Not a spread: a
 * reconstructed message block's `text`, `bytes` and `path` are getters of its class (wire.ts), which
 * a spread would not copy.
 */
export function blockWithBreakpoint(src: Block, breakpoint: CacheBreakpoint | undefined): Block {
  const copyable = src as Block & { [COPY_BLOCK]?: () => Block };
  const block = copyable[COPY_BLOCK]
    ? copyable[COPY_BLOCK]()
    : (Object.create(Object.getPrototypeOf(src), Object.getOwnPropertyDescriptors(src)) as Block);
  if (breakpoint) block.breakpoint = breakpoint;
  else delete block.breakpoint;
  return block;
}

/** Appends a block to a chain (null = start a new chain). */
export function append(prev: BlockNode | null, block: Block): BlockNode {
  return new BlockNode(prev, block);
}

/** Builds a chain from blocks in order; returns its last node (null for no blocks). */
export function chainOf(blocks: Iterable<Block>, start: BlockNode | null = null): BlockNode | null {
  let n = start;
  for (const b of blocks) n = new BlockNode(n, b);
  return n;
}

/**
 * Length in blocks of the longest content-equal prefix of two chains (0 when the first blocks
 * differ). Shared nodes short-cut; otherwise hashes are compared down the jump pointers, O(log n)
 * steps.
 */
export function commonDepth(a: BlockNode | null, b: BlockNode | null): number {
  if (!a || !b) return 0;
  const d = Math.min(a.depth, b.depth);
  let x = a.at(d)!;
  let y = b.at(d)!;
  if (x === y || equalHash(x, y)) return d;
  // Invariant: x and y are at the same depth and differ (so do all their descendants compared).
  // Their jump pointers land at the same depth (it depends on the depth only): take the jump when
  // the targets still differ, else one step up, until the parents are equal.
  for (;;) {
    const xj = x.jumpNode;
    const yj = y.jumpNode;
    if (xj && yj && xj !== yj && !equalHash(xj, yj)) {
      x = xj;
      y = yj;
      continue;
    }
    const xp = x.prev;
    const yp = y.prev;
    if (!xp || !yp || xp === yp || equalHash(xp, yp)) return x.depth - 1;
    x = xp;
    y = yp;
  }
}

/** Nodes carrying a cache breakpoint, newest first. */
export function markedNodes(tail: BlockNode | null): BlockNode[] {
  const out: BlockNode[] = [];
  for (let n = tail?.lastMarked ?? null; n; n = n.prev?.lastMarked ?? null) out.push(n);
  return out;
}

/** Blocks of a chain from first to last (allocates; for display and small chains). */
export function blocksOf(tail: BlockNode | null): Block[] {
  const out: Block[] = [];
  for (let n = tail; n; n = n.prev) out.push(n.block);
  return out.reverse();
}

function equalHash(x: BlockNode, y: BlockNode): boolean {
  return x.hashKey === y.hashKey;
}

