/**
 * The judge: per request, which cache entry it could read, where its prefix broke, why, what the
 * provider should have read, what it did read, and what the break cost.
 *
 * Pipeline position: read → normalize → hash (chain.ts) → diverge (diverge.ts) → judge (here)
 * → view model (src/report).
 */
import { commonDepth, markedNodes, type BlockNode } from './chain.js';
import { classifyBreak, paramsCause, type BreakContext, type Cause, type CompactionEvidence } from './classify.js';
import { diverge, firstDiff, type BreakPoint } from './diverge.js';
import type { LlmRequest, Segment, Session, Usage } from './model.js';
import { ownGet, ownSet } from './own.js';
import { systemChange, type SystemChange } from './sections.js';
import { defaultRules, familyFor, minimumTokens, priceOf, type PriceSource, type ProviderFamily, type ProviderRules, type Tier } from './rules.js';
import { resumedDepth } from './rebill.js';
import { RequestNumbering } from './numbering.js';

/** Verdict per request (DESIGN.md "verdict"). */
export type Verdict = 'cold' | 'hit' | 'break' | 'ttl-expired' | 'below-minimum' | 'model-switch' | 'unexplained-miss' | 'unknown';

/** How many recent requests of a lineage are compared as candidate cache entries. */
export const CANDIDATES = 8;
/** An observed read below this share of the expected read counts as collapsed. */
export const COLLAPSE_RATIO = 0.5;

/** The judgement of one request. Token figures are tokens; money is USD; times are ms. */
export interface RequestAnalysis {
  request: LlmRequest;
  /** Lineage key: requests that can share a cache (kind, provider, model, cache key). */
  lineage: string;
  /** Provider family whose rules applied (provider-rules.json). */
  family: string;
  /** Prefix hash of the whole request (12 hex), null when no chain is known. */
  prefixHash: string | null;
  /** Prefix hash at the end of each segment (cumulative, as the cache sees it), 12 hex. */
  segments: Record<Segment | 'head', string | null>;
  verdict: Verdict;
  causes: Cause[];
  break: BreakPoint | null;
  /** A break in the system segment: the section it falls in and whether text was appended, removed or edited (core/sections.ts). */
  systemChange: SystemChange | null;
  /**
   * The request's number (core/numbering.ts: `9` for the ninth agent request, `8.1` for the first
   * side request after #8), the same in every evidence mode; `request.index` is its send order.
   */
  number: string;
  /** Index of the earlier request whose cache entry this one was compared with. */
  matched: number | null;
  /** That request's number (core/numbering.ts), null when nothing was matched. */
  matchedNumber: string | null;
  /** Time since the matched request (ms), null when unknown. */
  gapMs: number | null;
  /**
   * Lifetime of the matched cache entry (ms), from the entry's deepest breakpoint or the family's
   * rules (provider-rules.json ttlSeconds, e.g. 300 000 = 5 min, 3 600 000 = 1 h); null when
   * nothing was matched.
   */
  ttlMs: number | null;
  /**
   * Size of each segment present in the request's chain: block count and canonical bytes
   * (wire: the body's bytes of those blocks, markers removed). Absent segments are not listed.
   */
  segmentSizes: Partial<Record<Segment | 'head', { blocks: number; bytes: number }>>;
  /** Where the prices behind `costUSD` come from: the host's transcript, the bundled rules, or none known. */
  priceSource: PriceSource | null;
  /** Prompt tokens (observed when usage is known, else estimated from bytes). */
  promptTokens: number | null;
  /** Tokens the provider should have read from cache (estimate), null when unknown. */
  expectedRead: number | null;
  /** Tokens the provider reported as read from cache, null when usage is unknown. */
  observedRead: number | null;
  /** Cached tokens the break made the provider bill again (estimate). */
  lostTokens: number;
  /** Extra cost of the break in USD; null when prices are unknown. */
  costUSD: number | null;
  /** The prefix is byte-identical to the previous request of the lineage (e.g. a retry). */
  sameAsPrevious: boolean;
  /** What the judge noticed beyond the verdict and causes, in words (e.g. the matched entry had also expired). */
  notes: string[];
}

/** A session with every request judged. */
export interface SessionAnalysis {
  session: Session;
  requests: RequestAnalysis[];
  /**
   * Token estimate from canonical bytes, calibrated on the session's observed usage:
   * tokens ≈ base[kind|lineage] + perByte·bytes. `base` absorbs what the bytes do not cover (the opaque
   * head in reconstructed mode), so it is per lineage and request kind; `calibrated` is false when no usage was seen.
   */
  tokenModel: { base: Record<string, number>; perByte: number; calibrated: boolean };
  /** The running sums without `prompt`/`promptRead`, and the hit rate: cacheRead / prompt tokens over requests whose prompt usage is known, 0..1; null without. */
  totals: Omit<TotalSums, 'prompt' | 'promptRead'> & { hitRate: number | null };
}

/**
 * Estimated tokens of a prefix: through node `n` (null = none) and `extraBytes` more bytes.
 * `trusted` is true when the estimate is calibrated on the lineage's own observed prompts (the
 * token model has a base for the request's kind and lineage); without it the estimate is a guess
 * (the fallback slope, no base for an opaque head): a size it gives is never taken as below the
 * minimum (knownBelow, sizeSure).
 */
export type TokensAt = ((n: BlockNode | null, extraBytes?: number) => number) & { trusted?: boolean };

interface Entry {
  req: LlmRequest;
  /** The request's number (core/numbering.ts), for the judge's words about the entry. */
  number: string;
  tail: BlockNode;
  /** Time this entry was written (ms); what a later request reads of it is part of that request's entry. */
  lastUse: number | null;
  ttlMs: number;
  /** Explicit breakpoints: key in `Lineage.written` of the deepest entry this request wrote. */
  written?: string;
  /** Depth (blocks) of that entry's breakpoint in this request's chain. */
  writtenDepth?: number;
}

interface Lineage {
  /** Its key (lineageKey), the one string every request of the lineage keeps (not one each). */
  key: string;
  family: ProviderFamily;
  minimum: number;
  recent: Entry[];
  /** Anthropic-style entries: prefix hash (BlockNode.hashKey: binary, no hex string per lookup) at a breakpoint → expiry (ms, null = unknown time), lifetime (ms). */
  written: Map<string, { expires: number | null; tokens: number; ttlMs: number }>;
  /** Size of `written` above which its gone entries are dropped (see gone). */
  sweepAt: number;
  /** The latest send time (ms) of the session's requests judged before this one, null before any with a time (gone). */
  latest: number | null;
  /** The head segments of the lineage's last request with a chain (fillHashes), reused while the next chain shares it. */
  head?: HeadMemo;
}

/**
 * What fillHashes read of a chain's head segments (the blocks before its first message block, at
 * depth `messagesAt`): the same for every chain that holds the same node objects through that
 * depth. `anchor` is a node of the last chain judged at or below `messagesAt` (its tail's
 * predecessor when that is deep enough: a breakpoint copy of the tail is not in the next chain);
 * a chain holding the anchor holds the whole head, found by a short walk from its tail instead of
 * one walk from the tail to each head block.
 */
interface HeadMemo {
  anchor: BlockNode;
  /** Depth of the first message block. */
  messagesAt: number;
  /** The chain's first node. */
  first: BlockNode;
  /** Canonical bytes before the first message block. */
  bytesBefore: number;
  /** Per head segment in the order fillHashes met them: segment, hash at its end (12 hex), blocks, bytes. */
  segments: Array<{ segment: Segment | 'head'; hash: string; blocks: number; bytes: number }>;
}

/**
 * The per-request keys of a run of requests with the same provider, model, cache key, kind and
 * API (SessionJudge.push and Calibration.add meet the same ones request after request): the
 * lineage key, and what depends only on it and the token model.
 */
interface KeyMemo extends RequestKeys {
  /** lineageKey of the requests. */
  key: string;
  /** calibrationKey of the requests. */
  calibration: string;
  /** The token estimate with the requests' base (SessionJudge only). */
  tokensAt: TokensAt;
  /** familyFor of the requests (used while the lineage has no entry yet). */
  family: ProviderFamily | null;
}

/** What the per-request keys are made of (lineageKey, calibrationKey, familyFor). */
type RequestKeys = Pick<LlmRequest, 'provider' | 'model' | 'cacheKey' | 'kind' | 'api'>;

/** True when `m` was made for a request with `req`'s provider, model, cache key, kind and API. */
function sameKeys<M extends RequestKeys>(m: M | null, req: LlmRequest): m is M {
  return m !== null && m.provider === req.provider && m.model === req.model && m.cacheKey === req.cacheKey && m.kind === req.kind && m.api === req.api;
}

/** Written entries a lineage keeps before it first drops the gone ones (then twice what is left). */
const SWEEP_MIN = 64;

/**
 * True when a written entry cannot be in the provider's cache for any request judged from now on:
 * its lifetime ended more than one lifetime before the latest send time of the requests judged
 * so far, and the requests are judged in send order (a request recorded as sent earlier than
 * that, by more than the lifetime, still does not read it). Such entries are ignored by every
 * lookup, so dropping them (sweep) changes no result; this bounds the written entries (and a
 * persisted state) by the cache lifetime instead of the session's length.
 */
function gone(w: { expires: number | null; ttlMs: number }, latest: number | null): boolean {
  return latest !== null && w.expires !== null && w.expires + w.ttlMs < latest;
}

