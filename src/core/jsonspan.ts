/**
 * Byte spans of the values inside a JSON document, for exact wire offsets.
 *
 * Scans UTF-8 bytes directly: JSON's structural characters are ASCII and never occur inside a
 * multi-byte UTF-8 sequence, so byte offsets are exact without decoding. Values deeper than
 * `maxDepth` are skipped, not materialized.
 */

/** A JSON value's extent in the document. Offsets are byte offsets, `end` exclusive. */
export interface Span {
  start: number;
  end: number;
  type: 'object' | 'array' | 'string' | 'number' | 'literal';
  /** Object members in document order (only within maxDepth). */
  members?: Member[];
  /** Array items in order (only within maxDepth). */
  items?: Span[];
}

/** An object member: `"key": value`. `keyStart` is the offset of the key's opening quote. */
export interface Member {
  key: string;
  keyStart: number;
  value: Span;
}

/** Thrown by scanSpans for a document nested deeper than its `depthLimit` (the scanner recurses per level). */
export class JsonTooDeep extends RangeError {
  constructor(readonly offset: number, limit: number) {
    super(`JSON nested deeper than ${limit} levels at byte ${offset}`);
  }
}

/**
 * Scans a JSON document into spans.
 * @param depthLimit deepest nesting scanned (the root is level 1); deeper throws JsonTooDeep
 *   instead of overflowing the stack
 * @throws SyntaxError with the byte offset when the document is not valid JSON (as far as scanned);
 *   JsonTooDeep past `depthLimit`
 */
export function scanSpans(buf: Uint8Array, maxDepth = 6, depthLimit = 512): Span {
  const s = new Scanner(buf, maxDepth, depthLimit);
  s.ws();
  const root = s.value(0);
  s.ws();
  if (s.pos !== buf.length) s.fail('trailing data');
  return root;
}

/**
 * The value of the first member named `key` of the root object, scanning only up to it (what
 * follows is not read: a request body's `model` is found without scanning its messages); values
 * before it are skipped, not materialized.
 * @returns undefined when the root is an object without such a member before its end
 * @throws SyntaxError when the document is not JSON up to that member or its root is not an
 *   object; JsonTooDeep past `depthLimit`
 */
export function rootMember(buf: Uint8Array, key: string, depthLimit = 512): Span | undefined {
  return new Scanner(buf, 0, depthLimit).rootMember(key);
}

/** The member value with `key`, or undefined. */
export function member(span: Span | undefined, key: string): Span | undefined {
  return span?.members?.find((m) => m.key === key)?.value;
}

/** A byte that can occur in a JSON number: `0-9 e E + - .`. */
function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d || c === 0x2e;
}

/** UTF-8 decoder shared by every call (decoding without `stream` keeps no state). */
const utf8 = new TextDecoder();
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

class Scanner {
  pos = 0;
  constructor(
    private readonly buf: Uint8Array,
    private readonly maxDepth: number,
    private readonly depthLimit: number,
  ) {}

  fail(what: string): never {
    throw new SyntaxError(`invalid JSON at byte ${this.pos}: ${what}`);
  }

