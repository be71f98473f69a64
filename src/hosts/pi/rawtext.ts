/**
 * Where a tool-result line already holds its texts as JSON literals (issue 9: not serializing
 * again what the line holds).
 *
 * A long tool-result text is kept as the UTF-8 bytes of `JSON.stringify(text)` (core/literal.ts
 * JsonLiteral). Pi writes its lines with `JSON.stringify`, so the line's bytes hold exactly those
 * bytes already: this module finds them, so the reader copies them instead of serializing the
 * parsed string again and encoding it (two passes over the longest strings of a session, and a
 * UTF-16 copy of each). A literal is taken from the line only when it is written as
 * `JSON.stringify` writes it (canonicalStringEnd); anything else (another escape form, a
 * duplicated key on the way, an escaped key) answers "not found" and the caller serializes.
 *
 * The bytes must be valid UTF-8 and valid JSON (the line parsed without warnings); offsets are
 * byte offsets into them. Pure, iterative, no allocation but the result.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * For each element i of `$.message.content` (`count` elements expected), the byte range
 * [spans[2i], spans[2i+1]) of its `text` string value, quotes included, when that literal is
 * written as JSON.stringify writes it; -1 where it is not (no text, not a string, another form).
 * @returns null when the line's shape does not answer exactly (`message` or `content` missing,
 *   not an object/array, another element count; a key on the way written with an escape; a key
 *   on the way given twice, since JSON.parse keeps the last)
 */
export function contentTextSpans(b: Uint8Array, count: number): Int32Array | null {
  const spans = new Int32Array(2 * count).fill(-1);
  let i = ws(b, 0);
  if (b[i] !== 0x7b) return null;
  let seenMessage = false;
  let elements = -1;
  // Root object members.
  i = ws(b, i + 1);
  if (b[i] === 0x7d) return null;
  for (;;) {
    const key = keyIs(b, i, MESSAGE);
    if (key < 0) return null;
    i = ws(b, skipString(b, i));
    if (b[i] !== 0x3a) return null;
    i = ws(b, i + 1);
    if (key === 1) {
      if (seenMessage || b[i] !== 0x7b) return null;
      seenMessage = true;
      const r = scanMessage(b, i, spans, count);
      if (r === null) return null;
      i = r.end;
      elements = r.elements;
    } else i = skipValue(b, i);
    i = ws(b, i);
    if (b[i] === 0x2c) {
      i = ws(b, i + 1);
      continue;
    }
    if (b[i] === 0x7d) break;
    return null;
  }
  return elements === count ? spans : null;
}

const MESSAGE = bytesOf('message');
const CONTENT = bytesOf('content');
const TEXT = bytesOf('text');

