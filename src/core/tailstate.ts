/**
 * Serializable forms of what continuing an analysis needs (the persisted incremental tail,
 * src/cache/tail.ts): a table of prefix-chain nodes, shared by the judge's live cache entries and
 * the Pi encoder's states, and the plain-data forms of those states. Pure (no fs): the cache
 * writes and validates them.
 *
 * A chain is stored as its blocks, parent first: `{p, b}` with `p` the index of the previous node
 * (-1 for a first node) and `b` the block's fields; the blocks' bytes are not in these objects but
 * one after another in the table's `blob` (node order, `b.n` bytes each), so a state is written
 * and read without its texts being decoded, escaped into JSON, unescaped and encoded again (the
 * texts are most of a state: 1.19 of 1.41 MB for the largest bench corpus session). A block whose
 * text is not well-formed UTF-16 (a lone surrogate: its UTF-8 would not decode back to it) keeps
 * its `text` in `b` instead. Rebuilding a node hashes its block again from the previous node's
 * digest (chain.ts: H_k = sha256(H_{k-1} ‖ len ‖ bytes)), so no hash state is stored; the digest
 * of every saved tail is stored too and compared after the rebuild (ChainWriter.tails: every node
 * a state points at, the judge's and the encoder's; a state whose blocks do not give the same
 * hashes is refused).
 */
import { BLOCK_PARTS, BlockNode, type BlockPart } from './chain.js';
import type { Block, CacheBreakpoint } from './model.js';

/** One block of a stored chain (its bytes are in the table's blob, see the module comment). */
export interface StoredBlock {
  segment: Block['segment'];
  item: number;
  path: string;
  startPath?: string;
  role?: string;
  origin?: string;
  breakpoint?: CacheBreakpoint;
  /** Byte length of the block's bytes in the blob; absent when `text` is given. */
  n?: number;
  /** The block has bytes and no text (e.g. an opaque head). */
  raw?: true;
  /** Canonical text, only when it is not well-formed (then nothing of it is in the blob). */
  text?: string;
}

/** One node of a stored chain table. */
export interface StoredNode {
  /** Index of the previous node in the table, -1 for a first node. */
  p: number;
  b: StoredBlock;
}

/** A chain table: its nodes, and their blocks' bytes one after another (`b.n` each, in node order). */
export interface ChainTable {
  nodes: StoredNode[];
  blob: Uint8Array;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * A block rebuilt from its stored form: plain fields and its bytes (a view into the loaded
 * state); `text` is decoded from them on each access and `bytes` is a copy, as the reconstructed
 * blocks give; the chain node hashes the bytes as they are (BLOCK_PARTS).
 */
class RestoredBlock implements Block {
  segment!: Block['segment'];
  item!: number;
  path!: string;
  startPath?: string;
  role?: string;
  origin?: string;
  breakpoint?: CacheBreakpoint;
  private readonly own: string | undefined;
  private readonly raw: Uint8Array;
  private readonly textless: boolean;

  constructor(b: StoredBlock, raw: Uint8Array) {
    this.segment = b.segment;
    this.item = b.item;
    this.path = b.path;
    if (b.startPath !== undefined) this.startPath = b.startPath;
    if (b.role !== undefined) this.role = b.role;
    if (b.origin !== undefined) this.origin = b.origin;
    if (b.breakpoint !== undefined) this.breakpoint = { ttlSeconds: b.breakpoint.ttlSeconds };
    this.own = b.text;
    this.raw = raw;
    this.textless = b.raw === true;
  }

  get text(): string | undefined {
    if (this.own !== undefined) return this.own;
    return this.textless ? undefined : utf8.decode(this.raw);
  }

  get bytes(): Uint8Array {
    return this.own !== undefined ? Buffer.from(this.own, 'utf8') : Buffer.from(this.raw);
  }

  [BLOCK_PARTS](): readonly BlockPart[] {
    return [this.own ?? this.raw];
  }
}

/** Builds a chain table from nodes: `ref` gives each node's index, adding it (and its ancestors) once. */
export class ChainWriter {
  private readonly nodes: StoredNode[] = [];
  /** The chain node each table entry was made from (its block's bytes go into the blob). */
  private readonly of: BlockNode[] = [];
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

