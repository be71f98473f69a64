/**
 * The one-sentence reason of a request's verdict, for the timeline's detail and hover: which
 * entry it was compared with, what changed, what was read and what it cost. Built from the
 * request's own report fields, so the webview shows it as it is and computes nothing.
 */
import { flat } from '../core/flat.js';
import type { RequestReport } from './json.js';

/**
 * "1,234" (en-US grouping, as the timeline shows tokens): `Math.round(x).toLocaleString('en-US')`,
 * with the grouping done here for safe integers (Intl formatting was a tenth of building a
 * session's report); -0, NaN, infinities and huge values go through Intl.
 */
export function n(x: number): string {
  const r = Math.round(x);
  if (!Number.isSafeInteger(r) || Object.is(r, -0)) return r.toLocaleString('en-US');
  const digits = String(r < 0 ? -r : r);
  let out = digits.length > 3 ? '' : digits;
  if (digits.length > 3) {
    const head = digits.length % 3 || 3;
    out = digits.slice(0, head);
    for (let i = head; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  }
  return r < 0 ? `-${out}` : out;
}

/** "4 min 12 s", "1 h 3 min", "850 ms" for a duration in ms. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
}

/** Where a break is, in words: "message 0", "tool 2", "system block 0", "the head", "params (thinking)". */
export function breakWhere(b: NonNullable<RequestReport['break']>): string {
  switch (b.segment) {
    case 'messages':
      return `message ${b.blockIndex}`;
    case 'tools':
      return `tool ${b.blockIndex}`;
    case 'system':
      return `system block ${b.blockIndex}`;
    case 'head':
      return 'the head (system prompt and tools)';
    case 'params':
      return `the request parameters (${b.path})`;
  }
}

/**
 * The reason of `r.verdict` in one sentence (ends with a period).
 * Fields used: verdict, causes, break, matched, matchedNumber, gapMs, ttlMs, promptTokens, observedRead,
 * expectedRead, lostTokens, costUSD, error, kind, sameAsPrevious.
 */
export function verdictReason(r: RequestReport): string {
  // Kept with the report (one per request): flat, not the ~10 rope nodes and pieces it is built from.
  return flat(reasonText(r));
}

function reasonText(r: RequestReport): string {
  const vs = r.matched !== null ? ` request #${r.matchedNumber ?? r.matched}` : ' the entry it matched';
  const cause = r.causes[0];
  switch (r.verdict) {
    case 'cold':
      if (cause?.kind === 'parallel-request') return `No entry of this lineage was readable yet (${cause.detail}): the prompt is written to the cache again.`;
      // The provider's read is the evidence: an entry written outside this session (an earlier session, or a request the transcript does not show, with the same head).
      if ((r.observedRead ?? 0) > 0) {
        return `First ${r.kind === 'agent' ? '' : `${r.kind} `}request of its lineage (${r.provider}/${r.model}) in this session, yet it read ${n(r.observedRead!)} of ${n(r.promptTokens ?? 0)} prompt tokens from the cache: an entry written outside this session (an earlier session or a request not in the transcript, with the same prefix).`;
      }
      return `First ${r.kind === 'agent' ? '' : `${r.kind} `}request of its lineage (${r.provider}/${r.model}) in this session: there is no earlier entry here to read, so the prompt is written to the cache.`;
    case 'hit': {
      const read = r.observedRead !== null ? `read ${n(r.observedRead)} of ${n(r.promptTokens ?? 0)} prompt tokens` : `can read ~${n(r.expectedRead ?? 0)} tokens`;
      const same = r.sameAsPrevious ? ' (the prefix is byte-identical: a retry or re-send)' : '';
      if (r.lostTokens > 0) {
        // A partial read: what was not read, and why when the judge knows.
        const why = cause ? ` (${cause.kind}: ${cause.detail})` : '';
        const cost = r.costUSD !== null ? `, +$${r.costUSD.toFixed(5)}` : '';
        return `The prefix continues${vs}'s${same}: it ${read} from the cache, ~${n(r.lostTokens)} fewer than the cache held for it${why}${cost}.`;
      }
      const likely = cause ? `; ${cause.kind} is possible but ${cause.certainty === 'likely' ? 'not confirmed by the read' : 'did not stop the read'}` : '';
      return `The prefix continues${vs}'s within its entry's lifetime${same}: it ${read} from the cache${likely}.`;
    }
    case 'break': {
      const where = r.break ? ` at ${breakWhere(r.break)}` : '';
      const why = cause ? ` (${cause.kind}${cause.detail ? `: ${cause.detail}` : ''})` : '';
      if (r.lostTokens > 0) {
        const cost = r.costUSD !== null ? ` (+$${r.costUSD.toFixed(5)})` : '';
        return `The prefix differs from${vs}'s${where}${why}: the cache can be read only up to the change, so ~${n(r.lostTokens)} tokens were billed again${cost}.`;
      }
      // Nothing re-billed (e.g. a compaction: what follows the change was never cached; or the entry had expired anyway).
      const read = r.observedRead !== null ? ` (${n(r.observedRead)} tokens read${r.expectedRead !== null ? `, ~${n(r.expectedRead)} expected` : ''})` : '';
      return `The prefix differs from${vs}'s${where}${why}: the cache can be read up to the change${read} and nothing the cache held was billed again.`;
    }
    case 'ttl-expired': {
      const gap = r.gapMs !== null ? `${duration(r.gapMs)} passed` : 'too much time passed';
      const ttl = r.ttlMs !== null ? ` its ${duration(r.ttlMs)} lifetime` : ' its lifetime';
      return `The entry of${vs} had expired: ${gap} since it was last used, beyond${ttl}${r.lostTokens > 0 ? `; ~${n(r.lostTokens)} tokens were written again` : ''}.`;
    }
    case 'below-minimum':
      return `The prompt (${n(r.promptTokens ?? 0)} tokens) is shorter than the minimum cacheable length of ${r.model}, so the provider neither reads nor writes a cache entry for it.`;
    case 'model-switch':
      return `The model changed${cause ? ` (${cause.detail})` : ''}: each model has its own cache, so nothing earlier could be read.`;
    case 'unexplained-miss':
      return `The prefix is unchanged since${vs}, yet the provider read ${n(r.observedRead ?? 0)} tokens where ~${n(r.expectedRead ?? 0)} were expected: the transcript cannot say why (eviction, routing to another cache).`;
    case 'unknown':
      if (r.error) return `The request failed (${r.error}), so it wrote no cache entry and is not judged.`;
      return 'Not enough evidence to judge this request: no prefix is known for it.';
    default:
      return `Verdict ${r.verdict}.`;
  }
}
