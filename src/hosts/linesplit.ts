/**
 * The one line splitter of JSONL and log text: pure (no fs), streaming. Chunks of bytes go in as
 * they come — from a file's read stream, a decompressor's output, a buffer in memory — and complete
 * lines come out, numbered, with their byte offsets.
 *
 * Lines are split on LF; a CR before the LF (CRLF files) is dropped, and so is a CR ending a last
 * line without LF; a UTF-8 BOM starting a line is dropped (a file's BOM; one inside the data, from
 * files joined with `cat`, as the reader's TextDecoder always dropped it, now from the bytes as well as
 * the text, so Line.bytes are the text's); a last line without a newline is
 * still given (by `end()`, with `eol: false`), since hosts append line by line and a reader may
 * catch a line half written; an empty data end after a final LF gives no line. Bytes are decoded as
 * UTF-8 per whole line, so a line or a multi-byte character split across chunks is safe; a line
 * whose bytes are not valid UTF-8 (decoded with U+FFFD in their place) is marked (`invalidUtf8`).
 * A line longer than `maxLineBytes` is counted, not held (`oversized`).
 */

/** One line of a text file. */
export interface Line {
  /** 1-based line number. */
  line: number;
  /** The line's text without its line terminator (LF or CRLF). Empty when `oversized` is set. */
  text: string;
  /** False for a last line that ends at end of file without a newline (possibly still being written). */
  eol: boolean;
  /** Set when the line was longer than `maxLineBytes`: its length in bytes; `text` is then empty. */
  oversized?: number;
  /**
   * Byte offset in the data just after the line (after its LF; at end of data when `eol` is false).
   * The line starts at the previous line's `end` (the first line at the splitter's `start`).
   */
  end?: number;
  /**
   * Set when the line's bytes are not valid UTF-8: the 0-based byte offset in the line of the first
   * invalid sequence (`text` holds U+FFFD in place of each, as TextDecoder replaces them).
   */
  invalidUtf8?: number;
  /**
   * Only with the `keepBytes` option, for a line read as valid UTF-8: the bytes `text` was decoded
   * from (without the line terminator and a leading BOM). A view of the chunk: copy what is kept.
   */
  bytes?: Uint8Array;
}

/**
 * Byte offset of the first ill-formed UTF-8 sequence in `b` (the Unicode Standard's table 3-7 of
 * well-formed byte sequences: no overlong forms, no surrogates, nothing above U+10FFFF), or -1.
 */
