/** Short text forms for tree items, hovers and diagnostics (view-side formatting only). */
import type { SessionRef } from '../hosts/registry.js';
import type { SessionSummary } from './summaryCache.js';
import { displayText } from '../sanitize.js';

/** `1234` → `1,234`. */
export const tokens = (n: number): string => Math.round(n).toLocaleString('en-US');

/** USD with enough digits for fractions of a cent: `$0.0070`, `$1.25`. */
export function usd(v: number): string {
  if (v === 0) return '$0';
  return v < 0.01 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

/** `0.913` → `91%`. */
export const percent = (r: number): string => `${Math.round(r * 100)}%`;

/** Time since `ms` (epoch), compact: `just now`, `5 min ago`, `2 h ago`, `3 d ago`. */
export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, (now - ms) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 60) return `${Math.floor(s / 86400)} d ago`;
  return new Date(ms).toISOString().slice(0, 10);
}

/** `3 req`, `1 break`/`3 breaks`. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * A session's name in the Sessions view and the session picker: its title, else its first prompt
 * on one line (as the hosts' own pickers show; Claude Code and Codex record no title), else its id.
 */
export function sessionName(ref: SessionRef): string {
  return ref.title ?? (ref.firstPrompt ? displayText(ref.firstPrompt, 80) : ref.id);
}

/** `64% hit`, or `no usage` when the session reported none. */
export const hitText = (t: SessionSummary): string => (t.hitRate === null ? 'no usage' : `${percent(t.hitRate)} hit`);

/** Markdown (numbers only) of a session summary's counts: `**13** requests · **3** breaks · hit rate **64%**`. */
export const countsMarkdown = (t: SessionSummary): string =>
  `**${t.requests}** requests · **${t.breaks}** breaks · hit rate **${t.hitRate === null ? 'n/a' : percent(t.hitRate)}**`;

/** Markdown (numbers only) of what a session's breaks re-billed, tokens and USD. */
export const rebilledMarkdown = (t: SessionSummary): string => `Re-billed by breaks: **${tokens(t.lostTokens)}** tokens, **${usd(t.costUSD)}**`;