/** Drops a lineage's gone written entries, except those a live entry names (Entry.written: its `alive` reads them). */
function sweep(lin: Lineage): void {
  const named = new Set<string>();
  for (const e of lin.recent) if (e.written !== undefined) named.add(e.written);
  for (const [k, w] of lin.written) if (gone(w, lin.latest) && !named.has(k)) lin.written.delete(k);
  lin.sweepAt = Math.max(SWEEP_MIN, 2 * lin.written.size);
}

/** Which entries pickEntry takes: any, those that wrote an entry (cacheable), those that wrote one still alive. */
const PICK_ANY = 0;
const PICK_CACHEABLE = 1;
const PICK_LIVE = 2;

/**
 * The candidate entry of `lin` that shares the longest prefix with a request (`depths`: common
 * depth with each entry of `lin.recent`, same order) of `kind` sent at `now`; ties go to the
 * newest. An entry can be read once the response of the request that wrote it has started
 * (reference/providers.md §1.2: parallel requests all write), so a request sent while an earlier
 * one was in flight (tool fan-out, sub-agents) cannot read that one's entry. Only requests that
 * wrote an entry (at least the minimum) are candidates (PICK_CACHEABLE, PICK_LIVE): a change
 * against a request too short to be cached breaks nothing. A request of another kind that shares
 * no block (a summary request with its own system prompt) was never meant to read that entry.
 */
function pickEntry(lin: Lineage, depths: readonly number[], kind: LlmRequest['kind'], now: number | null, tokensAt: TokensAt, which: number): Entry | null {
  const recent = lin.recent;
  let found: Entry | null = null;
  let foundDepth = -1;
  for (let i = recent.length - 1; i >= 0; i--) {
    const e = recent[i];
    if (
      depths[i] > foundDepth &&
      flight(e.req, now) === 'done' &&
      (depths[i] > 0 || e.req.kind === kind) &&
      (which === PICK_ANY || (cacheable(lin, e, tokensAt) && (which === PICK_CACHEABLE || aliveAt(lin, e, now))))
    ) {
      found = e;
      foundDepth = depths[i];
    }
  }
  return found;
}

/**
 * Whether entry `e` of `lin` is alive for a request sent at `now` (ms; null = unknown: alive).
 * Explicit breakpoints: while what it wrote at its deepest breakpoint is (a later request that
 * read only the head did not refresh it); else by its last use.
 */
function aliveAt(lin: Lineage, e: Entry, now: number | null): boolean {
  if (now === null) return true;
  const w = e.written !== undefined ? lin.written.get(e.written) : undefined;
  if (w) return w.expires === null || w.expires >= now;
  return e.lastUse === null || now - e.lastUse <= e.ttlMs;
}

/**
 * Judges every request of a session, in send order.
 * @param rules provider rules (defaults to the bundled provider-rules.json)
 */
export function analyzeSession(session: Session, rules: ProviderRules = defaultRules, opts: AnalyzeOptions = {}): SessionAnalysis {
  return judgeSession(session, rules, opts).analysis;
}

/** analyzeSession's result with the token-model fit and the judge that made it (the live and persisted tails continue them). */
export interface JudgedSession {
  analysis: SessionAnalysis;
  calibration: Calibration;
  judge: SessionJudge;
}

/**
 * analyzeSession, keeping the fit and the judge: the token model is fitted on the session's
 * requests (Calibration), then every request is judged in send order (SessionJudge).
 */
export function judgeSession(session: Session, rules: ProviderRules = defaultRules, opts: AnalyzeOptions = {}): JudgedSession {
  const calibration = new Calibration(opts.calibrationLimit);
  for (const req of session.requests) calibration.add(req);
  const judge = new SessionJudge(calibration.model(), rules);
  for (const req of session.requests) judge.push(req);
  return { analysis: { session, requests: judge.requests, tokenModel: judge.tokenModel, totals: totals(judge.requests) }, calibration, judge };
}

/** Options of analyzeSession. */
export interface AnalyzeOptions {
  /** Growth ratios and points per lineage the token model is fitted on (see Calibration); default CALIBRATION_LIMIT. */
  calibrationLimit?: number;
}

/**
 * The judge of one session, request by request in send order: `push` judges a request against
 * the live cache entries of its lineage left by the earlier ones and records its own. Pushing a
 * session's requests one by one gives analyzeSession's results; continuing with appended
 * requests gives those of analyzing the grown session, as long as the token model is the same
 * (the live tail checks it, Calibration).
 */
export class SessionJudge {
  /** Analyses of the requests pushed, in order. */
  readonly requests: RequestAnalysis[] = [];
  private readonly lineages = new Map<string, Lineage>();
  private lastAgent: LlmRequest | null = null;
  /** Numbers the requests pushed (core/numbering.ts). */
  private numbering = new RequestNumbering();
  /** The latest send time of the requests judged (ms), null before any with a time (gone). */
  private latest: number | null = null;

  constructor(
    private model: SessionAnalysis['tokenModel'],
    private readonly rules: ProviderRules = defaultRules,
  ) {}

  /** Takes the send time of a request judged (ms, null when unknown) into `latest`. */
  private sent(now: number | null): void {
    if (now !== null && Number.isFinite(now) && (this.latest === null || now > this.latest)) this.latest = now;
  }

  /** The token model the requests are judged with (see adoptTokenModel). */
  get tokenModel(): SessionAnalysis['tokenModel'] {
    return this.model;
  }

  /**
   * Judges the next requests with `next` (the token model refitted with them, Calibration) when
   * it estimates every request pushed so far as the current one does: the same slope and the same
   * bases, plus bases of calibration keys whose lineage has no request here yet (a model the
   * session switches to; a lineage's requests are judged with its kind's base, and an earlier
   * request without usage used 0 for a key that had none, so a new key of a known lineage counts
   * as a change). @returns false, changing nothing, otherwise: the earlier requests must be
   * judged again (analyzeSession over all of them)
   */
  adoptTokenModel(next: SessionAnalysis['tokenModel']): boolean {
    const cur = this.model;
    if (sameTokenModel(cur, next)) return true;
    if (cur.perByte !== next.perByte || cur.calibrated !== next.calibrated) return false;
    for (const k of Object.keys(cur.base)) if (ownGet(next.base, k) !== cur.base[k]) return false;
    for (const k of Object.keys(next.base)) {
      if (Object.hasOwn(cur.base, k)) continue;
      // calibrationKey: `${kind}|${lineageKey}` (a kind has no `|`).
      if (this.lineages.has(k.slice(k.indexOf('|') + 1))) return false;
    }
    this.model = next;
    this.keys = null;
    return true;
  }

  /** The keys of the last request pushed (KeyMemo); reset when the token model changes. */
  private keys: KeyMemo | null = null;

  /** The KeyMemo of `req` with the current token model. */
  private keyMemo(req: LlmRequest): KeyMemo {
    const model = this.model;
    const key = lineageKey(req);
    const calibration = calibrationKey(req);
    const base = ownGet(model.base, calibration) ?? 0;
    const perByte = model.perByte;
    const tokensAt: TokensAt = (n, extraBytes = 0) => {
      const bytes = (n ? n.bytesThrough : 0) + extraBytes;
      return bytes > 0 ? Math.round(base + perByte * bytes) : 0;
    };
    tokensAt.trusted = Object.hasOwn(model.base, calibration);
    return { provider: req.provider, model: req.model, cacheKey: req.cacheKey, kind: req.kind, api: req.api, key, calibration, tokensAt, family: null };
  }