function bytesOf(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/** The `message` object at `i` (its `{`): its end, and the elements its `content` array had (-1: none). */
function scanMessage(b: Uint8Array, i: number, spans: Int32Array, count: number): { end: number; elements: number } | null {
  let elements = -1;
  i = ws(b, i + 1);
  if (b[i] === 0x7d) return { end: i + 1, elements };
  for (;;) {
    const key = keyIs(b, i, CONTENT);
    if (key < 0) return null;
    i = ws(b, skipString(b, i));
    if (b[i] !== 0x3a) return null;
    i = ws(b, i + 1);
    if (key === 1) {
      if (elements >= 0 || b[i] !== 0x5b) return null;
      const r = scanContent(b, i, spans, count);
      if (r < 0) return null;
      elements = content;
      i = r;
    } else i = skipValue(b, i);
    i = ws(b, i);
    if (b[i] === 0x2c) {
      i = ws(b, i + 1);
      continue;
    }
    if (b[i] === 0x7d) return { end: i + 1, elements };
    return null;
  }
}

/** Elements of the last content array scanned (scanContent). */
let content = 0;

/** The content array at `i` (its `[`): its end, or -1; sets `content` to its element count. */
function scanContent(b: Uint8Array, i: number, spans: Int32Array, count: number): number {
  let n = 0;
  i = ws(b, i + 1);
  if (b[i] === 0x5d) {
    content = 0;
    return i + 1;
  }
  for (;;) {
    if (b[i] === 0x7b) {
      if (n >= count) return -1;
      i = scanElement(b, i, spans, n);
      if (i < 0) return -1;
    } else i = skipValue(b, i);
    n++;
    i = ws(b, i);
    if (b[i] === 0x2c) {
      i = ws(b, i + 1);
      continue;
    }
    if (b[i] === 0x5d) {
      content = n;
      return i + 1;
    }
    return -1;
  }
}

/** One content element object at `i`: records its `text` literal's span; its end, or -1. */
function scanElement(b: Uint8Array, i: number, spans: Int32Array, n: number): number {
  let seen = false;
  i = ws(b, i + 1);
  if (b[i] === 0x7d) return i + 1;
  for (;;) {
    const key = keyIs(b, i, TEXT);
    if (key < 0) return -1;
    i = ws(b, skipString(b, i));
    if (b[i] !== 0x3a) return -1;
    i = ws(b, i + 1);
    if (key === 1) {
      if (seen) return -1;
      seen = true;
      if (b[i] === QUOTE) {
        const end = canonicalStringEnd(b, i);
        if (end > 0) {
          spans[2 * n] = i;
          spans[2 * n + 1] = end;
          i = end;
        } else i = skipString(b, i);
      } else i = skipValue(b, i);
    } else i = skipValue(b, i);
    i = ws(b, i);
    if (b[i] === 0x2c) {
      i = ws(b, i + 1);
      continue;
    }
    if (b[i] === 0x7d) return i + 1;
    return -1;
  }
}

/**
 * Whether the key string at `i` (its opening quote) is `want`: 1 yes, 0 no, -1 when it cannot be
 * told from its bytes alone (an escape in it, or not a string).
 */
function keyIs(b: Uint8Array, i: number, want: Uint8Array): number {
  if (b[i] !== QUOTE) return -1;
  let k = i + 1;
  let same = true;
  for (let j = 0; ; k++, j++) {
    const c = b[k];
    if (c === QUOTE) return same && j === want.length ? 1 : 0;
    if (c === BACKSLASH || c === undefined) return -1;
    if (same && (j >= want.length || c !== want[j])) same = false;
  }
}

/** The offset after the JSON whitespace at `i`. */
function ws(b: Uint8Array, i: number): number {
  for (;;) {
    const c = b[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else return i;
  }
}

/** The offset after the string whose opening quote is at `i`. */
function skipString(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return b.length;
}

/** The offset after the value at `i` (any JSON value). */
function skipValue(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c !== 0x7b && c !== 0x5b) {
    // A number or true/false/null: up to the next delimiter.
    while (i < b.length) {
      const d = b[i];
      if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
      i++;
    }
    return i;
  }
  let depth = 0;
  while (i < b.length) {
    const d = b[i];
    if (d === QUOTE) {
      i = skipString(b, i);
      continue;
    }
    if (d === 0x7b || d === 0x5b) depth++;
    else if (d === 0x7d || d === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return b.length;
}

/** Hex digit values of lowercase `0-9a-f` (JSON.stringify writes `\u00XX` in lowercase), else -1. */
const LOWER_HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) LOWER_HEX['0123456789abcdef'.charCodeAt(d)] = d;

/**
 * The offset after the string literal at `i` (its opening quote) when its bytes are exactly what
 * `JSON.stringify` writes for the string they stand for, else -1. JSON.stringify (ES2019) escapes
 * `"` and `\` as `\"` `\\`, backspace, form feed, LF, CR and tab as `\b \f \n \r \t`, the other
 * controls below U+0020 as `\u00xx` (lowercase), lone surrogates as `\udxxx`; everything else it
 * writes as it is. So any other escape (`\/`, `\u0041`, `\u000a`, uppercase hex, an escaped
 * surrogate, paired or not: a lone one is not taken, the text would not be well-formed) is not
 * its output. Raw controls cannot occur in valid JSON; raw non-ASCII is taken as it is.
 */
export function canonicalStringEnd(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) continue;
    const d = b[++i];
    // " \ b f n r t
    if (d === 0x22 || d === 0x5c || d === 0x6e || d === 0x74 || d === 0x72 || d === 0x62 || d === 0x66) continue;
    if (d !== 0x75 || b[i + 1] !== 0x30 || b[i + 2] !== 0x30) return -1;
    const hi = LOWER_HEX[b[i + 3]];
    const lo = LOWER_HEX[b[i + 4]];
    if (hi < 0 || hi > 1 || lo < 0) return -1;
    const code = hi * 16 + lo;
    // These have short forms, which JSON.stringify writes.
    if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return -1;
    i += 4;
  }
  return -1;
}
