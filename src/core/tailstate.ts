/**
 * Serializable forms of what continuing an analysis needs (the persisted incremental tail,
 * src/cache/tail.ts): a table of prefix-chain nodes, shared by the judge's live cache entries and
 * the Pi encoder's states, and the plain-data forms of those states. Pure (no fs): the cache
 * writes and validates them.
 *
 * A chain is stored as its blocks, parent first: `{p, b}` with `p` the index of the previous node
 * (-1 for a first node) and `b` the block's fields and canonical text (or, for a block that has
 * only bytes, such as an opaque head, the bytes in base64). Rebuilding a node hashes its block
 * again from the previous node's digest (chain.ts: H_k = sha256(H_{k-1} ‖ len ‖ bytes)), so no
 * hash state is stored; the digest of every saved tail is stored too and compared after the
 * rebuild (ChainWriter.tails: every node a state points at, the judge's and the encoder's; a
 * state whose blocks do not give the same hashes is refused).
 */
import { BlockNode } from './chain.js';
import type { Block, CacheBreakpoint } from './model.js';

/** One block of a stored chain. */
export interface StoredBlock {
  segment: Block['segment'];
  item: number;
  path: string;
  startPath?: string;
  role?: string;
  origin?: string;
  breakpoint?: CacheBreakpoint;
  /** Canonical text (UTF-8 of it = the block's bytes); absent when `bytes64` is given. */
  text?: string;
  /** The block's bytes, base64, for a block without text. */
  bytes64?: string;
}

/** One node of a stored chain table. */
export interface StoredNode {
  /** Index of the previous node in the table, -1 for a first node. */
  p: number;
  b: StoredBlock;
}

/**
 * A block rebuilt from its stored form: plain fields, `bytes` derived from `text` on each access
 * (a copy, as the reconstructed blocks give).
 */
class RestoredBlock implements Block {
  segment!: Block['segment'];
  item!: number;
  path!: string;
  startPath?: string;
  role?: string;
  origin?: string;
  breakpoint?: CacheBreakpoint;
  readonly text?: string;
  private readonly raw?: Uint8Array;

  constructor(b: StoredBlock) {
    this.segment = b.segment;
    this.item = b.item;
    this.path = b.path;
    if (b.startPath !== undefined) this.startPath = b.startPath;
    if (b.role !== undefined) this.role = b.role;
    if (b.origin !== undefined) this.origin = b.origin;
    if (b.breakpoint !== undefined) this.breakpoint = { ttlSeconds: b.breakpoint.ttlSeconds };
    if (b.text !== undefined) this.text = b.text;
    else this.raw = Buffer.from(b.bytes64 ?? '', 'base64');
  }

  get bytes(): Uint8Array {
    return this.text !== undefined ? Buffer.from(this.text, 'utf8') : Buffer.from(this.raw!);
  }
}

/** Builds a chain table from nodes: `ref` gives each node's index, adding it (and its ancestors) once. */
export class ChainWriter {
  readonly nodes: StoredNode[] = [];
  private readonly index = new Map<BlockNode, number>();
  /** Nodes of equal hash and block fields share one entry (e.g. the head of every chain). */
  private readonly byContent = new Map<string, number>();
  /** Index → hex prefix hash of every node passed to `ref` (the states' chain tails). */
  private readonly refs = new Map<number, string>();

  /**
   * [index, hex prefix hash] of every node `ref` was called with, in index order: what a loaded
   * table must hash as (a state whose rebuilt chains give other hashes is refused).
   */
  get tails(): Array<[number, string]> {
    return [...this.refs].sort((a, b) => a[0] - b[0]);
  }

  /** Index of `n` in the table (ancestors first), -1 for null; `n`'s hash is recorded in `tails`. */
  ref(n: BlockNode | null): number {
    if (!n) return -1;
    const i = this.add(n);
    if (!this.refs.has(i)) this.refs.set(i, n.hashHex);
    return i;
  }

  private add(n: BlockNode): number {
    const known = this.index.get(n);
    if (known !== undefined) return known;
    // Iterative: a chain can be thousands of nodes deep.
    const todo: BlockNode[] = [];
    for (let x: BlockNode | null = n; x && !this.index.has(x); x = x.prev) todo.push(x);
    for (let i = todo.length - 1; i >= 0; i--) {
      const x = todo[i];
      const p = x.prev ? this.index.get(x.prev)! : -1;
      const b = storedBlock(x.block);
      const key = `${p}\u0000${x.hashKey}\u0000${b.breakpoint?.ttlSeconds ?? ''}\u0000${b.path}\u0000${b.startPath ?? ''}\u0000${b.role ?? ''}\u0000${b.origin ?? ''}\u0000${b.item}\u0000${b.segment}`;
      let at = this.byContent.get(key);
      if (at === undefined) {
        at = this.nodes.length;
        this.nodes.push({ p, b });
        this.byContent.set(key, at);
      }
      this.index.set(x, at);
    }
    return this.index.get(n)!;
  }
}

function storedBlock(block: Block): StoredBlock {
  const out: StoredBlock = { segment: block.segment, item: block.item, path: block.path };
  if (block.startPath !== undefined) out.startPath = block.startPath;
  if (block.role !== undefined) out.role = block.role;
  if (block.origin !== undefined) out.origin = block.origin;
  if (block.breakpoint) out.breakpoint = { ttlSeconds: block.breakpoint.ttlSeconds };
  const text = block.text;
  if (text !== undefined) out.text = text;
  else out.bytes64 = Buffer.from(block.bytes).toString('base64');
  return out;
}

/**
 * Rebuilds a chain table's nodes (each hashed again from its parent's digest).
 * @throws Error when a node names a parent that is not before it
 */
export function readChains(nodes: readonly StoredNode[]): BlockNode[] {
  const out: BlockNode[] = [];
  for (let i = 0; i < nodes.length; i++) {
    const { p, b } = nodes[i];
    if (!Number.isInteger(p) || p < -1 || p >= i) throw new Error(`chain node ${i}: parent ${p} is not an earlier node`);
    out.push(new BlockNode(p < 0 ? null : out[p], new RestoredBlock(b)));
  }
  return out;
}

/** The node at `i` of a rebuilt table, null for -1. @throws Error for an index outside the table */
export function nodeAt(nodes: readonly BlockNode[], i: number): BlockNode | null {
  if (i === -1) return null;
  const n = nodes[i];
  if (!n) throw new Error(`chain node ${i} is not in the table`);
  return n;
}
