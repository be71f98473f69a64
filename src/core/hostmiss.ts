/**
 * The host's own cache verdict against ours: Claude Code's `message.diagnostics.cache_miss_reason`
 * (reference/claude-code-codex.md §1.7; platform.claude.com/docs/en/build-with-claude/cache-diagnostics)
 * names the segment the API found changed against the previous message, or null for no miss.
 */
import type { Cause } from './classify.js';
import type { HostMiss } from './model.js';

/** What the comparison reads of a judged request (a RequestAnalysis or its report entry). */
export interface JudgedRequest {
  /** A Verdict (analyze.ts); a string so report entries pass as they are. */
  verdict: string;
  break: { segment: string } | null;
  causes: Pick<Cause, 'kind'>[];
  /** The request's error, null when it succeeded. */
  error: string | null;
}

/** Our verdicts that say the cache missed (all but a hit, a cold start and unknown). */
const MISSES = new Set(['break', 'ttl-expired', 'below-minimum', 'model-switch', 'unexplained-miss']);

/**
 * Whether our verdict agrees with the host's:
 *  - no miss (null): our hit or cold (a first request may still read an older entry), or
 *    below-minimum (neither says the prefix changed);
 *  - `previous_message_not_found`: our cold, ttl-expired or below-minimum (there was nothing to read);
 *  - `model_changed`: our model-switch (verdict or cause);
 *  - `system_changed` / `tools_changed` / `messages_changed`: our break in that segment, or in the
 *    opaque head for system and tools (a host that does not record them), or a cause of that kind;
 * anything else of ours disagrees. Not comparable (null): `unavailable`, a type this version does
 * not know, and requests we could not judge (verdict unknown, a failed request).
 */
export function hostAgreement(m: HostMiss, r: JudgedRequest): boolean | null {
  if (r.verdict === 'unknown' || r.error) return null;
  const cause = (k: string) => r.causes.some((c) => c.kind === k);
  const seg = r.break?.segment;
  switch (m.type) {
    case null:
      return r.verdict === 'hit' || r.verdict === 'cold' || r.verdict === 'below-minimum';
    case 'previous_message_not_found':
      return r.verdict === 'cold' || r.verdict === 'ttl-expired' || r.verdict === 'below-minimum';
    case 'model_changed':
      return r.verdict === 'model-switch' || cause('model-switch');
    case 'system_changed':
      return MISSES.has(r.verdict) && (seg === 'system' || seg === 'head' || cause('system-changed'));
    case 'tools_changed':
      return MISSES.has(r.verdict) && (seg === 'tools' || seg === 'head' || cause('tools-changed'));
    case 'messages_changed':
      return MISSES.has(r.verdict) && (seg === 'messages' || cause('history-rewritten') || cause('representation-only'));
    default:
      return null;
  }
}

