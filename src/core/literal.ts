/**
 * Long transcript strings held as the UTF-8 bytes of their JSON literal (issue 9, bounded memory).
 *
 * V8 stores a string at 2 bytes per character as soon as one character is outside Latin-1 (a
 * curly quote or an arrow in a tool result: 97 % of the bench corpus's tool-result text), and a
 * reconstructed request block needs the string only as the bytes of `JSON.stringify(text)`,
 * which it hashes and, once compacted, keeps. A reader that replaces such a string by a
 * JsonLiteral right after parsing its line holds ~1 byte per character instead, and the blocks
 * built from it share those bytes instead of serializing and encoding the string again.
 *
 * `JSON.stringify` of a value holding a JsonLiteral writes the same text as with the string
 * (its `toJSON` gives the string back), so every serialization stays byte-identical; code that
 * needs the characters calls `textOf`.
 */

/** A string kept as the UTF-8 bytes of `JSON.stringify(text)`. */
export class JsonLiteral {
  /**
   * @param bytes UTF-8 of `JSON.stringify(text)`, quotes included
   * @param length `text.length` (UTF-16 code units)
   */
  constructor(
    readonly bytes: Buffer,
    readonly length: number,
  ) {}

  /** The string (what `JSON.stringify` serializes in place of this object). */
  toJSON(): string {
    return JSON.parse(this.bytes.toString('utf8')) as string;
  }

  /** The string. */
  toString(): string {
    return this.toJSON();
  }
}

/** Strings at least this long (UTF-16 code units) are worth a JsonLiteral. */
export const LITERAL_CHARS = 512;

/**
 * `text` as a JsonLiteral when it is long (LITERAL_CHARS) and well-formed (a lone surrogate
 * would not survive UTF-8, and Pi's sanitizing drops it), else `text` itself.
 */
export function literalOf(text: string): string | JsonLiteral {
  if (text.length < LITERAL_CHARS || !text.isWellFormed()) return text;
  return new JsonLiteral(Buffer.from(JSON.stringify(text), 'utf8'), text.length);
}

/** The characters of a string or JsonLiteral. */
export function textOf(t: string | JsonLiteral): string {
  return typeof t === 'string' ? t : t.toJSON();
}