  /** Judges the next request of the session. */
  push(req: LlmRequest): RequestAnalysis {
    const { rules, lineages } = this;
    const out = this.requests;
    const lastAgent = this.lastAgent;
    const keys = sameKeys(this.keys, req) ? this.keys : (this.keys = this.keyMemo(req));
    const number = this.numbering.next(req);
    const tokensAt = keys.tokensAt;
    let lin = lineages.get(keys.key);
    const key = lin ? lin.key : keys.key;
    const family = lin ? lin.family : (keys.family ??= familyFor(req.model, req.api, rules));
    const a = blank(req, number, key, family.id);
    a.observedRead = req.usage ? req.usage.cacheRead : null;
    const exact = req.usage ? promptOf(req.usage) : null;
    // A prompt with a usage field unknown is at least its known fields (an estimate below them is wrong).
    a.promptTokens = exact ?? (req.tail ? Math.max(tokensAt(req.tail), promptAtLeast(req.usage)) : null);
    const priced = priceOf(req, family, rules);
    a.priceSource = priced?.source ?? null;
    out.push(a);
    const tail = req.tail;
    if (!tail) {
      a.verdict = 'unknown';
      this.sent(timeOf(req));
      return a;
    }
    if (!lin) {
      lin = { key, family, minimum: minimumTokens(family, req.model), recent: [], written: new Map(), sweepAt: SWEEP_MIN, latest: null };
      lineages.set(key, lin);
    }
    const first = fillHashes(a, tail, lin);
    // Below the minimum only when the prompt's size says so (knownBelow): never from a guess.
    const below = knownBelow(req.usage, exact, a.promptTokens!, tokensAt, first, tail, lin.minimum);
    lin.latest = this.latest;
    const now = timeOf(req);
    const recent = lin.recent;
    const previous = recent[recent.length - 1];
    if (previous) a.sameAsPrevious = previous.tail.sameHash(tail);

    const depths: number[] = [];
    for (const e of recent) depths.push(commonDepth(e.tail, tail));
    const marks = markedNodes(tail);
    const depthOf = (e: Entry) => depths[recent.indexOf(e)];
    // Live entries first: a real break against the previous request is not hidden behind an
    // expired entry that matches longer. An expired entry is the comparison only when this
    // request's prefix is unchanged against it (a continuation or a revert past its lifetime)
    // and it matches deeper than any live one, or when no entry is alive at all.
    let best = pickEntry(lin, depths, req.kind, now, tokensAt, PICK_LIVE);
    const longest = pickEntry(lin, depths, req.kind, now, tokensAt, PICK_CACHEABLE);
    if (longest && longest !== best && (!best || (depthOf(longest) > depthOf(best) && diverge(longest.tail, tail, lin.family.renderOrder) === null))) best = longest;
    // A request itself below the minimum is still compared with the nearest request, to show what
    // changed; but not a side request with another side request (summary, title): each is a
    // one-shot prompt of its own (two compactions' summaries, Pi's history and turn-prefix summary
    // of one compaction), so what differs between them is no change of a history.
    // With nothing to compare with (the first request of its lineage, or a side request after side
    // requests only), a prompt known to be below the minimum is not written to the cache either;
    // unless the usage shows the provider read or wrote an entry: then its minimum is lower than ours.
    let tooShort = false;
    if (!best && below) {
      const nearest = pickEntry(lin, depths, req.kind, now, tokensAt, PICK_ANY);
      if (nearest && !(req.kind !== 'agent' && nearest.req.kind !== 'agent')) best = nearest;
      else tooShort = nearest !== null || a.promptTokens !== null;
    }
    const reads: string[] = [];
    a.expectedRead = expectedRead(lin, tail, marks, depths, now, tokensAt, true, reads);

    if (req.error) {
      a.verdict = 'unknown';
    } else if (tooShort) {
      a.verdict = 'below-minimum';
    } else if (!best) {
      if (req.kind === 'agent' && lastAgent && (lastAgent.model !== req.model || lastAgent.provider !== req.provider)) {
        a.verdict = 'model-switch';
        a.causes.push({ kind: 'model-switch', detail: `${lastAgent.provider}/${lastAgent.model} → ${req.provider}/${req.model}`, certainty: 'certain' });
      } else a.verdict = 'cold';
    } else {
      a.matched = best.req.index;
      a.matchedNumber = best.number;
      a.ttlMs = best.ttlMs;
      const then = timeOf(best.req);
      a.gapMs = now !== null && then !== null ? now - then : null;
      const bestAlive = aliveAt(lin, best, now);
      const bp = diverge(best.tail, tail, lin.family.renderOrder, req.bodyOffsets);
      const changedParams = paramsCause(best.req, req, lin.family.params);
      const params = changedParams?.cause ?? null;
      if (bp) {
        a.break = bp;
        a.systemChange = systemChange(bp);
        a.causes.push(...classifyBreak(bp, best.tail, tail, breakContext(lin, best, tail, bp.segment)));
      } else if (params) {
        a.break = paramsBreak(best.req, req, lin.family.params.map((p) => p.key));
      }
      if (params) a.causes.push(params);
      // The read, or without it (unknown) what the write leaves of it (writtenPastGrowth): the evidence a read collapsed.
      const readBound = a.observedRead ?? (bp ? null : writtenPastGrowth(lin, best, tail, req.usage, a.expectedRead));
      const collapsed =
        readBound !== null && a.expectedRead !== null && a.expectedRead > 0 && readBound < a.expectedRead * COLLAPSE_RATIO;
      // A params-only break the provider's rules predict, but the observed read contradicts. Each
      // parameter invalidates a tier (provider-rules.json `params`), so the rule predicts a read of
      // the tiers before it only: the observed read confirms the break when it is nearer to that
      // than to the full expected read.
      const paramsOnly = !bp && params !== null;
      const paramsConfirmed =
        paramsOnly && a.observedRead !== null && a.expectedRead !== null && a.expectedRead > 0
          ? a.observedRead < (tierRead(lin, tail, changedParams!.tier, now, tokensAt) + a.expectedRead) / 2
          : collapsed;
      if (paramsOnly && a.observedRead !== null && !paramsConfirmed) {
        params!.certainty = 'likely';
        params!.detail += ' (the provider still read the cache)';
        a.break = null;
      }
      // The same text in another encoding (a string sent as one text block), and the provider read
      // past the change: it renders both as one prompt, so the change broke nothing. (Another key
      // order of a tool call is other prompt text: a read past it contradicts our evidence instead.)
      // The observed read is the evidence (nearer to the matched entry's whole size than to the
      // read up to the change, as for params); without usage the break stands.
      const encodingOnly = bp !== null && a.causes.length > 0 && a.causes.every((c) => c.kind === 'representation-only' && c.representation === 'other-encoding');
      const matchedFull = encodingOnly ? entryFull(lin, best, tokensAt) : 0;
      const readPastChange =
        a.observedRead !== null && a.expectedRead !== null && matchedFull > a.expectedRead && a.observedRead >= (a.expectedRead + matchedFull) / 2;
      if (bp && encodingOnly && readPastChange) {
        for (const c of a.causes) {
          c.certainty = 'likely';
          c.detail += ` (the provider still read the cache past it: ${a.observedRead} tokens read, ~${a.expectedRead} expected up to the change)`;
        }
        a.break = null;
        a.systemChange = null;
      }
      // Read past the entry's estimated lifetime: the observed read covers the whole entry, so the
      // provider still held it (a longer lifetime than the request shows, e.g. a 1 h breakpoint a
      // transcript does not record, or another request refreshed it). The read is the evidence.
      const full = !bestAlive && !a.break && a.observedRead !== null ? entryFull(lin, best, tokensAt) : 0;
      const heldPast = full > 0 && a.observedRead! >= full - partialTolerance(lin.family, full);
      if (heldPast) {
        a.expectedRead = full;
        a.notes.push(`read after the entry's estimated lifetime (${Math.round(a.gapMs! / 60000)} min since #${best.number}, lifetime ${Math.round(best.ttlMs / 60000)} min): the provider still held it (a longer lifetime than the request shows, or another request refreshed it)`);
      }
      if (below) a.verdict = 'below-minimum';
      else if (!bestAlive && !a.break && !heldPast) a.verdict = 'ttl-expired';
      else if (a.break) {
        a.verdict = 'break';
        // No live entry: the change is real, but the expired entry could not have been read anyway.
        if (!bestAlive) a.notes.push(`the entry of #${best.number} had also expired (idle beyond its ${Math.round(best.ttlMs / 60000)} min lifetime): nothing was lost to the change`);
      }
      else if ((collapsed || stopsInHead(first, readBound, a.expectedRead, tokensAt, lin.family)) && first.block.segment === 'head') {
        a.verdict = 'break';
        a.break = headBreak();
        a.causes.push(...classifyBreak(a.break, best.tail, tail, breakContext(lin, best, tail, 'head')));
      } else if (collapsed) a.verdict = 'unexplained-miss';
      else a.verdict = 'hit';
      if (a.verdict === 'break' || a.verdict === 'unexplained-miss' || a.verdict === 'ttl-expired') {
        // What the entry would have let this request read, bounded by what was observed: the
        // entry's own prompt, and what this request paid for outside the cache. A change in the
        // prefix re-bills only what the request sends again after it (core/rebill.ts): the read
        // it would have had with the changed item sent as before, not its new tokens.
        const full = a.verdict === 'break' && !bestAlive ? 0 : entryFull(lin, best, tokensAt);
        // At least what the cache held before the change (the expected read) when the request read less.
        const could = a.verdict === 'break' && bp !== null && a.break === bp ? Math.max(a.expectedRead ?? 0, Math.min(full, resumedRead(lin, best, tail, bp, tokensAt))) : full;
        const read = readBound ?? a.expectedRead ?? 0;
        a.lostTokens = bounded(req, could - read);
        a.costUSD = rebillCostOf(req, lin.family, priced, a.lostTokens);
      } else if (a.verdict === 'hit') {
        // A partial read: what the cache held alive for this prefix and the provider did not read.
        const unreachable = lin.family.breakpoints.explicit ? unreachableEntry(lin, tail, marks, depths, now, a.expectedRead ?? 0) : null;
        const could = Math.max(a.expectedRead ?? 0, unreachable?.tokens ?? 0);
        const read = a.observedRead ?? a.expectedRead ?? 0;
        if (could - read > partialTolerance(lin.family, could)) {
          a.lostTokens = bounded(req, could - read);
          a.costUSD = rebillCostOf(req, lin.family, priced, a.lostTokens);
          if (unreachable && unreachable.tokens > read) a.causes.push(unreachable.cause);
        }
      }
    }
    // Parallel requests: an entry that shares more of this prefix, written by a request whose
    // response had not started when this one was sent, could not be read.
    const flying = req.error ? null : inFlightEntry(lin, tail, depths, now, best ? depthOf(best) : 0);
    if (flying) {
      const certain = flight(flying.req, now) === 'in-flight';
      a.causes.push({
        kind: 'parallel-request',
        detail: `sent while #${flying.number} was ${certain ? 'waiting for its response' : 'in flight'}: an entry can be read only once its response has started, so parallel requests each write their own`,
        certainty: certain ? 'certain' : 'likely',
      });
      const d = depths[recent.indexOf(flying)];
      const could = d >= flying.tail.depth ? entryFull(lin, flying, tokensAt) : tokensAt(tail.at(d));
      const extra = bounded(req, could - (a.observedRead ?? a.expectedRead ?? 0)) - a.lostTokens;
      if (extra > 0) {
        a.lostTokens += extra;
        a.costUSD = rebillCostOf(req, lin.family, priced, a.lostTokens);
      }
    }
    if (a.costUSD === null) a.costUSD = priced ? 0 : null;

    if (!req.error) {
      // What this request reads of an earlier entry is a prefix of its own entry, recorded now:
      // that refreshes it. The earlier entry itself is not refreshed, since the part of it
      // beyond the common prefix was not read (a change at tool 0 reads none of it).
      record(lin, req, number, now, tokensAt, reads, marks);
      if (lin.written.size > lin.sweepAt) sweep(lin);
      if (req.kind === 'agent') this.lastAgent = req;
    }
    this.sent(now);
    return a;
  }

