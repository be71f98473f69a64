/**
 * Streaming line reader for JSONL transcripts, shared by every JSONL host reader.
 *
 * Reads the file in chunks (`fs.createReadStream`), never as one string: only the current line is
 * held in memory. Lines are split on LF; a CR before the LF (CRLF files) is dropped; a UTF-8 BOM at
 * the start of the file is dropped; a last line without a newline is still yielded (with
 * `eol: false`), since hosts append line by line and a reader may catch a line half written.
 * Bytes are decoded as UTF-8 per whole line, so multi-byte characters split across chunks are safe;
 * a line whose bytes are not valid UTF-8 (decoded with U+FFFD in their place) is marked
 * (`invalidUtf8`), for a warning at its line: only lines whose text holds a U+FFFD are checked.
 * Only a regular file is read (files.ts: a FIFO, socket, directory or device is refused), and only
 * up to its size when opened: a file that keeps growing ends there.
 */
import { openRegular } from './files.js';
import { depthMessage, parseBounded } from '../core/depth.js';
import type { Diagnostic } from '../core/model.js';

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
  /** Byte offset in the file just after the line (after its LF; at end of data when `eol` is false). */
  end?: number;
  /**
   * Set when the line's bytes are not valid UTF-8: the 0-based byte offset in the line of the first
   * invalid sequence (`text` holds U+FFFD in place of each, as TextDecoder replaces them).
   */
  invalidUtf8?: number;
  /**
   * Only from readJsonLineBatches' reading: the bytes `text` was decoded from (without the line
   * terminator and a first line's BOM). A view of the read buffer: copy what is kept.
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

/** The warning for a line whose bytes are not valid UTF-8 (`at`: Line.invalidUtf8). */
export function invalidUtf8Warning(file: string, line: number, at: number): Diagnostic {
  return {
    file,
    line,
    severity: 'warning',
    message: `invalid UTF-8 at byte ${at} of the line replaced by U+FFFD; the request's bytes are not the host's`,
  };
}

export interface ReadLinesOptions {
  /** Chunk size of the read stream (bytes). Default 64 KiB. */
  chunkBytes?: number;
  /**
   * Lines longer than this (bytes) are not decoded; they are yielded with `oversized` set and an
   * empty text, so a huge line cannot exhaust memory. Default 256 MiB.
   */
  maxLineBytes?: number;
  /** Byte offset to start at (a line start; default 0). A BOM is only dropped at offset 0. */
  start?: number;
  /** Number of the first line read (default 1), for reads that continue at `start`. */
  firstLine?: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Yields the lines of a file in order.
 * @throws FileRefused (files.ts) for anything but a regular file; the stream's error when the file
 *   cannot be opened or read (ENOENT, EACCES, …)
 */
export async function* readLines(file: string, opts: ReadLinesOptions = {}): AsyncGenerator<Line> {
  for await (const batch of readLineBatches(file, opts)) for (const l of batch) yield l;
}

/**
 * The lines of a file in order, as readLines yields them, one array per chunk read (the lines
 * that end in it; a chunk inside a long line gives none): a reader that takes them a chunk at a
 * time awaits once per chunk instead of once per line (two async generators per line were ~5 %
 * of a Pi session's read).
 * @throws as readLines
 */
export function readLineBatches(file: string, opts: ReadLinesOptions = {}): AsyncGenerator<Line[]> {
  return lineBatches(file, opts, false);
}

/** readLineBatches; with `keepBytes`, each line read as valid UTF-8 carries its bytes (Line.bytes). */
async function* lineBatches(file: string, opts: ReadLinesOptions, keepBytes: boolean): AsyncGenerator<Line[]> {
  const maxLineBytes = opts.maxLineBytes ?? 256 * 1024 * 1024;
  const { handle, size } = await openRegular(file);
  const from = opts.start ?? 0;
  if (size <= from) {
    await handle.close();
    return;
  }
  // The stream closes the handle when it ends or is destroyed (autoClose).
  const stream = handle.createReadStream({ start: from, end: size - 1, highWaterMark: opts.chunkBytes ?? 64 * 1024 });
  const decoder = new TextDecoder('utf-8');
  let parts: Buffer[] = [];
  let partBytes = 0;
  let dropping = false;
  let lineNo = (opts.firstLine ?? 1) - 1;
  let first = from === 0;
  /** File offset of the current chunk's first byte. */
  let base = from;

  const finish = (last: Buffer, eol: boolean, end: number): Line => {
    lineNo++;
    if (dropping || partBytes + last.length > maxLineBytes) {
      const size = partBytes + last.length;
      parts = [];
      partBytes = 0;
      dropping = false;
      return { line: lineNo, text: '', eol, oversized: size, end };
    }
    let buf = parts.length === 0 ? last : Buffer.concat([...parts, last]);
    parts = [];
    partBytes = 0;
    if (buf.length > 0 && buf[buf.length - 1] === CR) buf = buf.subarray(0, buf.length - 1);
    if (first) {
      first = false;
      if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    }
    const text = decoder.decode(buf);
    const bad = invalidUtf8At(text, buf);
    if (bad !== undefined) return { line: lineNo, text, eol, end, invalidUtf8: bad };
    return keepBytes ? { line: lineNo, text, eol, end, bytes: buf } : { line: lineNo, text, eol, end };
  };

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = 0;
    const batch: Line[] = [];
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      if (nl < 0) break;
      batch.push(finish(chunk.subarray(start, nl), true, base + nl + 1));
      start = nl + 1;
    }
    if (batch.length > 0) yield batch;
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      partBytes += rest.length;
      if (dropping || partBytes > maxLineBytes) {
        dropping = true;
        parts = [];
      } else {
        // Copy: the stream may reuse its buffers.
        parts.push(Buffer.from(rest));
      }
    }
    base += chunk.length;
  }
  if (partBytes > 0) {
    // The pending bytes (kept in `parts`, or only counted when dropping) form the last line.
    yield [finish(Buffer.alloc(0), false, size)];
  }
}

