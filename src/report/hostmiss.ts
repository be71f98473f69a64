/**
 * The host's own cache verdict beside ours: Claude Code's `message.diagnostics.cache_miss_reason`
 * (reference/claude-code-codex.md §1.7) names the segment the API found changed against the
 * previous message, or null for no miss. It is compared with our verdict and break segment; the
 * counts per session show where the two disagree. The comparison is judgement and lives in the
 * core (core/hostmiss.ts); this file shapes it for the view model.
 */
import { hostAgreement } from '../core/hostmiss.js';
import type { HostMiss } from '../core/model.js';
import type { RequestReport } from './json.js';

/** What the host said about one request, and whether our verdict agrees. */
export interface HostMissReport {
  /** Who said it (`Claude Code`). */
  host: string;
  /** The host's miss type, as recorded; null = the host reported no miss. */
  type: string | null;
  /** Tokens the host reported missed; null when it gave none. */
  missedTokens: number | null;
  /** true / false: our verdict agrees / disagrees; null: not comparable (core/hostmiss.ts `hostAgreement`). */
  agrees: boolean | null;
}

/** Per session: how many requests carry the host's verdict and how many of those disagree with ours. */
export interface HostMissSummary {
  host: string;
  /** Requests with a host verdict. */
  requests: number;
  agree: number;
  disagree: number;
  /** Host verdicts that cannot be compared (`unavailable`, an unknown type, a failed request). */
  notCompared: number;
  /** Indexes of the requests where they disagree. */
  disagreeing: number[];
}

/** The request's host verdict with our agreement, or undefined when the host recorded none. */
export function hostMissReport(m: HostMiss | undefined, r: RequestReport): HostMissReport | undefined {
  if (!m) return undefined;
  return { host: m.host, type: m.type, missedTokens: m.missedTokens ?? null, agrees: hostAgreement(m, r) };
}

/** The session's counts, or undefined when no request carries a host verdict. */
export function hostMissSummary(requests: RequestReport[]): HostMissSummary | undefined {
  const withHost = requests.filter((r) => r.hostMiss);
  if (!withHost.length) return undefined;
  const disagreeing = withHost.filter((r) => r.hostMiss!.agrees === false).map((r) => r.index);
  const agree = withHost.filter((r) => r.hostMiss!.agrees === true).length;
  return { host: withHost[0].hostMiss!.host, requests: withHost.length, agree, disagree: disagreeing.length, notCompared: withHost.length - agree - disagreeing.length, disagreeing };
}

/** The host's verdict in words: `system_changed (22183 tokens missed)`, `no miss`. */
export function hostMissText(m: Pick<HostMissReport, 'type' | 'missedTokens'>): string {
  if (m.type === null) return 'no miss';
  return `${m.type}${m.missedTokens !== null ? ` (${m.missedTokens} tokens missed)` : ''}`;
}

/** Agreement in words: `agrees`, `disagrees`, `not compared`. */
export function agreementText(agrees: boolean | null): string {
  return agrees === null ? 'not compared' : agrees ? 'agrees' : 'disagrees';
}
