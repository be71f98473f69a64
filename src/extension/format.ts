/** Short text forms for tree items, hovers and diagnostics (view-side formatting only). */
import type { SessionRef } from '../hosts/registry.js';
import type { SessionSummary } from './summaryCache.js';
import { plural } from '../plural.js';
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

/**
 * A session's name in the Sessions view and the session picker: its title, else its first prompt
 * on one line (as the hosts' own pickers show; Claude Code and Codex record no title), else its id.
 */
export function sessionName(ref: SessionRef): string {
  return ref.title ?? (ref.firstPrompt ? displayText(ref.firstPrompt, 80) : ref.id);
}

/** `64% hit`, or `no usage` when the session reported none. */
export const hitText = (t: SessionSummary): string => (t.hitRate === null ? 'no usage' : `${percent(t.hitRate)} hit`);

/**
 * Markdown (numbers only) of a session summary's counts: `**13** requests · **3** breaks · hit rate **64%**`
 * (`**1** request`, `**1** break` in the singular).
 */
export const countsMarkdown = (t: SessionSummary): string =>
  `${plural(t.requests, 'request', { shown: `**${t.requests}**` })} · ${plural(t.breaks, 'break', { shown: `**${t.breaks}**` })} · hit rate **${t.hitRate === null ? 'n/a' : percent(t.hitRate)}**`;

/**
 * A session's figures on one line, as the Sessions view's rows and the session picker give them,
 * what matters first so that a narrow side bar (300 px) cuts the least useful part:
 * `3 breaks · 64% hit · 13 req`, `1 break · 31% hit · 3 req`.
 */
export const figuresText = (t: SessionSummary): string => `${plural(t.breaks, 'break')} · ${hitText(t)} · ${t.requests} req`;

/**
 * A session row's accessible name, one sentence: `pi lab session: 3 breaks, 64% cache hit rate, 13 requests, written 2 h ago.`
 * (`no usage reported` when the session reported none). `name` is read as text by a screen reader.
 */
export function sessionSentence(name: string, t: SessionSummary, when: string): string {
  const hit = t.hitRate === null ? 'no usage reported' : `${percent(t.hitRate)} cache hit rate`;
  return `${name}: ${plural(t.breaks, 'break')}, ${hit}, ${plural(t.requests, 'request')}, written ${when}.`;
}

/**
 * The most characters of a Sessions row's name, the ellipsis included (rowName), by the row's depth
 * in the tree: 2 for a session right under its host, 3 under a project. VS Code tells a tree nothing
 * of its width, and a row's name and figures share one line that the side bar cuts at its end, so
 * the cut is for a 300 px side bar, where the break count and the hit rate have to show. Measured
 * in code-server 4.139.1 (test/e2e/sidebar.test.ts, 300 px, the fixture sessions): a depth-3 name
 * starts 30 px further right than a depth-2 one and takes 6–7.5 px a character; cut to 22 there it
 * left `Recorded: Anthropic… 0 break…`, cut to 14 every depth-3 row shows its breaks and hit rate
 * (the tightest, a whole 14: `pi lab session 3 breaks · 64% hi…`). Depth 2 keeps its 22 (its
 * breaks show; a 22-character name leaves `Parser review (Sonnet) 1 break · 31…`).
 */
export const ROW_NAME_CHARS: Readonly<Record<2 | 3, number>> = { 2: 22, 3: 14 };

/** A Sessions row's name: `name` on one line, cut (shortName) to ROW_NAME_CHARS of the row's depth. */
export const rowName = (name: string, depth: 2 | 3): string => shortName(name, ROW_NAME_CHARS[depth]);

/** The session's name in the status bar is cut to this many characters, the ellipsis included (the status bar is shared). */
export const STATUS_NAME_CHARS = 24;

/**
 * `text` on one line, at most `max` characters: cut at the last space when that keeps at least
 * half of them (`Hello with long cache…`), else mid-word, with an ellipsis.
 */
export function shortName(text: string, max: number): string {
  const flat = displayText(text, Number.MAX_SAFE_INTEGER);
  if (flat.length <= max) return flat;
  const head = flat.slice(0, max - 1);
  const space = head.lastIndexOf(' ');
  return `${(space >= max / 2 ? head.slice(0, space) : head).trimEnd()}…`;
}

/**
 * The status-bar item's text for the session being written now: icon, its name (shortName,
 * STATUS_NAME_CHARS), hit rate and breaks: `$(warning) pi lab session · 64% hit · 3 breaks`, the
 * warning icon when its latest request broke the cache; `analyzing…` before its summary is known.
 * `name` is untrusted (a title or a prompt): a `$(` in it is escaped (`\$(`, as VS Code's
 * escapeIcons does), so it shows as text, never as an icon.
 */
export function statusText(name: string, s: SessionSummary | undefined): string {
  const short = shortName(name, STATUS_NAME_CHARS).replaceAll('$(', '\\$(');
  if (!s) return `$(loading~spin) ${short} · analyzing…`;
  return `$(${s.last?.verdict === 'break' ? 'warning' : 'pulse'}) ${short} · ${hitText(s)} · ${plural(s.breaks, 'break')}`;
}

/** Markdown (numbers only) of what a session's breaks re-billed, tokens and USD. */
export const rebilledMarkdown = (t: SessionSummary): string => `Re-billed by breaks: ${plural(Math.round(t.lostTokens), 'token', { shown: `**${tokens(t.lostTokens)}**` })}, **${usd(t.costUSD)}**`;