  ws(): void {
    const b = this.buf;
    while (this.pos < b.length) {
      const c = b[this.pos];
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  value(depth: number): Span {
    const c = this.buf[this.pos];
    const start = this.pos;
    if ((c === 0x7b || c === 0x5b) && depth >= this.depthLimit) throw new JsonTooDeep(start, this.depthLimit);
    if (c === 0x7b) return this.object(depth);
    if (c === 0x5b) return this.array(depth);
    if (c === QUOTE) {
      this.skipString();
      return { start, end: this.pos, type: 'string' };
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      while (this.pos < this.buf.length && isNumberByte(this.buf[this.pos])) this.pos++;
      return { start, end: this.pos, type: 'number' };
    }
    for (const lit of ['true', 'false', 'null']) {
      if (this.matches(lit)) {
        this.pos += lit.length;
        return { start, end: this.pos, type: 'literal' };
      }
    }
    this.fail('unexpected character');
  }

  private matches(lit: string): boolean {
    for (let i = 0; i < lit.length; i++) if (this.buf[this.pos + i] !== lit.charCodeAt(i)) return false;
    return true;
  }

  private skipString(): void {
    const b = this.buf;
    let i = this.pos + 1;
    while (i < b.length) {
      const c = b[i];
      if (c === BACKSLASH) i += 2;
      else if (c === QUOTE) {
        this.pos = i + 1;
        return;
      } else i++;
    }
    this.pos = b.length;
    this.fail('unterminated string');
  }

  /** The root object's first member named `key` (see rootMember). */
  rootMember(key: string): Span | undefined {
    this.ws();
    if (this.buf[this.pos] !== 0x7b) this.fail('expected an object');
    this.pos++;
    this.ws();
    if (this.buf[this.pos] === 0x7d) return undefined;
    for (;;) {
      this.ws();
      if (this.buf[this.pos] !== QUOTE) this.fail('expected key');
      const keyStart = this.pos;
      this.skipString();
      const k = JSON.parse(utf8.decode(this.buf.subarray(keyStart, this.pos))) as string;
      this.ws();
      if (this.buf[this.pos] !== 0x3a) this.fail('expected colon');
      this.pos++;
      this.ws();
      const value = this.value(1);
      if (k === key) return value;
      this.ws();
      if (this.separator(0x7d)) return undefined;
    }
  }

  /**
   * After a member or item: true at the closing bracket `close`, false at a comma (both passed);
   * anything else fails at its own offset.
   */
  private separator(close: number): boolean {
    const c = this.buf[this.pos];
    if (c !== close && c !== 0x2c) this.fail(close === 0x7d ? 'expected , or }' : 'expected , or ]');
    this.pos++;
    return c === close;
  }

  private object(depth: number): Span {
    const start = this.pos++;
    const keep = depth < this.maxDepth;
    const members: Member[] | undefined = keep ? [] : undefined;
    this.ws();
    if (this.buf[this.pos] === 0x7d) {
      this.pos++;
      return { start, end: this.pos, type: 'object', members };
    }
    for (;;) {
      this.ws();
      if (this.buf[this.pos] !== QUOTE) this.fail('expected key');
      const keyStart = this.pos;
      this.skipString();
      const key = keep ? (JSON.parse(utf8.decode(this.buf.subarray(keyStart, this.pos))) as string) : '';
      this.ws();
      if (this.buf[this.pos] !== 0x3a) this.fail('expected colon');
      this.pos++;
      this.ws();
      const value = this.value(depth + 1);
      members?.push({ key, keyStart, value });
      this.ws();
      if (this.separator(0x7d)) break;
    }
    return { start, end: this.pos, type: 'object', members };
  }

  private array(depth: number): Span {
    const start = this.pos++;
    const items: Span[] | undefined = depth < this.maxDepth ? [] : undefined;
    this.ws();
    if (this.buf[this.pos] === 0x5d) {
      this.pos++;
      return { start, end: this.pos, type: 'array', items };
    }
    for (;;) {
      this.ws();
      const v = this.value(depth + 1);
      items?.push(v);
      this.ws();
      if (this.separator(0x5d)) break;
    }
    return { start, end: this.pos, type: 'array', items };
  }
}

/**
 * The JSON path (e.g. `.content[0].text`) of the innermost value that contains byte `offset` of a
 * JSON text, relative to the value the text starts with. Tolerant: works on a fragment that is
 * not closed (a block whose bytes start at a message and stop inside it) and never throws.
 */
export function pathAtOffset(buf: Uint8Array, offset: number): string {
  type Frame = { obj: true; key: string | null; expectKey: boolean } | { obj: false; index: number };
  const stack: Frame[] = [];
  const render = () =>
    stack
      .map((f) =>
        f.obj
          ? f.key === null
            ? ''
            : /^[A-Za-z_$][\w$]*$/.test(f.key)
              ? `.${f.key}`
              : `[${JSON.stringify(f.key)}]`
          : `[${f.index}]`,
      )
      .join('');
  const end = Math.min(offset, buf.length);
  let i = 0;
  while (i < end) {
    const c = buf[i];
    const top = stack[stack.length - 1];
    if (c === QUOTE) {
      let j = i + 1;
      while (j < buf.length && buf[j] !== QUOTE) j += buf[j] === BACKSLASH ? 2 : 1;
      if (top?.obj && top.expectKey) {
        if (offset <= j) return render();
        try {
          top.key = JSON.parse(utf8.decode(buf.subarray(i, j + 1))) as string;
        } catch {
          top.key = '?';
        }
        top.expectKey = false;
      } else if (offset <= j) return render();
      i = j + 1;
      continue;
    }
    if (c === 0x7b) stack.push({ obj: true, key: null, expectKey: true });
    else if (c === 0x5b) stack.push({ obj: false, index: 0 });
    else if (c === 0x7d || c === 0x5d) stack.pop();
    else if (c === 0x2c && top) {
      if (top.obj) {
        top.key = null;
        top.expectKey = true;
      } else top.index++;
    }
    i++;
  }
  return render();
}