  /**
   * The judge's state in plain data (the persisted tail, src/cache/tail.ts): per lineage its live
   * cache entries (at most CANDIDATES requests, their chains through `ref`, see core/tailstate.ts)
   * and its written breakpoint entries, the last agent request's provider/model, and how many
   * requests were pushed. `SessionJudge.restore` continues from it with the same results.
   * @param ref index of a chain node in the caller's table (ChainWriter.ref)
   */
  exportState(ref: (n: BlockNode | null) => number): JudgeState {
    const lineages: JudgeState['lineages'] = [];
    for (const [key, lin] of this.lineages) {
      const first = lin.recent[0]?.req;
      lineages.push({
        key,
        family: lin.family.id,
        minimum: lin.minimum,
        recent: lin.recent.map((e) => {
          const a = this.requests[e.req.index - 1];
          const segments = a && a.request === e.req ? a.segments : (this.requests.find((x) => x?.request === e.req)?.segments ?? null);
          if (!segments) throw new Error(`request #${e.req.index} is not among the judged requests`);
          const { tail: _tail, systemShape: _shape, ...req } = e.req;
          const out: JudgeState['lineages'][number]['recent'][number] = { req, number: e.number, tail: ref(e.tail), lastUse: e.lastUse, ttlMs: e.ttlMs, segments: { ...segments } };
          if (e.written !== undefined) out.written = keyHex(e.written);
          if (e.writtenDepth !== undefined) out.writtenDepth = e.writtenDepth;
          return out;
        }),
        // Gone entries no live entry names are ignored by every lookup: not saved (sweep).
        written: [...lin.written]
          .filter(([k, w]) => !gone(w, this.latest) || lin.recent.some((e) => e.written === k))
          .map(([k, w]) => [keyHex(k), w.expires, w.tokens, w.ttlMs] as [string, number | null, number, number]),
        model: first?.model ?? '',
        api: first?.api ?? '',
      });
    }
    const last = this.lastAgent;
    return { count: this.requests.length, numbering: this.numbering.state(), lastAgent: last ? { provider: last.provider, model: last.model } : null, latest: this.latest, lineages };
  }

  /**
   * A judge that continues from `state` (exportState) as the judge it was exported from would:
   * pushing the next requests gives the same analyses. `requests` holds the restored entries'
   * analyses at their places (only what a later report reads of a matched request: `request`,
   * `segments`) and has the length of the requests judged before.
   * @param nodeOf the chain node at an index of the caller's table
   * @throws Error when the state does not fit the rules (a family id they do not have)
   */
  static restore(tokenModel: SessionAnalysis['tokenModel'], rules: ProviderRules, state: JudgeState, nodeOf: (i: number) => BlockNode | null): SessionJudge {
    const j = new SessionJudge(tokenModel, rules);
    j.requests.length = state.count;
    for (const l of state.lineages) {
      const family = rules.families.find((f) => f.id === l.family);
      if (!family) throw new Error(`family ${l.family} is not in the rules`);
      const lin: Lineage = { key: l.key, family, minimum: l.minimum, recent: [], written: new Map(), sweepAt: SWEEP_MIN, latest: state.latest };
      for (const e of l.recent) {
        const tail = nodeOf(e.tail);
        if (!tail) throw new Error(`entry #${e.req.index} has no chain`);
        const req = { ...e.req, tail } as LlmRequest;
        const entry: Entry = { req, number: e.number, tail, lastUse: e.lastUse, ttlMs: e.ttlMs };
        if (e.written !== undefined) entry.written = hexKey(e.written);
        if (e.writtenDepth !== undefined) entry.writtenDepth = e.writtenDepth;
        lin.recent.push(entry);
        if (req.index >= 1 && req.index <= state.count) j.requests[req.index - 1] = { request: req, number: e.number, segments: { ...e.segments } } as RequestAnalysis;
      }
      for (const [k, expires, tokens, ttlMs] of l.written) lin.written.set(hexKey(k), { expires, tokens, ttlMs });
      lin.sweepAt = Math.max(SWEEP_MIN, 2 * lin.written.size);
      j.lineages.set(l.key, lin);
    }
    if (state.lastAgent) j.lastAgent = { ...state.lastAgent, kind: 'agent' } as LlmRequest;
    j.numbering = new RequestNumbering(state.numbering.agents, state.numbering.sides);
    j.latest = state.latest;
    return j;
  }
}

/** A request as the judge state keeps it: the request without its chain (and shape alternates). */
export type StoredRequest = Omit<LlmRequest, 'tail' | 'systemShape'>;

/** SessionJudge.exportState's plain-data form (JSON-safe). */
export interface JudgeState {
  /** Requests pushed. */
  count: number;
  /** The numbering's counters after them (core/numbering.ts): agent requests, side requests since the last agent one. */
  numbering: { agents: number; sides: number };
  /** Provider and model of the last agent request without an error (the model-switch check). */
  lastAgent: { provider: string; model: string } | null;
  /** The latest send time of the requests pushed (ms), null when none had one (written entries gone before it are not kept). */
  latest: number | null;
  lineages: Array<{
    key: string;
    /** Provider family id (provider-rules.json). */
    family: string;
    /** Minimum cacheable prompt (tokens). */
    minimum: number;
    recent: Array<{
      req: StoredRequest;
      /** The request's number (core/numbering.ts). */
      number: string;
      /** Index of the request's chain tail in the caller's node table. */
      tail: number;
      lastUse: number | null;
      ttlMs: number;
      /** Hex prefix hash of the entry written at its deepest breakpoint. */
      written?: string;
      writtenDepth?: number;
      /** The request's segment hashes (a later request's segment table compares with them). */
      segments: RequestAnalysis['segments'];
    }>;
    /** Written breakpoint entries: [hex prefix hash, expiry ms or null, tokens, lifetime ms]. */
    written: Array<[string, number | null, number, number]>;
    /** Model and API of the lineage's oldest live entry (for the record). */
    model: string;
    api: string;
  }>;
}

function keyHex(key: string): string {
  return Buffer.from(key, 'latin1').toString('hex');
}

function hexKey(hex: string): string {
  return Buffer.from(hex, 'hex').toString('latin1');
}

/** Message blocks at the start of the messages a compaction summary is looked for in (compactionSince) and the histories compared in. */
const SUMMARY_WINDOW = 8;

/**
 * What the judge knows of the requests between the matched entry `best` and the request (chain
 * `tail`) whose break lies in `segment` (classify.ts BreakContext): whether a compaction came
 * between them (compactionSince).
 */
function breakContext(lin: Lineage, best: Entry, tail: BlockNode, segment: BreakPoint['segment']): BreakContext {
  const compaction = compactionSince(lin, best, tail, segment);
  return compaction ? { compaction } : {};
}

/**
 * Evidence that a compaction rewrote the history between the matched entry and a request, the
 * strongest first: a summary request of the lineage sent after the entry's that the transcript or
 * the recorder names (certain); the request's own compaction summary, a block of origin
 * `compaction-summary` among its first messages that the entry's first messages do not hold
 * (certain: the transcript); a summary request recognized by its text only (likely). A summary
 * request is a compaction of this history only if the history changed: a break in the messages
 * says so; a break before them (system, tools, head) needs the first messages to differ. Null
 * when there is none.
 */
function compactionSince(lin: Lineage, best: Entry, tail: BlockNode, segment: BreakPoint['segment']): CompactionEvidence | null {
  let request: CompactionEvidence | null = null;
  for (const e of lin.recent) {
    if (e.req.kind !== 'summary' || e.req.index <= best.req.index) continue;
    const certainty = e.req.kindEvidence === 'heuristic' ? 'likely' : 'certain';
    if (!request || certainty === 'certain') request = { via: 'summary-request', certainty };
  }
  if (request && segment !== 'messages' && !firstMessagesDiffer(best.tail, tail)) request = null;
  if (request?.certainty === 'certain') return request;
  const at = newSummary(best.tail, tail);
  return at !== null ? { via: 'summary-block', at, certainty: 'certain' } : request;
}

/** The first SUMMARY_WINDOW message blocks of a chain (the messages come after the head segments: the first found by binary search over depth). */
function firstMessages(tail: BlockNode): BlockNode[] {
  let d = 1;
  let hi = tail.depth + 1;
  while (d < hi) {
    const mid = (d + hi) >> 1;
    if (tail.at(mid)!.block.segment === 'messages') hi = mid;
    else d = mid + 1;
  }
  const out: BlockNode[] = [];
  for (; d <= tail.depth && out.length < SUMMARY_WINDOW; d++) out.push(tail.at(d)!);
  return out;
}

