/**
 * The one way Prefix Lens words a count: CLI output, reader diagnostics, report reasons and notes,
 * the HTML report and the webview, and the extension's trees, hovers and messages. Pure (no I/O,
 * no vscode), so every side imports it: src/core, the readers, src/report, media/ and src/extension.
 */

/**
 * The plural of a noun (of its last word), by the regular spelling rules: `request` → `requests`,
 * `entry` → `entries`, `body` → `bodies` (consonant + y), `match` → `matches`, `pass` → `passes`
 * (s, x, z, ch, sh + es); `key` → `keys` (vowel + y). A noun outside those rules (`child`) is given
 * to `plural` as `many`.
 */
export function pluralOf(one: string): string {
  if (/[^aeiou]y$/i.test(one)) return `${one.slice(0, -1)}ies`;
  if (/(?:s|x|z|ch|sh)$/i.test(one)) return `${one}es`;
  return `${one}s`;
}

/**
 * A count with its noun, singular for exactly 1: `1 break`, `3 breaks`, `0 sessions`,
 * `1 captured request body`, `2 captured request bodies`. `many` is the plural when the regular
 * spelling (pluralOf) does not give it; `shown` is the number as written (`**13**` in Markdown,
 * `1,234`), the count itself by default.
 */
export const plural = (n: number, one: string, { many = pluralOf(one), shown = String(n) }: { many?: string; shown?: string } = {}): string =>
  `${shown} ${n === 1 ? one : many}`;
