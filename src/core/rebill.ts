/**
 * What a break re-bills: the part of the cache entry the request would still have read had the
 * item changed at its break been sent as before (everything else as sent).
 *
 * A change re-bills the entry's blocks that follow it and that the request sends again at the same
 * place (a date in the system prompt: the whole conversation after it). It re-bills nothing of
 * what the request sends new: after a compaction the summary and the new turn were never in the
 * cache, so only what follows the changed item unchanged counts (on the Claude Code recording,
 * the tools and system blocks after the billing header, not the summary). Blocks are compared at
 * equal places; at each difference one item edited in place, inserted or removed (a tool added,
 * a message dropped) is set aside when the blocks after it are equal again, so several separate
 * edits still count what lies between and after them. A difference no single-item skip resolves
 * ends the run: what the request sends from there on (a summary in place of many messages, the
 * turns of another branch) is new to the cache.
 */
import type { BlockNode } from './chain.js';

/**
 * After this many equal blocks past the change the rest is taken as shared too (the walk costs one
 * byte comparison per block; a run this long is the common case of a change in the head of a long
 * conversation, whose rest is the entry's).
 */
export const RESUME_BLOCKS = 4096;

/** Most items set aside on each side at one difference. */
export const SKIP_ITEMS = 8;

/** Block comparisons one walk may make before it stops where it is (a bound on the work per break). */
const COMPARE_BUDGET = 20_000;

/**
 * Depth (blocks, in the entry's chain) through which `request` shares `entry` once the items
 * that differ are set aside one at a time: at each difference (the first at depth `common + 1`)
 * the differing item is skipped in both chains (an item edited in place), or only in the request
 * (an item inserted), or only in the entry (one removed), whichever makes the next blocks equal;
 * equal blocks at equal places are counted on. The run ends at a difference no single-item skip
 * resolves (a history replaced by a summary, a branch left), where the depth reached is returned
 * (`common` when nothing after the first change follows equally: the request could then have
 * read only what precedes the change).
 * @param common the commonDepth of the two chains (blocks), less than both depths
 */
export function resumedDepth(entry: BlockNode, request: BlockNode, common: number): number {
  let e = common;
  let r = common;
  let steps = 0;
  let budget = COMPARE_BUDGET;
  const same = (x: number, y: number) => (budget--, sameBlock(entry.at(x)!, request.at(y)!));
  while (e < entry.depth && r < request.depth && budget > 0) {
    if (same(e + 1, r + 1)) {
      e++;
      r++;
      if (++steps >= RESUME_BLOCKS) return entry.depth;
      continue;
    }
    const next = resync(entry, request, e, r, same);
    if (!next) break;
    [e, r] = next;
  }
  // A skip is taken only when the next blocks are equal, so `e` ends an equal run (or is `common`).
  return e;
}

/**
 * Where the chains are equal again after the items that differ at (e + 1, r + 1) are set aside:
 * the depths before the next equal blocks, with the fewest items skipped on the busier side (an
 * edit in place before an insertion or removal), or null when none within SKIP_ITEMS items does.
 */
function resync(entry: BlockNode, request: BlockNode, e: number, r: number, same: (x: number, y: number) => boolean): [number, number] | null {
  const ends = (chain: BlockNode, from: number): number[] => {
    const out = [from];
    while (out.length <= SKIP_ITEMS && out.at(-1)! < chain.depth) out.push(itemEnd(chain, out.at(-1)! + 1));
    return out;
  };
  const ee = ends(entry, e);
  const rr = ends(request, r);
  // The fewest items on the busier side first; among those, an edit in place (as many on each side) first.
  // In the messages several items changed at once are a rewritten history (a compaction, a branch):
  // what follows is new to the cache, so there one item at most is set aside.
  const inMessages = entry.at(e + 1)!.block.segment === 'messages' || request.at(r + 1)!.block.segment === 'messages';
  for (let m = 1; m <= (inMessages ? 1 : SKIP_ITEMS); m++) {
    const pairs: Array<[number, number]> = [[m, m]];
    for (let k = m - 1; k >= 0; k--) pairs.push([k, m], [m, k]);
    for (const [i, j] of pairs) {
      const x = ee[i];
      const y = rr[j];
      if (x === undefined || y === undefined || x >= entry.depth || y >= request.depth || !same(x + 1, y + 1)) continue;
      // More than one item on a side: the next block must be equal too (or a chain ends there).
      if (m > 1 && x + 1 < entry.depth && y + 1 < request.depth && !same(x + 2, y + 2)) continue;
      return [x, y];
    }
  }
  return null;
}

/** Depth of the last block of the item (segment and index) the block at `depth` belongs to. */
function itemEnd(chain: BlockNode, depth: number): number {
  const b = chain.at(depth)!.block;
  let d = depth;
  while (d < chain.depth) {
    const next = chain.at(d + 1)!.block;
    if (next.segment !== b.segment || next.item !== b.item) break;
    d++;
  }
  return d;
}

/** Same segment and the same canonical bytes. */
function sameBlock(x: BlockNode, y: BlockNode): boolean {
  if (x.block === y.block) return true;
  if (x.size !== y.size || x.block.segment !== y.block.segment) return false;
  const a = x.block.bytes;
  const b = y.block.bytes;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}