/** Whether two chains' first SUMMARY_WINDOW message blocks differ (bytes or count). */
function firstMessagesDiffer(a: BlockNode, b: BlockNode): boolean {
  const x = firstMessages(a);
  const y = firstMessages(b);
  if (x.length !== y.length) return true;
  return x.some((n, i) => n.block !== y[i].block && Buffer.compare(n.block.bytes, y[i].block.bytes) !== 0);
}

/**
 * The message index of a compaction summary (origin `compaction-summary`) among the request's
 * first messages that none of the entry's first messages equals, null when there is none.
 */
function newSummary(entry: BlockNode, tail: BlockNode): number | null {
  const summaries = (t: BlockNode) => firstMessages(t).filter((n) => n.block.origin === 'compaction-summary');
  const mine = summaries(tail);
  if (!mine.length) return null;
  const theirs = summaries(entry);
  const found = mine.find((n) => !theirs.some((m) => m.block === n.block || Buffer.compare(m.block.bytes, n.block.bytes) === 0));
  return found ? found.block.item : null;
}

/**
 * An opaque head (reconstructed: the system prompt and tools unrecorded) and a read that stopped
 * inside it: short of the head's estimated tokens, and of the read expected, by more than the
 * family's step or 2 % (the estimate's error). The messages continued, so only the head can have
 * changed (the recorded OpenCode phux V2 fleet delta in the system prompt: 7,424 read of a
 * ~7,821-token head). A read the live entries could not serve past (expected below the head, e.g.
 * no entry reachable by a breakpoint) is no evidence of a head change: a read of 0 where ~0 was
 * expected is explained. No expectation is the same: with `expected` null (unknown) nothing says
 * the read should have gone past the head, so it cannot be said to stop inside it (false, as for
 * an expectation of 0; the judge's other rules, `collapsed` and the params check, read a null
 * expectation the same way: no evidence).
 * @param observed the read the provider reported (tokens), null without usage (false)
 * @param expected the expected read (tokens), null when unknown (false)
 * @param tokensAt the session's token estimate of a prefix (calibrated on its usage)
 */
export function readStopsInHead(req: LlmRequest, observed: number | null, expected: number | null, tokensAt: TokensAt, family: ProviderFamily): boolean {
  return stopsInHead(req.tail?.at(1) ?? null, observed, expected, tokensAt, family);
}

/** readStopsInHead of a request whose chain starts with node `head` (null without a chain). */
function stopsInHead(head: BlockNode | null, observed: number | null, expected: number | null, tokensAt: TokensAt, family: ProviderFamily): boolean {
  if (observed === null || expected === null || !head || head.block.segment !== 'head') return false;
  const tokens = Math.min(tokensAt(head), expected);
  return tokens > 0 && observed < tokens - partialTolerance(family, tokens);
}

/**
 * The read a request would have had of entry `e` had the item changed at its break `bp` been
 * sent as before (core/rebill.ts resumedDepth): explicit breakpoints, what the entry cached
 * through its deepest breakpoint inside the blocks still shared; implicit caching, those blocks
 * in the family's steps. Tokens; 0 below the family's minimum.
 */
function resumedRead(lin: Lineage, e: Entry, tail: BlockNode, bp: BreakPoint, tokensAt: TokensAt): number {
  const depth = resumedDepth(e.tail, tail, bp.depth - 1);
  const through = e.tail.at(depth);
  if (!through) return 0;
  let t: number;
  if (lin.family.breakpoints.explicit) {
    const m = through.lastMarked;
    t = m ? cachedThrough(e, m, tokensAt) : 0;
  } else t = Math.floor(tokensOfEntry(e, through, tokensAt) / lin.family.stepTokens) * lin.family.stepTokens;
  return t >= minimumOf(lin, e, tokensAt) ? t : 0;
}

/**
 * Explicit breakpoints, the read unknown and the write known: the most the request can have read
 * of the entry `e` it continues (tokens). Had it read the entry's `expected` tokens, it would
 * have written only what its prefix grew past the entry's breakpoint, at most a token per byte
 * (MAX_TOKENS_PER_BYTE); what it wrote beyond that was in the entry and not read. Null when that
 * is not known (implicit caching, no write reported, no expectation, no breakpoints).
 */
function writtenPastGrowth(lin: Lineage, e: Entry, tail: BlockNode, u: Usage | null, expected: number | null): number | null {
  if (!lin.family.breakpoints.explicit || !u || u.cacheWrite === null || expected === null || expected <= 0 || e.writtenDepth === undefined) return null;
  const from = e.tail.at(e.writtenDepth);
  const at = tail.lastMarked;
  if (!from || !at || at.depth < from.depth || !tail.at(from.depth)!.sameHash(from)) return null;
  const grown = (at.bytesThrough - from.bytesThrough) * MAX_TOKENS_PER_BYTE;
  return Math.max(0, expected - Math.max(0, u.cacheWrite - grown));
}

/** Tokens lost, at least 0 and at most what the request paid for outside the cache (uncached + written, when both are known). */
function bounded(req: LlmRequest, tokens: number): number {
  const t = Math.max(0, tokens);
  const u = req.usage;
  return u && u.uncached !== null && u.cacheWrite !== null ? Math.min(t, u.uncached + u.cacheWrite) : t;
}

/**
 * Extra cost (USD) of re-billing `lost` tokens that could have been read: written again (explicit
 * breakpoints) or billed as input (implicit caching) instead of read; null when prices are unknown.
 */
export function rebillCost(req: LlmRequest, family: ProviderFamily, rules: ProviderRules, lost: number): number | null {
  return rebillCostOf(req, family, priceOf(req, family, rules), lost);
}

/** rebillCost with the request's prices given (priceOf of the request and family). */
function rebillCostOf(req: LlmRequest, family: ProviderFamily, priced: ReturnType<typeof priceOf>, lost: number): number | null {
  if (!priced) return null;
  const { prices } = priced;
  let rebill = family.breakpoints.explicit ? prices.cacheWrite : prices.input;
  // The bundled table prices writes at the 5 min rate; the re-billed tokens are written at this
  // request's deepest breakpoint, at the 1 h rate (2×, not 1.25×) when it is `ttl: "1h"`. (A
  // host's own prices already are what it was billed.)
  if (priced.source !== 'host' && family.breakpoints.explicit && (req.tail?.lastMarked?.block.breakpoint?.ttlSeconds ?? 0) >= family.ttlSeconds.extended) {
    rebill = prices.input * family.multipliers.write1h;
  }
  return (lost * Math.max(0, rebill - prices.cacheRead)) / 1e6;
}

/**
 * How far a read may fall short of what could be read before it counts as partial (tokens): the
 * family's step (OpenAI reads in 128-token steps) or 2 % of the read (the estimate's error).
 */
function partialTolerance(family: ProviderFamily, could: number): number {
  return Math.max(family.stepTokens, 0.02 * could);
}

/**
 * Explicit breakpoints: the largest live entry written at a prefix of this request that none of
 * its breakpoints reaches, with the reason: every breakpoint at or after it lies 20 or more blocks
 * past it (the lookback, reference/providers.md §1.2), or no breakpoint is at or after it (the
 * breakpoints moved before the block where it was written). Null when every live entry that is a
 * prefix of the request is reachable, or holds no more than `reachable` tokens.
 */
function unreachableEntry(
  lin: Lineage,
  tail: BlockNode,
  tailMarks: readonly BlockNode[],
  depths: readonly number[],
  now: number | null,
  reachable: number,
): { tokens: number; cause: Cause } | null {
  let found: { tokens: number; depth: number; e: Entry } | null = null;
  const recent = lin.recent;
  for (let i = 0; i < recent.length; i++) {
    const e = recent[i];
    const w = e.written !== undefined ? lin.written.get(e.written) : undefined;
    if (!w || e.writtenDepth === undefined || depths[i] < e.writtenDepth || !aliveAt(lin, e, now)) continue;
    if (w.tokens > reachable && (!found || w.tokens > found.tokens)) found = { tokens: w.tokens, depth: e.writtenDepth, e };
  }
  if (!found) return null;
  const { tokens, depth, e } = found;
  const lookback = lin.family.breakpoints.lookbackBlocks;
  const marks = tailMarks.slice(0, lin.family.breakpoints.max).map((m) => m.depth);
  const after = marks.filter((d) => d >= depth);
  const where = (d: number) => tail.at(d)!.block.path;
  if (after.length && after.every((d) => d - depth >= lookback)) {
    const b = Math.min(...after);
    return {
      tokens,
      cause: {
        kind: 'lookback-exceeded',
        detail: `the breakpoint at ${where(b)} is ${b - depth} blocks past the entry #${e.number} wrote at ${where(depth)} (~${tokens} tokens); the provider looks back ${lookback} blocks`,
        certainty: 'certain',
      },
    };
  }
  if (!after.length) {
    return {
      tokens,
      cause: {
        kind: 'breakpoint-moved',
        detail: `no breakpoint at or after ${where(depth)}, where #${e.number} wrote its entry (~${tokens} tokens)${marks.length ? `: the deepest is at ${where(Math.max(...marks))}` : ': the request has none'}`,
        certainty: 'certain',
      },
    };
  }
  return null;
}

