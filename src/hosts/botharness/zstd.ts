/**
 * Streaming reader of a DSH session log: a concatenation of zstd frames (reference/botharness.md
 * A.1 "DSH session log": the first frame is exactly the header line, each later frame one durable
 * append batch), read frame by frame into lines.
 *
 * Frames are found with the frame format of RFC 8878 §3.1 (magic, frame header, block headers,
 * optional checksum), so one damaged frame is skipped with a diagnostic and the frames after it are
 * still read; each complete frame is decompressed alone with fzstd. Only the current frame and the
 * bytes read past it are held in memory. A last frame cut short (the log is being written) yields
 * the lines of every complete frame and a warning; a frame's lines are never split from it, so a
 * half-written batch is not read.
 *
 * fzstd does not verify the optional XXH64 content checksum (it skips it): a frame whose bytes
 * were damaged is found when it fails to decode, when its size differs from the size its header
 * declares, or when its lines are not JSON.
 */
import { Decompress, decompress } from 'fzstd';
import type { Diagnostic } from '../../core/model.js';
import { openRegular } from '../files.js';
import { LineSplitter, type Line } from '../linesplit.js';

/** Zstandard frame magic number, little-endian (RFC 8878 §3.1.1). */
const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames: magic 0x184D2A50..0x184D2A5F (RFC 8878 §3.1.2). */
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
/** Block_Maximum_Size: no block decodes to more than 128 KiB (RFC 8878 §3.1.1.2.3). */
const BLOCK_MAX = 128 * 1024;
/** A frame larger than this (bytes, compressed or decompressed) is not decoded (a write batch is far smaller). */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;
/**
 * Bytes fzstd may move to decode a frame without a content size: it keeps a window buffer of the
 * frame's Window_Size and shifts it by each block (Uint8Array.copyWithin), so the cost is
 * blocks × window. Measured ~10 GB/s here: 16 GiB is a second or two. A frame over it is skipped.
 */
export const MAX_WINDOW_WORK = 16 * 1024 * 1024 * 1024;

/** One decoded line of the log. */
export interface LogLine {
  /** 1-based line number in the decompressed log. */
  line: number;
  text: string;
  /** 0-based index of the frame the line came from (null for an uncompressed log). */
  frame: number | null;
  /** Set when the line's bytes are not valid UTF-8: the byte offset of the first invalid sequence (lines.ts Line.invalidUtf8). */
  invalidUtf8?: number;
}

/** Where a frame ends, or why it cannot be delimited. */
type FrameEnd =
  | {
      kind: 'frame';
      end: number;
      skippable: boolean;
      contentSize: number | null;
      /** Upper bound of the decoded size from the block headers (bytes): a block decodes to at most 128 KiB. */
      maxContent: number;
      /** Window_Size from the Window_Descriptor (bytes), null for a single-segment frame (window = content size). */
      window: number | null;
      /** Number of blocks. */
      blocks: number;
    }
  | { kind: 'incomplete' }
  | { kind: 'bad'; message: string };

/**
 * Delimits the frame starting at `pos` of `buf` without decoding it.
 * @returns its end offset (exclusive), `incomplete` when `buf` ends inside it, `bad` when the bytes
 *   at `pos` are not a frame
 */
