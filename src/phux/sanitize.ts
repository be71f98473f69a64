/**
 * Text hygiene for untrusted phux strings (pane titles, cwds, session names, stderr prose).
 *
 * DESIGN.md "Rules that are not negotiable": transcript and phux strings are untrusted and are
 * rendered as text only. A terminal title can carry escape sequences (OSC 0/2 titles are set by
 * whatever runs in the pane), so anything printed to a terminal goes through `displayText`
 * (src/sanitize.ts, the project's one sanitizer) first.
 * Pure: no fs, no child_process.
 */

/**
 * C0 controls U+0000–U+001F and DEL U+007F: the set phux's own `cleanString` replaces
 * (`[\u0000-\u001f\u007f]`, phall1/phux@16f2ffdf `integrations/pi/src/awareness.ts`, see
 * reference/phux.md §2.5). Used by the ADR-0067 `control-characters` check so Prefix Lens flags
 * exactly what phux promises to remove.
 */
export const PHUX_CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** The one sanitizer for display lives in src/sanitize.ts; phux code imports it from here too. */
export { displayText } from '../sanitize.js';

/**
 * UTF-8 length of `s` in bytes, without allocating (works in Node and in a webview; lone
 * surrogates count 3 bytes, as `TextEncoder` encodes them as U+FFFD).
 */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
