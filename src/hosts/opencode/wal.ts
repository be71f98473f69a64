/**
 * SQLite write-ahead log, applied in memory.
 *
 * OpenCode 1.18 opens its database with `journal_mode=WAL` (shared/reference/opencode.md §1.1):
 * the rows of a live session sit in `opencode.db-wal` until a checkpoint copies them into
 * `opencode.db`. sql.js (WebAssembly SQLite) reads a database image from memory and cannot see a
 * WAL file, so this module does what SQLite's WAL recovery does, without writing anything:
 * it keeps the frames up to the last valid commit frame and lays their pages over the main image.
 *
 * Format (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte header
 * (magic 0x377f0682/0x377f0683 — the low bit selects big-endian checksums —, format version
 * 3007000, page size, checkpoint sequence, salt-1, salt-2, checksum-1, checksum-2), then frames of
 * a 24-byte header (page number, database size in pages after a commit or 0, salt-1, salt-2,
 * checksum-1, checksum-2) followed by one page. A frame is valid when its salts equal the header's
 * and its cumulative checksum (over the first 8 bytes of the frame header and the page, seeded with
 * the previous frame's checksum) matches. Frames after the last valid commit frame belong to an
 * unfinished transaction and are ignored.
 */

const WAL_HEADER = 32;
const FRAME_HEADER = 24;
const MAGIC_LE = 0x377f0682;
const MAGIC_BE = 0x377f0683;

/** The result of laying a WAL over a main database image. */
export interface WalApplied {
  /** The database image with every committed frame applied (a new buffer when frames were applied). */
  image: Uint8Array;
  /** Frames applied (up to and including the last valid commit frame). */
  frames: number;
  /** Commit frames among them (= transactions). */
  commits: number;
  /** Valid frames after the last commit frame, ignored: a transaction still being written. */
  ignoredFrames: number;
  /** Frames after the first invalid one (an older WAL generation or a torn write), ignored. */
  staleFrames: number;
  /** Why the WAL was ignored as a whole, if it was (bad header, unknown version…). */
  problem?: string;
  /** Why the frames from some point on were ignored although their checksums hold (an impossible database size). */
  cutShort?: string;
}

/** SQLite's WAL checksum over `data` (length a multiple of 8), continuing from `s`. */
function checksum(data: Uint8Array, bigEndian: boolean, s: [number, number]): [number, number] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let s0 = s[0];
  let s1 = s[1];
  for (let i = 0; i + 8 <= data.length; i += 8) {
    const x0 = view.getUint32(i, !bigEndian);
    const x1 = view.getUint32(i + 4, !bigEndian);
    s0 = (s0 + x0 + s1) >>> 0;
    s1 = (s1 + x1 + s0) >>> 0;
  }
  return [s0, s1];
}

/** Page size from a main database header (offset 16, big-endian u16; 1 means 65536), or 0. */
export function mainPageSize(main: Uint8Array): number {
  if (main.length < 100) return 0;
  const v = (main[16] << 8) | main[17];
  return v === 1 ? 65536 : v;
}

/**
 * Applies the committed frames of `wal` to `main`. Never throws on malformed input: a WAL that
 * cannot be used is reported in `problem` and the main image is returned unchanged.
 */
export function applyWal(main: Uint8Array, wal: Uint8Array): WalApplied {
  const none = (problem?: string): WalApplied => ({ image: main, frames: 0, commits: 0, ignoredFrames: 0, staleFrames: 0, problem });
  if (wal.length === 0) return none();
  if (wal.length < WAL_HEADER) return none(`WAL header truncated (${wal.length} bytes)`);
  const hv = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const magic = hv.getUint32(0);
  if (magic !== MAGIC_LE && magic !== MAGIC_BE) return none(`not a WAL file (magic 0x${magic.toString(16)})`);
  const bigEndian = magic === MAGIC_BE;
  const version = hv.getUint32(4);
  if (version !== 3007000) return none(`unknown WAL format version ${version}`);
  const pageSize = hv.getUint32(8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return none(`invalid WAL page size ${pageSize}`);
  const mainSize = mainPageSize(main);
  if (main.length > 0 && mainSize !== pageSize) return none(`WAL page size ${pageSize} differs from the database's ${mainSize}`);
  const salt1 = hv.getUint32(16);
  const salt2 = hv.getUint32(20);
  let sum = checksum(wal.subarray(0, 24), bigEndian, [0, 0]);
  if (sum[0] !== hv.getUint32(24) || sum[1] !== hv.getUint32(28)) return none('WAL header checksum mismatch');

  // Walk the frames; remember the page → frame offset map as of the last commit.
  const committed = new Map<number, number>();
  const pending = new Map<number, number>();
  let dbPages = 0;
  let frames = 0;
  let commits = 0;
  let seen = 0;
  const frameSize = FRAME_HEADER + pageSize;
  const mainPages = Math.floor(main.length / pageSize);
  let cutShort: string | undefined;
  for (let off = WAL_HEADER; off + frameSize <= wal.length; off += frameSize) {
    const page = hv.getUint32(off);
    const commitSize = hv.getUint32(off + 4);
    if (page === 0 || hv.getUint32(off + 8) !== salt1 || hv.getUint32(off + 12) !== salt2) break;
    sum = checksum(wal.subarray(off, off + 8), bigEndian, sum);
    sum = checksum(wal.subarray(off + FRAME_HEADER, off + frameSize), bigEndian, sum);
    if (sum[0] !== hv.getUint32(off + 16) || sum[1] !== hv.getUint32(off + 20)) break;
    // Every page of a database is in the main file or in a frame: a size (from a frame or a page
    // number) beyond both is impossible, whatever the checksums say; allocating it could take
    // terabytes. The transaction and every later frame are ignored.
    const limit = mainPages + seen + 1;
    if (page > limit || commitSize > limit) {
      cutShort = `frame ${seen + 1} claims ${commitSize > limit ? `a database of ${commitSize} pages` : `page ${page}`}, more than the database and the WAL hold (${limit}); it and the frames after it are ignored`;
      break;
    }
    seen++;
    pending.set(page, off + FRAME_HEADER);
    if (commitSize > 0) {
      for (const [p, o] of pending) committed.set(p, o);
      pending.clear();
      dbPages = commitSize;
      frames = seen;
      commits++;
    }
  }
  const ignoredFrames = seen - frames;
  const staleFrames = Math.floor((wal.length - WAL_HEADER) / frameSize) - seen;
  if (commits === 0) return { ...none(), ignoredFrames, staleFrames, cutShort };

  const image = new Uint8Array(dbPages * pageSize);
  image.set(main.subarray(0, Math.min(main.length, image.length)));
  for (const [page, off] of committed) {
    if (page > dbPages) continue; // truncated away by the commit
    image.set(wal.subarray(off, off + pageSize), (page - 1) * pageSize);
  }
  return { image, frames, commits, ignoredFrames, staleFrames, cutShort };
}

/**
 * Marks an image as a rollback-journal database (header bytes 18–19 = 1), so that an in-memory
 * SQLite does not look for a WAL after the WAL has been applied. Modifies `image` in place.
 */
export function markRollbackJournal(image: Uint8Array): void {
  if (image.length >= 100 && image[18] === 2 && image[19] === 2) {
    image[18] = 1;
    image[19] = 1;
  }
}