export function frameEnd(buf: Uint8Array, pos: number): FrameEnd {
  if (buf.length - pos < 4) return { kind: 'incomplete' };
  const magic = (buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16) | (buf[pos + 3] << 24)) >>> 0;
  if (((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_MAGIC) {
    if (buf.length - pos < 8) return { kind: 'incomplete' };
    const size = (buf[pos + 4] | (buf[pos + 5] << 8) | (buf[pos + 6] << 16) | (buf[pos + 7] << 24)) >>> 0;
    const end = pos + 8 + size;
    return end <= buf.length ? { kind: 'frame', end, skippable: true, contentSize: null, maxContent: 0, window: null, blocks: 0 } : { kind: 'incomplete' };
  }
  if (magic !== ZSTD_MAGIC) return { kind: 'bad', message: `no zstd frame magic (found 0x${magic.toString(16).padStart(8, '0')})` };
  let p = pos + 4;
  if (p >= buf.length) return { kind: 'incomplete' };
  const fhd = buf[p++];
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  if ((fhd >> 3) & 1) return { kind: 'bad', message: 'zstd frame header has its reserved bit set' };
  const checksum = (fhd >> 2) & 1;
  const dictBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = fcsFlag === 0 ? single : [0, 2, 4, 8][fcsFlag];
  const headerRest = (single ? 0 : 1) + dictBytes + fcsBytes;
  if (p + headerRest > buf.length) return { kind: 'incomplete' };
  // Window_Descriptor (RFC 8878 §3.1.1.1.2): Window_Size = 2^(10+Exponent) × (1 + Mantissa/8).
  let window: number | null = null;
  if (!single) {
    const wb = 2 ** (10 + (buf[p] >> 3));
    window = wb + (wb / 8) * (buf[p] & 7);
  }
  p += (single ? 0 : 1) + dictBytes;
  let contentSize: number | null = null;
  if (fcsBytes) {
    let v = 0;
    for (let i = fcsBytes - 1; i >= 0; i--) v = v * 256 + buf[p + i];
    contentSize = fcsBytes === 2 ? v + 256 : v;
  }
  p += fcsBytes;
  let maxContent = 0;
  let blocks = 0;
  for (;;) {
    if (p + 3 > buf.length) return { kind: 'incomplete' };
    const bh = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16);
    p += 3;
    const last = bh & 1;
    const type = (bh >> 1) & 3;
    const size = bh >>> 3;
    if (type === 3) return { kind: 'bad', message: 'zstd block of the reserved type' };
    blocks++;
    // Raw and RLE blocks decode to `size` bytes; a compressed one to at most Block_Maximum_Size.
    maxContent += type === 2 ? BLOCK_MAX : size;
    p += type === 1 ? 1 : size;
    if (p > buf.length) return { kind: 'incomplete' };
    if (last) break;
  }
  p += checksum ? 4 : 0;
  if (p > buf.length) return { kind: 'incomplete' };
  return { kind: 'frame', end: p, skippable: false, contentSize, maxContent, window, blocks };
}

/** A delimited, non-skippable frame (what frameEnd found). */
export type FrameInfo = Extract<FrameEnd, { kind: 'frame' }>;

/** What decoding one frame gave. */
export type FrameDecode =
  /** Decoded whole: `bytes` went to the sink (decodeFrame), this many. */
  | { kind: 'ok'; bytes: number }
  /** Not decoded, or stopped: it would exceed the limit. `detail` says by what. */
  | { kind: 'refused'; detail: string }
  /** fzstd failed on it (`detail`: its message). */
  | { kind: 'failed'; detail: string }
  /** It decoded to another size than its header declares. */
  | { kind: 'size'; decoded: number };

/** Smallest Window_Descriptor byte whose Window_Size is at least `bytes` (≥ 1 KiB, the format's least). */
function windowDescriptorFor(bytes: number): { byte: number; size: number } {
  for (let e = 0; e < 32; e++) {
    const wb = 2 ** (10 + e);
    for (let m = 0; m < 8; m++) {
      const size = wb + (wb / 8) * m;
      if (size >= bytes) return { byte: (e << 3) | m, size };
    }
  }
  return { byte: 0xff, size: Infinity };
}

/** Thrown from the stream handler to stop a decode at its budget. */
const OVER_BUDGET = new Error('over budget');

/**
 * Decodes one zstd frame (`bytes`, exactly the frame frameEnd delimited as `f`) to at most `limit`
 * bytes, in memory and time bounded by the limit:
 * - a frame whose header declares, or whose block headers allow, more than `limit` bytes is
 *   refused before any decoding;
 * - a frame with a content size is decoded into a buffer of that size;
 * - a frame without one is stream-decoded (fzstd Decompress) and stopped as soon as its output
 *   passes `limit`. Its window is first narrowed to what the frame can reference (no match reaches
 *   further back than the bytes it decodes, at most `maxContent`), so a small frame declaring a
 *   huge window neither allocates it nor shifts it per block; a frame whose blocks × window exceed
 *   MAX_WINDOW_WORK is refused.
 * The decoded bytes go to `sink` as they come (fzstd's output chunks, each a buffer of its own; a
 * frame with a content size in one chunk), never joined: a caller takes back what it was given when
 * the result is not `ok` (a stream decode stopped or failed after some chunks).
 */