/**
 * Result of parsing one JSONL line. `warnings`: the value was read, but its bytes were not valid
 * UTF-8 (replaced by U+FFFD), or it was nested deeper than the bound (core/depth.ts) and cut there.
 */
export type JsonLine = { ok: true; value: unknown; warnings?: Diagnostic[] } | { ok: false; diagnostic: Diagnostic };

/**
 * Parses one line as JSON; never throws. A failure gives a Diagnostic with the file and line:
 * `warning` for a last line without newline (a host may be writing it right now), `error`
 * otherwise.
 */
export function parseJsonLine(file: string, l: Line): JsonLine {
  if (l.oversized !== undefined) {
    return {
      ok: false,
      diagnostic: { file, line: l.line, severity: 'error', message: `line too long (${l.oversized} bytes); skipped` },
    };
  }
  try {
    const { value, cut } = parseBounded(l.text);
    if (!cut && l.invalidUtf8 === undefined) return { ok: true, value };
    const warnings: Diagnostic[] = [];
    if (l.invalidUtf8 !== undefined) warnings.push(invalidUtf8Warning(file, l.line, l.invalidUtf8));
    if (cut) warnings.push({ file, line: l.line, severity: 'warning', message: depthMessage(cut) });
    return { ok: true, value, warnings };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const truncated = !l.eol;
    return {
      ok: false,
      diagnostic: {
        file,
        line: l.line,
        severity: truncated ? 'warning' : 'error',
        message: truncated
          ? `truncated last line (no newline at end of file; the host may still be writing it): ${why}`
          : `malformed JSON line skipped: ${why}`,
      },
    };
  }
}

/**
 * A parsed JSONL line: its value (with warnings: invalid UTF-8, cut), or the diagnostic explaining
 * why it was skipped. `bytes`: the line's bytes (Line.bytes), given by readJsonLineBatches for a
 * value read without warnings (its bytes are then exactly the UTF-8 of the text parsed).
 */
export type JsonLineResult = { line: number; value: unknown; warnings?: Diagnostic[]; bytes?: Uint8Array } | { line: number; diagnostic: Diagnostic };

/**
 * Yields every non-blank line of a JSONL file parsed as JSON, or a diagnostic for a line that is
 * not JSON. Whitespace-only lines are skipped silently.
 * @throws when the file cannot be opened or read
 */
export async function* readJsonLines(file: string, opts?: ReadLinesOptions): AsyncGenerator<JsonLineResult> {
  for await (const batch of jsonLineBatches(file, opts ?? {}, false)) for (const r of batch) yield r;
}

/**
 * The results readJsonLines yields, one array per chunk read (readLineBatches; arrays may be
 * empty), a value read without warnings with its line's bytes (`bytes`: a view of the read
 * buffer, to be copied if kept).
 * @throws as readJsonLines
 */
export function readJsonLineBatches(file: string, opts?: ReadLinesOptions): AsyncGenerator<JsonLineResult[]> {
  return jsonLineBatches(file, opts ?? {}, true);
}

async function* jsonLineBatches(file: string, opts: ReadLinesOptions, keepBytes: boolean): AsyncGenerator<JsonLineResult[]> {
  for await (const lines of lineBatches(file, opts, keepBytes)) {
    const batch: JsonLineResult[] = [];
    for (const l of lines) {
      if (l.oversized === undefined && l.text.trim() === '') continue;
      const r = parseJsonLine(file, l);
      if (!r.ok) batch.push({ line: l.line, diagnostic: r.diagnostic });
      else if (r.warnings) batch.push({ line: l.line, value: r.value, warnings: r.warnings });
      else batch.push(l.bytes ? { line: l.line, value: r.value, bytes: l.bytes } : { line: l.line, value: r.value });
    }
    yield batch;
  }
}