export function firstInvalidUtf8(b: Uint8Array): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + n >= b.length) return i;
    if (b[i + 1] < lo || b[i + 1] > hi) return i;
    for (let k = 2; k <= n; k++) if ((b[i + k] & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return -1;
}

/** Where a line's text holds U+FFFD, the offset of its first invalid UTF-8 byte sequence, else undefined (a real U+FFFD is valid). */
export function invalidUtf8At(text: string, bytes: Uint8Array): number | undefined {
  if (!text.includes('\uFFFD')) return undefined;
  const at = firstInvalidUtf8(bytes);
  return at < 0 ? undefined : at;
}

export interface LineSplitterOptions {
  /**
   * Lines longer than this (bytes) are not decoded; they are given with `oversized` set and an
   * empty text, so a huge line cannot exhaust memory. Default 256 MiB.
   */
  maxLineBytes?: number;
  /** Byte offset of the first chunk's first byte (a line start; default 0). */
  start?: number;
  /** Number of the first line (default 1), for reads that continue at `start`. */
  firstLine?: number;
  /** Give each line read as valid UTF-8 its bytes (Line.bytes). Default false. */
  keepBytes?: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);

/**
 * Splits a stream of chunks into lines. `push` each chunk in order, then call `end` once; each
 * returns the lines completed by it, in order. Never throws on any input.
 */
export class LineSplitter {
  private readonly maxLineBytes: number;
  private readonly keepBytes: boolean;
  /** A BOM is dropped from the bytes (finish), so the decoder must not drop one more. */
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Bytes of the current, unfinished line (copies: a chunk's buffer may be reused). */
  private parts: Uint8Array[] = [];
  private partBytes = 0;
  /** The current line passed maxLineBytes: its bytes are only counted. */
  private dropping = false;
  private lineNo: number;
  /** Data offset of the next chunk's first byte. */
  private base: number;

  constructor(opts: LineSplitterOptions = {}) {
    this.maxLineBytes = opts.maxLineBytes ?? 256 * 1024 * 1024;
    this.keepBytes = opts.keepBytes ?? false;
    this.base = opts.start ?? 0;
    this.lineNo = (opts.firstLine ?? 1) - 1;
  }

  /** Number of the last line given (0 before the first). */
  get lines(): number {
    return this.lineNo;
  }

  /** The state, to go back to with `restore` (e.g. when the chunks of a damaged zstd frame are taken back). */
  mark(): LineSplitterMark {
    return { parts: this.parts.slice(), partBytes: this.partBytes, dropping: this.dropping, lineNo: this.lineNo, base: this.base };
  }

  /** Goes back to a state `mark` gave (the lines given since are given again by later pushes). */
  restore(m: LineSplitterMark): void {
    this.parts = m.parts.slice();
    this.partBytes = m.partBytes;
    this.dropping = m.dropping;
    this.lineNo = m.lineNo;
    this.base = m.base;
  }

  /** Takes the next chunk of bytes (not kept: the caller may reuse its buffer); returns the lines it completes. */
  push(bytes: Uint8Array): Line[] {
    const out: Line[] = [];
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(LF, start);
      if (nl < 0) break;
      out.push(this.finish(bytes.subarray(start, nl), true, this.base + nl + 1));
      start = nl + 1;
    }
    if (start < bytes.length) {
      const rest = bytes.subarray(start);
      this.partBytes += rest.length;
      if (this.dropping || this.partBytes > this.maxLineBytes) {
        this.dropping = true;
        this.parts = [];
      } else this.parts.push(Buffer.from(rest));
    }
    this.base += bytes.length;
    return out;
  }

  /** Ends the data: returns the last line when it has no newline (`eol: false`), else nothing. */
  end(): Line[] {
    if (this.partBytes === 0) return [];
    return [this.finish(EMPTY, false, this.base)];
  }

  private finish(last: Uint8Array, eol: boolean, end: number): Line {
    this.lineNo++;
    const lineNo = this.lineNo;
    if (this.dropping || this.partBytes + last.length > this.maxLineBytes) {
      const size = this.partBytes + last.length;
      this.parts = [];
      this.partBytes = 0;
      this.dropping = false;
      return { line: lineNo, text: '', eol, oversized: size, end };
    }
    let buf = this.parts.length === 0 ? last : Buffer.concat([...this.parts, last]);
    this.parts = [];
    this.partBytes = 0;
    if (buf.length > 0 && buf[buf.length - 1] === CR) buf = buf.subarray(0, buf.length - 1);
    if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    const text = this.decoder.decode(buf);
    const bad = invalidUtf8At(text, buf);
    if (bad !== undefined) return { line: lineNo, text, eol, end, invalidUtf8: bad };
    return this.keepBytes ? { line: lineNo, text, eol, end, bytes: buf } : { line: lineNo, text, eol, end };
  }
}

/** A LineSplitter's state (LineSplitter.mark). */
export interface LineSplitterMark {
  readonly parts: Uint8Array[];
  readonly partBytes: number;
  readonly dropping: boolean;
  readonly lineNo: number;
  readonly base: number;
}

/** Every line of `data` (one chunk, then the end): LineSplitter's lines of a whole buffer. */
export function splitLines(data: Uint8Array, opts?: LineSplitterOptions): Line[] {
  const s = new LineSplitter(opts);
  const out = s.push(data);
  for (const l of s.end()) out.push(l);
  return out;
}