export function decodeFrame(bytes: Uint8Array, f: FrameInfo, limit: number, sink: (chunk: Uint8Array) => void): FrameDecode {
  if (f.maxContent > limit || (f.contentSize ?? 0) > limit) return { kind: 'refused', detail: `decodes to ${f.contentSize ?? `up to ${f.maxContent}`} bytes (limit ${limit})` };
  if (f.contentSize !== null) {
    let out: Uint8Array;
    try {
      out = decompress(bytes);
    } catch (e) {
      return { kind: 'failed', detail: e instanceof Error ? e.message : String(e) };
    }
    if (out.length !== f.contentSize) return { kind: 'size', decoded: out.length };
    sink(out);
    return { kind: 'ok', bytes: out.length };
  }
  let input = bytes;
  let window = f.window ?? f.maxContent;
  const narrow = windowDescriptorFor(f.maxContent);
  if (f.window !== null && narrow.size < f.window) {
    input = Uint8Array.from(bytes);
    input[5] = narrow.byte; // the Window_Descriptor follows the magic and the Frame_Header_Descriptor
    window = narrow.size;
  }
  if (f.blocks * window > MAX_WINDOW_WORK) return { kind: 'refused', detail: `needs a ${window}-byte window shifted over ${f.blocks} blocks (limit ${MAX_WINDOW_WORK} bytes moved)` };
  let total = 0;
  const d = new Decompress((chunk) => {
    total += chunk.length;
    if (total > limit) throw OVER_BUDGET;
    sink(chunk);
  });
  try {
    d.push(input, true);
  } catch (e) {
    if (e === OVER_BUDGET) return { kind: 'refused', detail: `decodes to more than ${limit} bytes (stopped at the limit)` };
    return { kind: 'failed', detail: e instanceof Error ? e.message : String(e) };
  }
  return { kind: 'ok', bytes: total };
}

/** Next offset at or after `from` where a zstd frame magic starts, or -1. */
function nextMagic(buf: Uint8Array, from: number): number {
  for (let i = from; i + 4 <= buf.length; i++) {
    if (buf[i] === 0x28 && buf[i + 1] === 0xb5 && buf[i + 2] === 0x2f && buf[i + 3] === 0xfd) return i;
  }
  return -1;
}

/**
 * Yields the lines of a zstd-compressed DSH log, frame by frame, reading the file in chunks up to
 * its size at open time. Problems (a damaged frame, a cut last frame, bytes that are not a frame)
 * are pushed to `diagnostics` at the line where the next line would have been, with the frame
 * index and byte offset in the message; reading goes on with the next frame.
 * @throws FileRefused / the open's error when the file cannot be opened (files.ts)
 */
