/**
 * Cheap reads for discovery: a window of a file's head or tail as complete lines, parsed as JSON
 * objects where they are. Only regular files are read (files.ts), never more than `len` bytes.
 */
import { stat } from 'node:fs/promises';
import { openRegular } from './files.js';
import { LineSplitter } from './linesplit.js';

/** Bytes read at each end of a file for discovery. */
export const PEEK_BYTES = 16 * 1024;

/** Reads up to `len` bytes at `pos`. @throws when the file cannot be opened or read */
export async function readAt(file: string, pos: number, len: number): Promise<Buffer> {
  const { handle } = await openRegular(file);
  try {
    const buf = Buffer.alloc(len);
    const { bytesRead } = await handle.read(buf, 0, len, pos);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Complete lines of a window (linesplit.ts: CRLF, a BOM at the file's start dropped), without a
 * tail window's partial first line (`fromStart` false) and without a last line that has no newline
 * (cut by the window, or still being written: the splitter's end() is not called).
 */
export function windowLines(buf: Buffer, fromStart: boolean): string[] {
  const lines = new LineSplitter().push(buf).map((l) => l.text);
  if (!fromStart) lines.shift();
  return lines;
}

/** A line as a JSON object, or undefined. */
export function objectOf(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The head window's complete lines and, for a file longer than the window, the tail window's. */
export async function peekLines(file: string, size: number, bytes = PEEK_BYTES): Promise<{ head: string[]; tail: string[] }> {
  const head = windowLines(await readAt(file, 0, Math.min(size, bytes)), true);
  if (size <= bytes) return { head, tail: [] };
  const pos = Math.max(bytes, size - bytes);
  return { head, tail: windowLines(await readAt(file, pos, size - pos), false) };
}

/** A regular, non-empty file's stat and its peeked lines (peekLines). */
export interface PeekedFile {
  /** Bytes. */
  size: number;
  /** Last modification, ms since the epoch. */
  mtimeMs: number;
  lines: { head: string[]; tail: string[] };
}

/**
 * Stats `file` and peeks at its head and tail windows (`bytes` each).
 * @returns null when the file is missing, not a regular file, empty, or cannot be read (never throws)
 */
export async function peekFile(file: string, bytes = PEEK_BYTES): Promise<PeekedFile | null> {
  let st;
  try {
    st = await stat(file);
  } catch {
    return null;
  }
  if (!st.isFile() || st.size === 0) return null;
  try {
    return { size: st.size, mtimeMs: st.mtimeMs, lines: await peekLines(file, st.size, bytes) };
  } catch {
    return null;
  }
}

/** How many JSON-object lines after line 1 must look like a host's before a damaged line 1 is forgiven. */
const NEXT_LINES = 3;

/**
 * True when the lines after line 1 are a host's own (`isHostLine`): used when line 1 (a host's
 * header) is damaged — malformed JSON, a NUL byte, a header of the wrong shape — so the file is
 * still recognized by what follows, and read with a diagnostic at line 1 instead of being taken for
 * another host's file. The first NEXT_LINES lines that parse as JSON objects must all match (lines
 * that do not parse are passed over), and at least one must exist.
 * @param lines a head window's complete lines (peekLines), line 1 first
 */
export function nextLinesAre(lines: readonly string[], isHostLine: (o: Record<string, unknown>) => boolean): boolean {
  let seen = 0;
  for (let i = 1; i < lines.length && seen < NEXT_LINES; i++) {
    const o = objectOf(lines[i]);
    if (!o) continue;
    if (!isHostLine(o)) return false;
    seen++;
  }
  return seen > 0;
}
