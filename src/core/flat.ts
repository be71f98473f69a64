/**
 * Flat strings for values kept long. A string built by `+` or a template literal is a tree of
 * pieces in V8 (a 32-byte rope node per concatenation, each piece its own string): a text kept
 * for the whole session (a block's envelope) or the whole report (a request's reason, ~10
 * concatenations) costs several times its characters that way.
 */

/**
 * `s` as one flat string: reading a character makes V8 flatten a concatenation in place, so the
 * pieces it was built from can be collected. Returns `s` itself (same value).
 */
export function flat(s: string): string {
  if (s.length) s.charCodeAt(0);
  return s;
}
