/**
 * What each system delta costs in both system-message shapes (Nib ADR 0337; pi-ai
 * `resolveTranscript`): `collapsed` (the delta replayed into the first system message, so the head
 * changes) and `mid-conversation` (the delta kept in place, so only the tail is new).
 *
 * For a request that first carries one or more system deltas (`LlmRequest.systemDeltas`), both of
 * its chains (`tail` and `systemShape.alternate`) are compared with the same earlier request's
 * chain in the same shape — the request the judge matched, else the previous request of its
 * lineage. Re-billed tokens = what that entry would have let this request read had the item changed
 * at the shape's break been sent as before (core/rebill.ts), less what this request's prefix can
 * still read of it (see shapeCost: implicit caching in the family's steps, DeepSeek 64 tokens,
 * OpenAI 128; explicit breakpoints at a breakpoint both share), with tokens(bytes) the session's
 * calibrated estimate (SessionAnalysis.tokenModel) and the family's minimum applied. The same
 * estimate is used for both shapes, so the two numbers compare like with like; the judge's
 * `lostTokens` (bounded by the observed usage) stays the figure for the shape actually sent.
 */
import { calibrationKey, lineageKey, rebillCost, type RequestAnalysis, type SessionAnalysis } from './analyze.js';
import { markedNodes, type BlockNode } from './chain.js';
import { diverge } from './diverge.js';
import { resumedDepth } from './rebill.js';
import type { BreakSegment, LlmRequest, SystemDelta, SystemShape } from './model.js';
import { ownGet } from './own.js';
import { defaultRules, familyFor, minimumTokens, type ProviderRules } from './rules.js';
import { systemChange, type SystemChange } from './sections.js';

/** Where one shape's prefix first differs from the entry's (null: it extends the entry). */
export interface ShapeBreak {
  segment: BreakSegment;
  blockIndex: number;
  path: string;
  /** Offset of the first changed byte in the request's canonical prefix bytes. */
  byteOffset: number;
  systemChange: SystemChange | null;
}

/** The cost of the deltas of one request in one shape (tokens; USD, null when prices are unknown). */
export interface ShapeCost {
  rebilledTokens: number;
  costUSD: number | null;
  break: ShapeBreak | null;
}

/** One request's system deltas with what they cost both ways. */
export interface PricedDeltas {
  /** 1-based index of the request that first carries the deltas. */
  request: number;
  /** Index of the request both shapes were compared with (null: nothing earlier in the lineage). */
  comparedWith: number | null;
  /** The shape the request was sent in, and whether that is known or the default. */
  used: SystemShape;
  known: boolean;
  deltas: SystemDelta[];
  collapsed: ShapeCost;
  midConversation: ShapeCost;
}

/**
 * Prices every request's system deltas in both shapes.
 * @returns one entry per request that carries deltas and knows both shapes, in send order
 */
export function priceSystemDeltas(a: SessionAnalysis, rules: ProviderRules = defaultRules): PricedDeltas[] {
  const out: PricedDeltas[] = [];
  const lastOf = new Map<string, RequestAnalysis>();
  for (const r of a.requests) {
    const q = r.request;
    const key = lineageKey(q);
    const previous = lastOf.get(key);
    if (q.tail && !q.error) lastOf.set(key, r);
    if (!q.systemDeltas?.length || !q.systemShape) continue;
    const entry = r.matched !== null ? a.requests[r.matched - 1] : previous;
    const tails = (x: LlmRequest): Record<SystemShape, BlockNode | null> => {
      const s = x.systemShape;
      const other = s?.alternate ?? null;
      return s?.used === 'mid-conversation' ? { 'mid-conversation': x.tail, collapsed: other } : { collapsed: x.tail, 'mid-conversation': other };
    };
    const mine = tails(q);
    const theirs = entry ? tails(entry.request) : null;
    const cost = (shape: SystemShape): ShapeCost => shapeCost(a, rules, q, theirs?.[shape] ?? null, mine[shape]);
    out.push({
      request: q.index,
      comparedWith: entry ? entry.request.index : null,
      used: q.systemShape.used,
      known: q.systemShape.known,
      deltas: q.systemDeltas,
      collapsed: cost('collapsed'),
      midConversation: cost('mid-conversation'),
    });
  }
  return out;
}

/**
 * Re-billed tokens of one shape. Implicit caching (OpenAI, DeepSeek): the entry's prompt and the
 * shared bytes, each in the family's steps, the shared part running into the first differing block
 * up to its first changed byte. Explicit breakpoints (Anthropic): what is readable is a prefix ending
 * at a breakpoint both chains carry (the entry's deepest one, resp. the deepest one inside the
 * shared blocks); a change inside a block invalidates the entry written at its breakpoint. Either
 * side below the family's minimum reads nothing.
 */
function shapeCost(a: SessionAnalysis, rules: ProviderRules, req: LlmRequest, entry: BlockNode | null, tail: BlockNode | null): ShapeCost {
  if (!entry || !tail) return { rebilledTokens: 0, costUSD: null, break: null };
  const family = familyFor(req.model, req.api, rules);
  const minimum = minimumTokens(family, req.model);
  const bp = diverge(entry, tail, family.renderOrder);
  const base = ownGet(a.tokenModel.base, calibrationKey(req)) ?? 0;
  const tokens = (bytes: number) => (bytes > 0 ? Math.round(base + a.tokenModel.perByte * bytes) : 0);
  const step = (t: number) => {
    const x = Math.floor(t / family.stepTokens) * family.stepTokens;
    return x >= minimum ? x : 0;
  };
  const price = (lost: number) => rebillCost(req, family, rules, lost);
  if (!bp) return { rebilledTokens: 0, costUSD: price(0), break: null };
  let could: number;
  let read: number;
  // What the entry would still have served had the changed item been sent as before (rebill.ts):
  // the blocks after the change that this shape sends again, not what it sends new.
  const resumed = entry.at(resumedDepth(entry, tail, bp.depth - 1));
  if (family.breakpoints.explicit) {
    const entryMarks = markedNodes(entry);
    const marked = new Set(entryMarks.map((n) => n.depth));
    const servable = resumed?.lastMarked ?? null;
    could = servable ? step(tokens(servable.bytesThrough)) : 0;
    const inShared = markedNodes(tail).find((n) => n.depth < bp.depth && marked.has(n.depth));
    read = inShared ? step(tokens(inShared.bytesThrough)) : 0;
  } else {
    const shared = (tail.at(bp.depth - 1)?.bytesThrough ?? 0) + (bp.oldBlock?.segment === bp.newBlock?.segment ? bp.offsetInBlock : 0);
    could = step(tokens(resumed?.bytesThrough ?? 0));
    read = step(tokens(shared));
  }
  const lost = Math.max(0, could - read);
  return {
    rebilledTokens: lost,
    costUSD: price(lost),
    break: { segment: bp.segment, blockIndex: bp.blockIndex, path: bp.path, byteOffset: bp.byteOffset, systemChange: systemChange(bp) },
  };
}
