/**
 * The one sanitizer for text that came from outside (transcripts, file names, arguments, phux
 * output, error messages that quote any of them) on its way to a terminal or a text view.
 *
 * DESIGN.md "Rules that are not negotiable": untrusted strings are rendered as text only. A
 * terminal interprets C0 controls (ESC starts escape sequences: colors, titles, cursor moves,
 * OSC 52 clipboard writes), DEL, and the 8-bit C1 controls (U+009B is a one-character CSI on
 * terminals that honour 8-bit controls); the line and paragraph separators U+2028/U+2029 break
 * lines in some viewers; the bidirectional embedding, override and isolate marks reorder what is
 * shown (the "Trojan Source" trick, CVE-2021-42574). All of them are replaced.
 *
 * Every line the CLI prints goes through `terminalText` at the output sink (cli/main.ts), so no
 * call site can forget it; `--json` output goes through `jsonText`, which escapes the same
 * characters as `\uXXXX` (the parsed values stay identical). `safe` and `displayText` are the
 * cell-level forms used for layout (one row per item). Pure: no I/O.
 */

/** C0, DEL, C1, U+2028/U+2029, and the bidi marks (LRM, RLM, ALM, LRE…RLO, LRI…PDI). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g;
/** The same set without LF: what may not appear in a printed line. */
const UNSAFE_IN_LINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g;
/** Runs of the set, for the collapsing form. */
const UNSAFE_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]+/g;
/** Characters escaped in JSON text (JSON.stringify already escapes C0 inside strings). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g;

/** True when `text` holds a character the sanitizer replaces. */
export function hasUnsafe(text: string): boolean {
  UNSAFE.lastIndex = 0;
  const found = UNSAFE.test(text);
  UNSAFE.lastIndex = 0;
  return found;
}

/**
 * One cell of a row: LF becomes `⏎`, TAB a space, every other replaced character `·`, so the
 * text stays on one line and its length is kept (one character for one).
 */
export function safe(text: string): string {
  return text.replace(UNSAFE, (c) => (c === '\n' ? '⏎' : c === '\t' ? ' ' : '·'));
}

/**
 * What the CLI prints, at the sink: line breaks (LF) kept, TAB a space, every other replaced
 * character `·`. Idempotent; text that `safe` already made safe passes unchanged.
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE_IN_LINES, (c) => (c === '\t' ? ' ' : '·'));
}

/**
 * JSON text (from `JSON.stringify`) with DEL, C1, U+2028/U+2029 and the bidi marks written as
 * `\uXXXX` escapes. Outside strings JSON text is ASCII, so only string contents change, and they
 * parse back to the same values.
 */
export function jsonText(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A single-line, control-free rendering for tables and one-line messages: every run of replaced
 * characters becomes one space, whitespace runs collapse to one space, the ends are trimmed, and
 * the result is cut to `maxChars` UTF-16 units (the last one replaced by `…` when cut, the same
 * convention as phux's `cleanString`). `null`/`undefined` give `''`.
 */
export function displayText(value: string | null | undefined, maxChars = 200): string {
  if (value == null) return '';
  const flat = value.replace(UNSAFE_RUNS, ' ').replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  return `${flat.slice(0, Math.max(0, maxChars - 1))}…`;
}