/**
 * The entry of a request still in flight when this one was sent (its response had not started,
 * or, with only its end time known, had not ended) that shares more of this prefix than the
 * entry compared with (`comparedDepth` blocks), alive and cacheable; the deepest such.
 */
function inFlightEntry(
  lin: Lineage,
  tail: BlockNode,
  depths: readonly number[],
  now: number | null,
  comparedDepth: number,
): Entry | null {
  let found: Entry | null = null;
  let foundDepth = comparedDepth;
  const recent = lin.recent;
  for (let i = 0; i < recent.length; i++) {
    const e = recent[i];
    if (depths[i] > foundDepth && flight(e.req, now) !== 'done' && aliveAt(lin, e, now) && !e.req.error && tail.depth > 0) {
      found = e;
      foundDepth = depths[i];
    }
  }
  return found;
}

/** Send time of a request (ms), null when unknown or not a number (an unparsable timestamp is NaN). */
function timeOf(req: LlmRequest): number | null {
  return req.timeMs !== null && Number.isFinite(req.timeMs) ? req.timeMs : null;
}

/**
 * Prompt tokens of a usage record (uncached + cache read + cache write), or null when one of the
 * three is unknown (a host value that was not a token count, hosts/numbers.ts).
 */
export function promptOf(u: Usage): number | null {
  return u.uncached === null || u.cacheRead === null || u.cacheWrite === null ? null : u.uncached + u.cacheRead + u.cacheWrite;
}

/**
 * The sum of a usage record's known prompt fields (uncached, cache read, cache write): a lower
 * bound of its prompt, exact when all three are known; 0 without usage.
 */
export function promptAtLeast(u: Usage | null): number {
  return u ? (u.uncached ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) : 0;
}

/**
 * The provider reported reading or writing cache (> 0) for this usage: the prompt was cached, so
 * it is not below the provider's minimum, whatever ours says (a model whose minimum is lower).
 */
function providerCached(u: Usage | null): boolean {
  return !!u && ((u.cacheRead ?? 0) > 0 || (u.cacheWrite ?? 0) > 0);
}

/**
 * Whether a request's prompt is known to be below the lineage's minimum: never when the provider
 * reported a cache read or write for it (providerCached), nor when its known usage fields already reach the minimum; else its
 * reported prompt (`exact`), or the estimate (`tokens`) when the token model is calibrated on
 * the lineage (`tokensAt.trusted`), or, for a chain whose bytes are the whole prompt (no opaque
 * head: `first` is not the head placeholder), its bytes, since a token spans at least one byte
 * (MAX_TOKENS_PER_BYTE). A prompt of unknown size (a usage field unknown and no calibrated
 * estimate) is not below the minimum: it is judged by its bytes like any other.
 */
function knownBelow(u: Usage | null, exact: number | null, tokens: number, tokensAt: TokensAt, first: BlockNode, tail: BlockNode, minimum: number): boolean {
  if (providerCached(u)) return false;
  if (exact !== null) return exact < minimum;
  if (promptAtLeast(u) >= minimum) return false;
  if (tokensAt.trusted) return tokens < minimum;
  return first.block.segment !== 'head' && tail.bytesThrough * MAX_TOKENS_PER_BYTE < minimum;
}

/**
 * Whether an entry's size is known well enough to drop it (or one of its breakpoints) as below
 * the lineage's minimum: its request's prompt reported whole, or, with no usage field saying the
 * provider read or wrote cache for it, estimated by a token model calibrated on the lineage. An
 * entry of unknown size is kept as a cache entry: its bytes are still compared with the next
 * request's, and what it holds is at least what its known usage fields say.
 */
function sizeSure(e: { req: LlmRequest }, tokensAt: TokensAt): boolean {
  const u = e.req.usage && !e.req.error ? e.req.usage : null;
  if (u && promptOf(u) !== null) return true;
  // A usage field unknown and another says the provider read or wrote an entry: cached, whatever the estimate says.
  if (providerCached(u)) return false;
  return !!tokensAt.trusted;
}

/** The minimum an entry's size is held to: the lineage's, or none (0) when its size is not known (sizeSure). */
function minimumOf(lin: Lineage, e: { req: LlmRequest }, tokensAt: TokensAt): number {
  return sizeSure(e, tokensAt) ? lin.minimum : 0;
}

/**
 * Lineage key: what the provider keys its cache on (provider, model, cache key), not why the host
 * sent the request: a compaction or summary request that resends the agent's prefix under the
 * same key reads the agent's entry.
 */
export function lineageKey(req: LlmRequest): string {
  return [req.provider, req.model, req.cacheKey ?? ''].join('|');
}

/**
 * Key of a request's token-model base: its kind and lineage. Requests of one lineage but another
 * kind have another head (a summary's compaction prompt, a title prompt), which the bytes of an
 * opaque head do not show, so each kind gets its own base.
 */
export function calibrationKey(req: LlmRequest): string {
  return `${req.kind}|${lineageKey(req)}`;
}

/**
 * Whether the response of `req` had started by `now` (ms): `done` when it had (or when the times
 * needed are unknown: requests are then taken as sequential), `in-flight` when `now` is before
 * its response started (`responseStartMs`), `maybe` when `now` is before its response ended
 * (`responseEndMs`) and the start is unknown.
 */
function flight(req: LlmRequest, now: number | null): 'done' | 'in-flight' | 'maybe' {
  const sent = timeOf(req);
  if (now === null || sent === null || now < sent) return 'done';
  if (req.responseStartMs !== undefined && Number.isFinite(req.responseStartMs)) return now < req.responseStartMs ? 'in-flight' : 'done';
  if (req.responseEndMs !== undefined && Number.isFinite(req.responseEndMs) && now < req.responseEndMs) return 'maybe';
  return 'done';
}

function blank(request: LlmRequest, number: string, lineage: string, family: string): RequestAnalysis {
  return {
    request,
    number,
    lineage,
    family,
    prefixHash: null,
    segments: { head: null, tools: null, system: null, messages: null },
    verdict: 'unknown',
    causes: [],
    break: null,
    systemChange: null,
    matched: null,
    matchedNumber: null,
    gapMs: null,
    ttlMs: null,
    segmentSizes: {},
    priceSource: null,
    promptTokens: null,
    expectedRead: null,
    observedRead: null,
    lostTokens: 0,
    costUSD: null,
    sameAsPrevious: false,
    notes: [],
  };
}

/**
 * Prefix hash at the end of each segment, and each segment's block count and bytes; head segments
 * are short, so walk them from the start (the messages segment is what follows them). The head
 * segments are read once per head (HeadMemo): a chain holding the node the lineage's last chain
 * was anchored at has the same head nodes, hence the same hashes and sizes.
 * @returns the chain's first node
 */
function fillHashes(a: RequestAnalysis, tail: BlockNode, lin: Lineage): BlockNode {
  a.prefixHash = tail.shortHash;
  const memo = lin.head;
  const held = memo !== undefined && tail.depth >= memo.anchor.depth && tail.at(memo.anchor.depth) === memo.anchor;
  const head = held ? memo : readHead(tail);
  for (const s of head.segments) {
    a.segments[s.segment] = s.hash;
    a.segmentSizes[s.segment] = { blocks: s.blocks, bytes: s.bytes };
  }
  if (tail.block.segment === 'messages') {
    a.segments.messages = a.prefixHash;
    a.segmentSizes.messages = { blocks: tail.depth - head.messagesAt + 1, bytes: tail.bytesThrough - head.bytesBefore };
  }
  // Anchored at this chain for the next one (the head is known only once a message block follows it).
  if (head.messagesAt <= tail.depth) {
    head.anchor = tail.prev && tail.prev.depth >= head.messagesAt ? tail.prev : tail;
    lin.head = head;
  }
  return head.first;
}

/** The head segments of a chain (fillHashes), anchored at its tail. */
function readHead(tail: BlockNode): HeadMemo {
  const first = tail.at(1)!;
  const segments: HeadMemo['segments'] = [];
  let d = 1;
  let bytesBefore = 0;
  for (; d <= tail.depth; d++) {
    const n = d === 1 ? first : tail.at(d)!;
    const seg = n.block.segment;
    if (seg === 'messages') break;
    let size = segments.find((x) => x.segment === seg);
    if (!size) segments.push((size = { segment: seg, hash: '', blocks: 0, bytes: 0 }));
    size.hash = n.shortHash;
    size.blocks++;
    size.bytes += n.bytesThrough - bytesBefore;
    bytesBefore = n.bytesThrough;
  }
  return { anchor: tail, messagesAt: d, first, bytesBefore, segments };
}

/**
 * Tokens the provider should read: for explicit-breakpoint families, the longest live entry
 * written at a breakpoint that one of this request's breakpoints reaches within the lookback;
 * for implicit families, the longest common prefix with a live earlier request, in steps. That
 * prefix is byte-level (the provider caches tokens, not blocks): it runs into the first differing
 * block up to its first changed byte.
 * @param depths common depth of `tail` with each entry of `lin.recent` (same order)
 * @param reads receives the keys of the written entries the request's breakpoints reach (they
 *   are read, so their lifetime is refreshed when the request is recorded)
 */
