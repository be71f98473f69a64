/**
 * Persistent prefix chains with chained SHA-256 hashes.
 *
 * A request's prefix is a linked list of blocks in render order, from the head (tools, system)
 * to the newest message block. Requests that share a prefix share nodes, so building every
 * request of an append-only session costs time and memory linear in its distinct blocks.
 *
 * Hash of the chain at depth k (DESIGN.md "prefix hash"):
 *   H_0 = 32 zero bytes, H_k = sha256(H_{k-1} ‖ len_k as 8-byte big-endian ‖ bytes_k)
 * computed lazily, once per node.
 */
import { createHash } from 'node:crypto';
import type { Block } from './model.js';

const ZERO = new Uint8Array(32);

/** One block in a prefix chain. `depth` counts blocks from the start (1-based). */
export class BlockNode {
  /** Ancestors at 2^i levels above this node (jump[0] = prev); used to find divergence in O(log n). */
  private readonly jump: BlockNode[];
  private digest: Uint8Array | undefined;
  /** Total canonical bytes from the first block through this one (bytes). */
  readonly bytesThrough: number;
  /** The nearest node at or above this one whose block carries a cache breakpoint. */
  readonly lastMarked: BlockNode | null;

  constructor(
    readonly prev: BlockNode | null,
    readonly block: Block,
  ) {
    this.depth = prev ? prev.depth + 1 : 1;
    this.bytesThrough = (prev ? prev.bytesThrough : 0) + block.bytes.length;
    this.lastMarked = block.breakpoint ? this : (prev?.lastMarked ?? null);
    this.jump = [];
    let up = prev;
    for (let i = 0; up; i++) {
      this.jump.push(up);
      up = up.jump[i] ?? null;
    }
  }

  readonly depth: number;

  /** The chained hash through this node (32 bytes). Computes missing ancestors iteratively. */
  get hash(): Uint8Array {
    if (this.digest) return this.digest;
    const pending: BlockNode[] = [];
    let n: BlockNode | null = this;
    while (n && !n.digest) {
      pending.push(n);
      n = n.prev;
    }
    let h = n?.digest ?? ZERO;
    const len = Buffer.alloc(8);
    for (let i = pending.length - 1; i >= 0; i--) {
      const node = pending[i];
      len.writeBigUInt64BE(BigInt(node.block.bytes.length));
      h = createHash('sha256').update(h).update(len).update(node.block.bytes).digest();
      node.digest = h;
    }
    return h;
  }

  /** Short hex form of the hash as shown in the UI (12 hex chars). */
  get shortHash(): string {
    return shortHex(this.hash);
  }

  /** The ancestor (or self) at `depth` (1-based); null when depth < 1 or > this.depth. */
  at(depth: number): BlockNode | null {
    if (depth < 1 || depth > this.depth) return null;
    let n: BlockNode = this;
    let diff = n.depth - depth;
    for (let i = 0; diff > 0; i++, diff >>= 1) {
      if (diff & 1) n = n.jump[i];
    }
    return n;
  }
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
 * differ). Shared nodes short-cut; otherwise hashes are compared with binary lifting, O(log n).
 */
export function commonDepth(a: BlockNode | null, b: BlockNode | null): number {
  if (!a || !b) return 0;
  const d = Math.min(a.depth, b.depth);
  let x = a.at(d)!;
  let y = b.at(d)!;
  if (x === y || equalHash(x, y)) return d;
  // Invariant: x and y differ; find the deepest equal ancestors.
  for (let i = 31; i >= 0; i--) {
    const step = 1 << i;
    if (step >= x.depth) continue;
    const xa = x.at(x.depth - step)!;
    const ya = y.at(y.depth - step)!;
    if (xa !== ya && !equalHash(xa, ya)) {
      x = xa;
      y = ya;
    }
  }
  return x.depth - 1;
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
  return Buffer.compare(x.hash, y.hash) === 0;
}

/** First 12 hex characters of a digest. */
export function shortHex(digest: Uint8Array): string {
  return Buffer.from(digest.subarray(0, 6)).toString('hex');
}