  /**
   * The table of every node `ref` added: the nodes' fields and their blocks' bytes in one blob
   * (each block's parts written straight into it: long blocks are mostly bytes already, kept from
   * the transcript or compacted, so nothing is decoded).
   * @throws Error when a block's bytes are not as long as its chain node says (a bug)
   */
  table(): ChainTable {
    const found: Array<{ parts: readonly BlockPart[]; raw: boolean } | string> = [];
    let total = 0;
    for (let i = 0; i < this.of.length; i++) {
      const f = bytesOf(this.of[i].block);
      found.push(f);
      if (typeof f !== 'string') total += this.of[i].size;
    }
    const blob = Buffer.allocUnsafe(total);
    let at = 0;
    const nodes: StoredNode[] = [];
    for (let i = 0; i < this.of.length; i++) {
      const f = found[i];
      const b: StoredBlock = { ...this.nodes[i].b };
      if (typeof f === 'string') b.text = f;
      else {
        const start = at;
        for (const p of f.parts) {
          if (typeof p === 'string') at += blob.write(p, at, 'utf8');
          else {
            blob.set(p, at);
            at += p.length;
          }
        }
        if (at - start !== this.of[i].size) throw new Error(`chain node ${i}: ${at - start} bytes, its node says ${this.of[i].size}`);
        b.n = at - start;
        if (f.raw) b.raw = true;
      }
      nodes.push({ p: this.nodes[i].p, b });
    }
    return { nodes, blob };
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
        this.of.push(x);
        this.byContent.set(key, at);
      }
      this.index.set(x, at);
    }
    return this.index.get(n)!;
  }
}

/** A block's fields (not its bytes: ChainWriter.table). */
function storedBlock(block: Block): StoredBlock {
  const out: StoredBlock = { segment: block.segment, item: block.item, path: block.path };
  if (block.startPath !== undefined) out.startPath = block.startPath;
  if (block.role !== undefined) out.role = block.role;
  if (block.origin !== undefined) out.origin = block.origin;
  if (block.breakpoint) out.breakpoint = { ttlSeconds: block.breakpoint.ttlSeconds };
  return out;
}

/**
 * A block's bytes as parts (chain.ts BLOCK_PARTS, else its text, else its bytes), or its text
 * when that is not well-formed (kept in the stored block: its UTF-8 would not decode back to it).
 */
function bytesOf(block: Block): { parts: readonly BlockPart[]; raw: boolean } | string {
  const parts = (block as Block & { [BLOCK_PARTS]?: () => readonly BlockPart[] | undefined })[BLOCK_PARTS]?.();
  if (parts) {
    for (const p of parts) if (typeof p === 'string' && !p.isWellFormed()) return block.text!;
    return { parts, raw: false };
  }
  const text = block.text;
  if (text !== undefined) return text.isWellFormed() ? { parts: [text], raw: false } : text;
  return { parts: [block.bytes], raw: true };
}

/**
 * Rebuilds a chain table's nodes (each hashed again from its parent's digest); the blocks keep
 * views into `blob`.
 * @throws Error when a node names a parent that is not before it, or the blocks' lengths do not
 *   add up to the blob's
 */
export function readChains(table: ChainTable): BlockNode[] {
  const { nodes, blob } = table;
  const out: BlockNode[] = [];
  let at = 0;
  for (let i = 0; i < nodes.length; i++) {
    const { p, b } = nodes[i];
    if (!Number.isInteger(p) || p < -1 || p >= i) throw new Error(`chain node ${i}: parent ${p} is not an earlier node`);
    let raw: Uint8Array = blob.subarray(0, 0);
    if (b.text === undefined) {
      const n = b.n;
      if (n === undefined || !Number.isSafeInteger(n) || n < 0 || at + n > blob.length) throw new Error(`chain node ${i}: its bytes are not in the table`);
      raw = blob.subarray(at, at + n);
      at += n;
    } else if (b.n !== undefined || b.raw) throw new Error(`chain node ${i}: both a text and bytes`);
    out.push(new BlockNode(p < 0 ? null : out[p], new RestoredBlock(b, raw)));
  }
  if (at !== blob.length) throw new Error(`chain table: ${blob.length - at} bytes left over`);
  return out;
}

/** The node at `i` of a rebuilt table, null for -1. @throws Error for an index outside the table */
export function nodeAt(nodes: readonly BlockNode[], i: number): BlockNode | null {
  if (i === -1) return null;
  const n = nodes[i];
  if (!n) throw new Error(`chain node ${i} is not in the table`);
  return n;
}
