/**
 * The file layout the cache's binary files share (output entries, run manifests, tail states):
 * `<data><JSON>\n<JSON byte length, LEN_DIGITS decimal digits>\n`. The data is written first as it
 * is produced; the JSON that describes it, written last, is found from the file's end.
 *
 * Node builtins only: the CLI's warm entry (src/cli/warm.ts) reads these files without loading
 * the analysis bundle.
 */
import { writeSync } from 'node:fs';

/** Width of the length field (decimal digits). */
export const LEN_DIGITS = 16;
/** Bytes of the length field with its newline: what `trailerAt` is given. */
export const LEN_FIELD = LEN_DIGITS + 1;

/** The trailer to append after the data: `json`, a newline, and the length field. */
export function trailerBytes(json: string): Buffer {
  const text = `${json}\n`;
  return Buffer.from(`${text}${String(Buffer.byteLength(text, 'utf8')).padStart(LEN_DIGITS, '0')}\n`, 'utf8');
}

/**
 * Where the trailer's JSON (with its newline) is in a file of `size` bytes whose last LEN_FIELD
 * bytes are `field`: `[start, start + len)`; `start` is also the data's length. Null when the
 * field is not a length field or names more bytes than the file has.
 */
export function trailerAt(field: Uint8Array, size: number): { start: number; len: number } | null {
  if (field.length !== LEN_FIELD || size < LEN_FIELD + 2) return null;
  const text = Buffer.from(field.buffer, field.byteOffset, field.byteLength).toString('latin1');
  if (!/^\d{16}\n$/.test(text)) return null;
  const len = Number(text.slice(0, LEN_DIGITS));
  const start = size - LEN_FIELD - len;
  return len < 2 || start < 0 ? null : { start, len };
}

/** Writes every byte of `data` to `fd` at its position (writeSync may write less than asked). */
export function writeAllSync(fd: number, data: Uint8Array): void {
  for (let at = 0; at < data.length; ) at += writeSync(fd, data, at, data.length - at);
}