function expectedRead(
  lin: Lineage,
  tail: BlockNode,
  marks: readonly BlockNode[],
  depths: readonly number[],
  now: number | null,
  tokensAt: TokensAt,
  readableOnly: boolean,
  reads: string[],
): number {
  const f = lin.family;
  if (f.breakpoints.explicit) {
    let best = 0;
    const count = Math.min(marks.length, f.breakpoints.max);
    for (let k = 0; k < count; k++) {
      const b = marks[k];
      // Walk up from the breakpoint (prev links: no lookup per position).
      const stop = Math.max(0, b.depth - f.breakpoints.lookbackBlocks);
      for (let n: BlockNode | null = b; n && n.depth > stop; n = n.prev) {
        const key = n.hashKey;
        const w = lin.written.get(key);
        if (w && (now === null || w.expires === null || w.expires >= now) && !gone(w, lin.latest)) {
          best = Math.max(best, w.tokens);
          reads.push(key);
          break;
        }
      }
    }
    return best;
  }
  let tokens = 0;
  const recent = lin.recent;
  for (let i = 0; i < recent.length; i++) {
    const e = recent[i];
    if (!aliveAt(lin, e, now) || (readableOnly && flight(e.req, now) !== 'done')) continue;
    const d = depths[i];
    if (d >= e.tail.depth) {
      tokens = Math.max(tokens, tokensOfEntry(e, e.tail, tokensAt));
      continue;
    }
    const x = e.tail.at(d + 1);
    const y = tail.at(d + 1);
    const inBlock = x && y && x.block.segment === y.block.segment && y.block.segment !== 'head' ? firstDiff(x.block.bytes, y.block.bytes) : 0;
    tokens = Math.max(tokens, Math.min(tokensAt(tail.at(d), inBlock), observedPrompt(e.req) ?? Infinity));
  }
  const stepped = Math.floor(tokens / f.stepTokens) * f.stepTokens;
  return stepped >= lin.minimum ? stepped : 0;
}

/**
 * Tokens the provider should read when a params change invalidates `tier` and every tier rendered
 * after it (family render order): the expected read of the request cut before its first block of
 * an invalidated tier; 0 when that is the first block (or the tier is `all`). An opaque head
 * (tools + system) is invalidated unless only the messages are.
 */
function tierRead(
  lin: Lineage,
  tail: BlockNode,
  tier: Tier,
  now: number | null,
  tokensAt: TokensAt,
): number {
  if (tier === 'all') return 0;
  const order = lin.family.renderOrder;
  const invalid = (s: BlockNode['block']['segment']) => (s === 'head' ? tier !== 'messages' : order.indexOf(s) >= order.indexOf(tier));
  let d = 0;
  while (d < tail.depth && !invalid(tail.at(d + 1)!.block.segment)) d++;
  const head = tail.at(d);
  if (!head) return 0;
  const depths = lin.recent.map((e) => commonDepth(e.tail, head));
  return expectedRead(lin, head, markedNodes(head), depths, now, tokensAt, false, []);
}

/**
 * Whether a request wrote a cache entry: at least the minimum at its deepest breakpoint (explicit
 * families) or in its prompt. A request without any breakpoint is judged by its size, since
 * top-level automatic caching has no breakpoint on a block. One the provider reported reading or
 * writing cache for, or whose size is not known, is taken as one (never dropped as below the
 * minimum against the provider's word or from a guess).
 */
function cacheable(lin: Lineage, e: Entry, tokensAt: TokensAt): boolean {
  // The provider reported caching it (a read or write), or its size is unknown (sizeSure): it may be read, so it is compared with.
  if (providerCached(e.req.error ? null : e.req.usage) || !sizeSure(e, tokensAt)) return true;
  if (lin.family.breakpoints.explicit && !e.tail.lastMarked) return ((e.req.usage ? promptOf(e.req.usage) : null) ?? tokensAt(e.tail)) >= minimumOf(lin, e, tokensAt);
  return entryFull(lin, e, tokensAt) > 0;
}

/**
 * What an entry would let a request read if nothing changed, bounded by its observed prompt in
 * the family's steps (OpenAI caches 1536 of a 1567-token prompt); 0 when below the minimum.
 */
function entryFull(lin: Lineage, e: Entry, tokensAt: TokensAt): number {
  let full = entryTokens(lin, e, tokensAt);
  const step = lin.family.stepTokens;
  const observed = e.req.usage ? promptOf(e.req.usage) : null;
  if (observed !== null) full = Math.min(full, Math.floor(observed / step) * step);
  return full >= minimumOf(lin, e, tokensAt) ? full : 0;
}

/** What an entry would let a request read if nothing changed (tokens). */
function entryTokens(lin: Lineage, e: Entry, tokensAt: TokensAt): number {
  const minimum = minimumOf(lin, e, tokensAt);
  if (lin.family.breakpoints.explicit) {
    let t = e.tail.lastMarked ? cachedThrough(e, e.tail.lastMarked, tokensAt) : 0;
    // Size unknown: what it wrote at its deepest breakpoint holds what that read (record).
    if (minimum === 0 && e.written !== undefined) t = Math.max(t, lin.written.get(e.written)?.tokens ?? 0);
    return t >= minimum ? t : 0;
  }
  const t = Math.floor(tokensOfEntry(e, e.tail, tokensAt) / lin.family.stepTokens) * lin.family.stepTokens;
  return t >= minimum ? t : 0;
}

/** The prompt tokens a request reported (uncached + read + written), or null without usage (or with one of them unknown). */
function observedPrompt(req: LlmRequest): number | null {
  return req.usage && !req.error ? promptOf(req.usage) : null;
}

/**
 * Tokens of a prefix of an entry's request: its reported prompt for the whole request (exact),
 * else the byte estimate bounded by that prompt.
 */
function tokensOfEntry(e: { req: LlmRequest; tail: BlockNode }, n: BlockNode, tokensAt: TokensAt): number {
  const observed = observedPrompt(e.req);
  // Unknown (a usage field unknown): the whole request is at least its known fields.
  if (observed === null) return n === e.tail && e.req.usage && !e.req.error ? Math.max(tokensAt(n), promptAtLeast(e.req.usage)) : tokensAt(n);
  return n === e.tail ? observed : Math.min(tokensAt(n), observed);
}

/**
 * Explicit breakpoints: tokens a request cached through its breakpoint node `n`. The provider's
 * cache read + write is the prompt through the deepest breakpoint, and `input_tokens` the
 * uncached rest after it, which is in no entry (reference/providers.md §1.2): so exactly read +
 * write at the deepest breakpoint, the byte estimate bounded by it at the others. With one of the
 * two unknown, the other bounds the deepest from below (the estimate when larger). Without usage,
 * or when it reports nothing cached (caching off, a proxy without cache fields), tokensOfEntry.
 */
function cachedThrough(e: { req: LlmRequest; tail: BlockNode }, n: BlockNode, tokensAt: TokensAt): number {
  const u = e.req.usage && !e.req.error ? e.req.usage : null;
  const cached = u && u.cacheRead !== null && u.cacheWrite !== null ? u.cacheRead + u.cacheWrite : 0;
  if (cached <= 0) {
    // One of the two unknown: the other is a lower bound of what the deepest breakpoint cached.
    const atLeast = u && (u.cacheRead === null || u.cacheWrite === null) ? (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) : 0;
    return atLeast > 0 && n === e.tail.lastMarked ? Math.max(atLeast, tokensAt(n)) : tokensOfEntry(e, n, tokensAt);
  }
  return n === e.tail.lastMarked ? cached : Math.min(tokensAt(n), cached);
}

/**
 * Records a request as a cache entry. Its own entry covers the prefix it read of earlier ones
 * (implicit caching refreshes just that). Anthropic-style: the entries its breakpoints read
 * (`reads`, also found by lookback at positions this request does not mark) get their lifetime
 * back, then the entries at its own breakpoints are written.
 */
function record(
  lin: Lineage,
  req: LlmRequest,
  number: string,
  now: number | null,
  tokensAt: TokensAt,
  reads: string[],
  marks: readonly BlockNode[],
): void {
  const tail = req.tail!;
  // Explicit breakpoints: the entry a continuation reads is the one at the deepest breakpoint, so
  // its lifetime is the entry's (1 h breakpoints before 5 min ones keep only the head alive for 1 h).
  let ttlSeconds: number;
  if (lin.family.breakpoints.explicit && marks.length) ttlSeconds = marks[0].block.breakpoint!.ttlSeconds;
  else {
    ttlSeconds = lin.family.ttlSeconds.default;
    for (const m of marks) ttlSeconds = Math.max(ttlSeconds, m.block.breakpoint!.ttlSeconds);
    ttlSeconds = Math.max(ttlSeconds, req.params.prompt_cache_retention === '24h' ? lin.family.ttlSeconds.extended : 0);
  }
  const entry: Entry = { req, number, tail, lastUse: now, ttlMs: ttlSeconds * 1000 };
  lin.recent.push(entry);
  if (lin.recent.length > CANDIDATES) lin.recent.shift();
  if (lin.family.breakpoints.explicit) {
    for (const key of reads) {
      const w = lin.written.get(key)!;
      if (now !== null) w.expires = now + w.ttlMs;
    }
    const count = Math.min(marks.length, lin.family.breakpoints.max);
    const sure = sizeSure(entry, tokensAt);
    // Size unknown: the deepest breakpoint holds at least every entry it read (each a prefix of it).
    let held = 0;
    if (!sure) for (const key of reads) held = Math.max(held, lin.written.get(key)!.tokens);
    for (let k = 0; k < count; k++) {
      const m = marks[k];
      let tokens = cachedThrough(entry, m, tokensAt);
      if (!sure && k === 0) tokens = Math.max(tokens, held);
      if (tokens < (sure ? lin.minimum : 1)) continue;
      const ttl = (m.block.breakpoint?.ttlSeconds ?? lin.family.ttlSeconds.default) * 1000;
      lin.written.set(m.hashKey, { expires: now === null ? null : now + ttl, tokens, ttlMs: ttl });
      if (entry.written === undefined) {
        entry.written = m.hashKey;
        entry.writtenDepth = m.depth;
      }
    }
  }
}