export async function* zstdLogLines(file: string, diagnostics: Diagnostic[], chunkBytes = 1024 * 1024, limit = MAX_FRAME_BYTES): AsyncGenerator<LogLine> {
  const { handle, size } = await openRegular(file);
  const stream = size > 0 ? handle.createReadStream({ start: 0, end: size - 1, highWaterMark: chunkBytes }) : null;
  if (!stream) await handle.close();
  let buf: Uint8Array = new Uint8Array(0);
  /** File offset of buf[0]. */
  let base = 0;
  let frame = 0;
  /**
   * The decompressed log's lines: frames' output chunks go straight in (a line may span chunks and
   * frames). A frame's lines are given only once it decoded whole (a damaged frame's are taken back).
   */
  const splitter = new LineSplitter();
  const diag = (severity: Diagnostic['severity'], message: string) =>
    diagnostics.push({ file, line: splitter.lines + 1, severity, message });
  const logLine = (l: Line, f: number): LogLine => {
    const line: LogLine = { line: l.line, text: l.text, frame: f };
    if (l.invalidUtf8 !== undefined) line.invalidUtf8 = l.invalidUtf8;
    return line;
  };

  /** Decodes every complete frame in buf; keeps the rest. `eof`: no more bytes will come. */
  const drain = function* (eof: boolean): Generator<LogLine> {
    let pos = 0;
    while (pos < buf.length) {
      const f = frameEnd(buf, pos);
      if (f.kind === 'incomplete') {
        if (!eof && buf.length - pos <= limit) break;
        diag(
          'warning',
          eof
            ? `truncated last zstd frame #${frame} at byte ${base + pos} (${buf.length - pos} of its bytes present; the log may still be being written): its lines are not read`
            : `zstd frame #${frame} at byte ${base + pos} is larger than ${limit} bytes; the rest of the log is not read`,
        );
        pos = buf.length;
        break;
      }
      if (f.kind === 'bad') {
        const next = nextMagic(buf, pos + 1);
        if (next < 0 && !eof) break; // the next frame may start in bytes not read yet
        const skip = next < 0 ? buf.length : next;
        // A frame whose header is there but whose blocks are not: a damaged frame; else stray bytes.
        if (nextMagic(buf, pos) === pos) diag('error', `corrupt zstd frame #${frame++} at byte ${base + pos}: ${f.message}; its lines are not read (${skip - pos} bytes skipped to the next frame; later line numbers count the lines read)`);
        else diag('error', `not a zstd frame at byte ${base + pos}: ${f.message}; ${skip - pos} bytes skipped`);
        pos = skip;
        continue;
      }
      const bytes = buf.subarray(pos, f.end);
      const at = base + pos;
      pos = f.end;
      if (f.skippable) continue;
      const index = frame++;
      // Bounded before and while decoding: a small frame of RLE blocks can expand ~32,000-fold.
      const before = splitter.mark();
      const lines: Line[] = [];
      const r = decodeFrame(bytes, f, limit, (chunk) => {
        for (const l of splitter.push(chunk)) lines.push(l);
      });
      if (r.kind !== 'ok') splitter.restore(before);
      if (r.kind === 'refused') {
        diag('error', `zstd frame #${index} at byte ${at} ${r.detail}; skipped`);
        continue;
      }
      if (r.kind === 'failed') {
        diag('error', `corrupt zstd frame #${index} at byte ${at} (${bytes.length} bytes): ${r.detail}; its lines are not read (later line numbers count the lines read)`);
        continue;
      }
      if (r.kind === 'size') {
        diag('error', `corrupt zstd frame #${index} at byte ${at}: decoded ${r.decoded} bytes, its header declares ${f.contentSize}; its lines are not read`);
        continue;
      }
      for (const l of lines) yield logLine(l, index);
    }
    buf = buf.subarray(pos);
    base += pos;
  };

  if (stream) {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const joined = new Uint8Array(buf.length + chunk.length);
      joined.set(buf, 0);
      joined.set(chunk, buf.length);
      buf = joined;
      yield* drain(false);
    }
  }
  yield* drain(true);
  for (const l of splitter.end()) yield logLine(l, frame - 1);
}

/** True when a file starts with the zstd frame magic (the caller read at least 4 bytes). */
export function isZstd(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd;
}

/**
 * Why a file named `….zstd` is not zstd, or null: its first 4 bytes (all of them, 1 to 4) are not
 * the zstd frame magic 28 b5 2f fd (RFC 8878 §3.1.1; a skippable frame's magic is zstd too). An
 * empty file, or one whose magic is right, is left to the frame reader (it may be being written).
 */
export function notZstdMessage(head: Uint8Array): string | null {
  if (head.length === 0 || isZstd(head)) return null;
  if (head.length >= 4) {
    const magic = (head[0] | (head[1] << 8) | (head[2] << 16) | (head[3] << 24)) >>> 0;
    if (((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_MAGIC) return null;
  } else if (ZSTD_HEAD.subarray(0, head.length).every((b, i) => b === head[i])) return null;
  const hex = Array.from(head.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
  return `not zstd (bad magic ${hex}; a zstd file starts with 28 b5 2f fd); not read`;
}

const ZSTD_HEAD = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd]);
