/**
 * Streaming line reader for JSONL transcripts, shared by every JSONL host reader.
 *
 * Reads the file in chunks (`fs.createReadStream`), never as one string: only the current line is
 * held in memory. The chunks go through the one line splitter (linesplit.ts: LF and CRLF, a BOM
 * dropped, a last line without newline yielded with `eol: false`, UTF-8 decoded per whole line,
 * invalid UTF-8 marked for a warning at its line).
 * Only a regular file is read (files.ts: a FIFO, socket, directory or device is refused), and only
 * up to its size when opened: a file that keeps growing ends there.
 */
import { openRegular } from './files.js';
import { depthMessage, parseBounded } from '../core/depth.js';
import type { Diagnostic } from '../core/model.js';
import { LineSplitter, type Line } from './linesplit.js';

export { firstInvalidUtf8, type Line } from './linesplit.js';

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
  /** readLineBatches only: give each line read as valid UTF-8 its bytes (Line.bytes, a view of the read buffer). */
  keepBytes?: boolean;
}

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
  return lineBatches(file, opts, opts.keepBytes ?? false);
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
  const splitter = new LineSplitter({ maxLineBytes, start: from, firstLine: opts.firstLine, keepBytes });
  // From the file's start, the lines are held until they show text (BinarySniff); then passed on as they come.
  const sniff = from === 0 ? new BinarySniff() : null;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const batch = sniff?.holding ? sniff.take(file, splitter.push(chunk), false) : splitter.push(chunk);
    if (batch.length > 0) yield batch;
  }
  const last = sniff?.holding ? sniff.take(file, splitter.end(), true) : splitter.end();
  if (last.length > 0) yield last;
}

/** Non-blank lines at a file's start that BinarySniff looks at: this many lines, none JSON and most binary, make it no text file. */
export const SNIFF_LINES = 32;
/** Bytes of held lines past which BinarySniff stops looking (takes the file as text): holding stays bounded. */
const SNIFF_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A file that is no text/JSONL file at all (random bytes, an image, a compressed file named
 * `.jsonl`): read from its start, none of its first SNIFF_LINES non-blank lines (of all of them
 * when it has fewer) is JSON, and at least half of them hold a NUL byte or invalid UTF-8.
 */
export class NotTextFile extends Error {
  constructor(
    readonly file: string,
    /** Non-blank lines looked at. */
    readonly lines: number,
    /** Of those, the lines holding a NUL byte or invalid UTF-8. */
    readonly binary: number,
  ) {
    const which = lines === SNIFF_LINES ? `its first ${lines} non-blank lines` : lines === 1 ? 'its only non-blank line' : `its ${lines} non-blank lines`;
    const held = lines === 1 ? 'it holds' : binary === lines ? 'all hold' : `${binary} hold`;
    super(`not a text/JSONL session: ${lines === 1 ? `${which} is not JSON` : `none of ${which} is JSON`} and ${held} NUL bytes or invalid UTF-8 (binary data?); not read`);
    this.name = 'NotTextFile';
  }
}

/**
 * Whether a line ends BinarySniff's check as JSON: one that parses, or, not parsed twice, a text
 * line (no NUL byte, valid UTF-8) that starts as an object or array does, and an oversized line.
 */
function jsonLine(l: Line, binary: boolean): boolean {
  if (l.oversized !== undefined || (!binary && /^\s*[[{]/.test(l.text))) return true;
  try {
    JSON.parse(l.text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The check of a file's start for binary data, shared by every JSONL reader (readLines and
 * readJsonLines from offset 0; readJsonLines and the hosts' readers over readLines parse every
 * line as JSON): the lines are held until one is JSON, which ends the check and passes them all
 * on. SNIFF_LINES non-blank lines none of which is JSON, at least half of them binary (a NUL
 * byte or invalid UTF-8: random bytes give a line every ~256 bytes, a few of them plain ASCII),
 * throw NotTextFile before any line is passed on: one diagnostic instead of one per line; so
 * does a shorter file that ends so. It cannot fire on a real session with a few damaged lines:
 * those are followed by lines that parse (a damaged line 1 — cut, a NUL byte before it — by
 * line 2); a file of text that is not JSON (a log named `.jsonl`) is read as before, a
 * diagnostic per line. Holding past SNIFF_MAX_BYTES ends the check.
 */
class BinarySniff {
  holding = true;
  private held: Line[] = [];
  private heldBytes = 0;
  private lines = 0;
  private binary = 0;

  /** The lines to pass on for `lines` (none while holding); `end`: the file ended after them. @throws NotTextFile */
  take(file: string, lines: Line[], end: boolean): Line[] {
    for (const l of lines) {
      this.held.push(l);
      if (!this.holding) continue;
      if (l.oversized === undefined && l.text.trim() === '') continue;
      const binary = l.invalidUtf8 !== undefined || l.text.includes('\u0000');
      if (jsonLine(l, binary)) {
        this.holding = false;
        continue;
      }
      this.lines++;
      if (binary) this.binary++;
      this.heldBytes += l.text.length;
      if (this.lines >= SNIFF_LINES) this.decide(file);
      else if (this.heldBytes > SNIFF_MAX_BYTES) this.holding = false;
    }
    if (end && this.holding && this.lines > 0) this.decide(file);
    if (this.holding && !end) return [];
    this.holding = false;
    const out = this.held;
    this.held = [];
    return out;
  }

  /** No JSON line in the lines looked at: binary data when at least half are binary, else text (the check ends). */
  private decide(file: string): void {
    if (2 * this.binary >= this.lines) throw new NotTextFile(file, this.lines, this.binary);
    this.holding = false;
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