/** Length of the common prefix of two strings (UTF-16 units). */
function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function paramsBreak(prev: LlmRequest, req: LlmRequest, keys: string[]): BreakPoint {
  const k = keys.find((x) => (prev.params[x] ?? null) !== (req.params[x] ?? null)) ?? '';
  const before = String(prev.params[k] ?? '(none)').slice(0, 80);
  const after = String(req.params[k] ?? '(none)').slice(0, 80);
  return {
    segment: 'params',
    blockIndex: 0,
    path: k,
    byteOffset: 0,
    before,
    after,
    excerptAt: commonPrefix(before, after),
    depth: 0,
    offsetInBlock: 0,
  };
}

function headBreak(): BreakPoint {
  return { segment: 'head', blockIndex: 0, path: '(head)', byteOffset: 0, before: '', after: '', excerptAt: 0, depth: 1, offsetInBlock: 0 };
}

/**
 * Growth ratios (and points per lineage) the token model is fitted on: the first ones of the
 * session in send order. A longer session keeps its model once both are reached, so a request
 * appended to it (the live tail) leaves every earlier estimate as it was and is judged alone,
 * with the results of a full analysis; a thousand ratios fit the bytes-per-token ratio as well as
 * forty thousand.
 */
export const CALIBRATION_LIMIT = 1000;

/**
 * The most prompt tokens a byte of growth can add: a token spans at least one byte of the text it
 * is counted from. A growth ratio above it is tokens the bytes do not show (a reported outlier, an
 * opaque head or attachment that grew): it says nothing about tokens per byte and is not kept
 * (kept, one such ratio beside one real one made the median ~300 tokens per byte).
 */
export const MAX_TOKENS_PER_BYTE = 1;

/**
 * Robust fit of observed prompt tokens against canonical prefix bytes, built request by request.
 * The slope is the median of the growth ratios Δtokens/Δbytes between consecutive requests of the
 * same lineage (so a reported outlier moves it little, and lineages with other heads do not mix),
 * over the session's first `limit` ratios (at most MAX_TOKENS_PER_BYTE); each lineage's base is
 * the median residual over its first `limit` points. Defaults to 4 bytes per token when no growth
 * was observed.
 */
export class Calibration {
  /** Kept ratios, ascending (binary insertion: the median is read off, and a new one costs O(log n) + a move). */
  private readonly slopes: number[] = [];
  /** Per calibration key, in order of first use: the last point and the first `limit` points. */
  private readonly lineages = new Map<string, { last: [number, number]; pts: Array<[number, number]> }>();

  /** calibrationKey of the last request added, with the fields it is made of (consecutive requests share it). */
  private last: (RequestKeys & { key: string }) | null = null;

  constructor(private readonly limit: number = CALIBRATION_LIMIT) {}

  /**
   * Takes the next request of the session (one without usage, chain or with an error adds nothing).
   * @returns true when `model()` may have changed (a ratio or a point was kept, or a new lineage)
   */
  add(r: LlmRequest): boolean {
    if (!r.usage || !r.tail || r.error) return false;
    const y = promptOf(r.usage);
    if (y === null || y <= 0) return false;
    const last = sameKeys(this.last, r) ? this.last : (this.last = { provider: r.provider, model: r.model, cacheKey: r.cacheKey, kind: r.kind, api: r.api, key: calibrationKey(r) });
    const key = last.key;
    const p: [number, number] = [r.tail.bytesThrough, y];
    const lin = this.lineages.get(key);
    if (!lin) {
      this.lineages.set(key, { last: p, pts: [p] });
      return true;
    }
    const dx = p[0] - lin.last[0];
    const dy = p[1] - lin.last[1];
    let changed = false;
    if (dx > 0 && dy > 0 && dy <= dx * MAX_TOKENS_PER_BYTE && this.slopes.length < this.limit) {
      insertSorted(this.slopes, dy / dx);
      changed = true;
    }
    lin.last = p;
    if (lin.pts.length < this.limit) {
      lin.pts.push(p);
      changed = true;
    }
    return changed;
  }

  /** The kept ratios and points in plain data (the persisted tail); `Calibration.restore` continues from it. */
  exportState(): CalibrationState {
    return { limit: this.limit, slopes: [...this.slopes], lineages: [...this.lineages].map(([key, l]) => ({ key, last: [l.last[0], l.last[1]], pts: l.pts.map(([x, y]) => [x, y]) })) };
  }

  /** A calibration that continues from `state` (exportState) with the same results. */
  static restore(state: CalibrationState): Calibration {
    const c = new Calibration(state.limit);
    c.slopes.push(...state.slopes);
    for (const l of state.lineages) c.lineages.set(l.key, { last: [l.last[0], l.last[1]], pts: l.pts.map(([x, y]) => [x, y]) });
    return c;
  }

  /** The token model of the requests added so far (a new object each call). */
  model(): SessionAnalysis['tokenModel'] {
    const fallback = 0.25;
    const s = this.slopes;
    const m = s.length >> 1;
    let perByte = s.length ? (s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2) : fallback;
    if (!(perByte > 0) || !Number.isFinite(perByte)) perByte = fallback;
    const base: Record<string, number> = {};
    for (const [key, { pts }] of this.lineages) ownSet(base, key, Math.max(0, median(pts.map(([x, y]) => y - perByte * x))));
    return { base, perByte, calibrated: this.lineages.size > 0 };
  }
}

/** Calibration.exportState's plain-data form: the limit, kept ratios (ascending), per key in order the last and kept points ([bytes, tokens]). */
export interface CalibrationState {
  limit: number;
  slopes: number[];
  lineages: Array<{ key: string; last: [number, number]; pts: Array<[number, number]> }>;
}

/** True when two token models give the same estimate for every prefix (same slope, same bases in the same order). */
export function sameTokenModel(a: SessionAnalysis['tokenModel'], b: SessionAnalysis['tokenModel']): boolean {
  if (a.perByte !== b.perByte || a.calibrated !== b.calibrated) return false;
  const ka = Object.keys(a.base);
  const kb = Object.keys(b.base);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a.base[k] === b.base[k]);
}

/** Inserts `x` into the ascending array `xs` (after equal values). */
function insertSorted(xs: number[], x: number): void {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  xs.splice(lo, 0, x);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Session totals of judged requests (what analyzeSession reports). */
export function totals(rs: readonly RequestAnalysis[]): SessionAnalysis['totals'] {
  return totalsOf(sumTotals(rs));
}

/** The running sums behind `totals` (tokens, USD). */
export interface TotalSums {
  requests: number;
  breaks: number;
  /** Observed tokens (sums over requests with usage; a field a request's host did not give as a token count is left out). */
  cacheRead: number;
  cacheWrite: number;
  uncached: number;
  output: number;
  lostTokens: number;
  /** Sum of known break costs, USD. */
  costUSD: number;
  /** Prompt tokens of the requests whose prompt usage is known (uncached, cacheRead, cacheWrite): the hit rate's denominator. */
  prompt: number;
  /** cacheRead of those same requests: the hit rate's numerator. */
  promptRead: number;
}

/**
 * Adds requests to running sums (a new zero sum when none is given), in order: continuing the
 * sums of a session's first requests with the rest gives the sums of all (the same additions in
 * the same order, so the same floating-point result), which the persisted tail relies on.
 */
export function sumTotals(rs: readonly RequestAnalysis[], from?: TotalSums): TotalSums {
  const t: TotalSums = from ? { ...from } : { requests: 0, breaks: 0, cacheRead: 0, cacheWrite: 0, uncached: 0, output: 0, lostTokens: 0, costUSD: 0, prompt: 0, promptRead: 0 };
  t.requests += rs.length;
  for (const r of rs) {
    if (r.verdict === 'break') t.breaks++;
    const u = r.request.usage;
    if (u) {
      if (u.cacheRead !== null) t.cacheRead += u.cacheRead;
      if (u.cacheWrite !== null) t.cacheWrite += u.cacheWrite;
      if (u.uncached !== null) t.uncached += u.uncached;
      if (u.output !== null) t.output += u.output;
      const prompt = promptOf(u);
      if (prompt !== null) {
        t.prompt += prompt;
        t.promptRead += u.cacheRead!;
      }
    }
    t.lostTokens += r.lostTokens;
    t.costUSD += r.costUSD ?? 0;
  }
  return t;
}

/** The session totals of running sums. */
export function totalsOf(s: TotalSums): SessionAnalysis['totals'] {
  return {
    requests: s.requests,
    breaks: s.breaks,
    cacheRead: s.cacheRead,
    cacheWrite: s.cacheWrite,
    uncached: s.uncached,
    output: s.output,
    lostTokens: s.lostTokens,
    costUSD: s.costUSD,
    hitRate: s.prompt > 0 ? s.promptRead / s.prompt : null,
  };
}
