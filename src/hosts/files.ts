/**
 * Opening a host's files: only regular files, read up to their size at open time, with a size limit.
 *
 * A path named like a session, WAL, storage file, body or meta can be something else: a FIFO
 * (opening it blocks until a writer comes, and a blocked open holds one of libuv's four threads),
 * a socket, a directory, or a symlink to `/dev/zero` (endless bytes). Every file is therefore
 * opened non-blocking (`O_NONBLOCK`: a FIFO opens at once instead of waiting), checked with
 * `fstat` on the open descriptor (no race between a check and the open) and refused unless it is a
 * regular file; then at most its size at open time is read, so a file that keeps growing cannot
 * keep the reader busy. Refusals are `FileRefused` errors whose message is fit for a diagnostic.
 * Read-only: nothing is ever created or written.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readlinkSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Folders a discovery walk never enters (dependency trees and VCS data hold no sessions). */
export const WALK_SKIP_DIRS: ReadonlySet<string> = new Set(['node_modules', '.git', '.hg', '.svn']);
/**
 * How deep a discovery walk goes below the path it was given, folders: files this many levels
 * below are still read, folders there are not entered (each is named in a warning). 16 leaves room
 * for a host's own tree inside a backup, e.g. `/backup/<date>/<host>/home/<user>/.codex/sessions/YYYY/MM/DD/`
 * (11 levels below `/backup`).
 */
export const WALK_MAX_DEPTH = 16;
/** Folders not entered (WALK_MAX_DEPTH) named one by one in a walk's warnings; the rest are counted. */
export const WALK_DEEP_NAMED = 10;

/** Size limits, bytes, by what the file is. The sizes real hosts write stay far below them. */
export const FILE_LIMITS = {
  /** One captured request body (a 1M-token context is ~4 MB of JSON; images can add more). */
  body: 256 * 1024 * 1024,
  /** A capture `.meta.json` or a legacy OpenCode storage file (one session, message or part). */
  small: 16 * 1024 * 1024,
  /** An `index.ndjson` of a capture folder. */
  index: 64 * 1024 * 1024,
  /** An SQLite database or its WAL (sql.js holds the whole image in memory, twice while opening). */
  database: 1024 * 1024 * 1024,
} as const;

/** A path that is not a readable regular file within the limit. `message` names what it is. */
export class FileRefused extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = 'FileRefused';
  }
}

// O_NONBLOCK does not exist on Windows (no FIFOs there in this sense): 0 leaves the flag out.
const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** What a non-regular file is, in words. */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

function refuseUnlessRegular(file: string, st: Stats, maxBytes: number): void {
  if (!st.isFile()) throw new FileRefused(file, `${kindOf(st)}, not a regular file; not read`);
  if (st.size > maxBytes) throw new FileRefused(file, `file too large (${st.size} bytes; the limit is ${maxBytes}); not read`);
}

/**
 * Opens a regular file for reading (non-blocking open, then `fstat`).
 * @returns the handle (caller closes it) and the file's size at open time, bytes
 * @throws FileRefused for anything but a regular file of at most `maxBytes`; the open's own error (ENOENT, EACCES, ENXIO for a socket…) otherwise
 */
export async function openRegular(file: string, maxBytes: number = Number.MAX_SAFE_INTEGER): Promise<{ handle: FileHandle; size: number }> {
  const handle = await open(file, FLAGS).catch((e: unknown) => {
    throw refusedOpen(file, e);
  });
  try {
    const st = await handle.stat();
    refuseUnlessRegular(file, st, maxBytes);
    return { handle, size: st.size };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/**
 * Reads a whole regular file: at most its size at open time.
 * @throws FileRefused (not a regular file, over `maxBytes`); the open's or read's own error
 */
export async function readRegularFile(file: string, maxBytes: number): Promise<Buffer> {
  const { handle, size } = await openRegular(file, maxBytes);
  try {
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await handle.read(buf, got, size - got, got);
      if (bytesRead === 0) break; // truncated while reading: keep what is there
      got += bytesRead;
    }
    return got === size ? buf : buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}

/** `readRegularFile` decoded as UTF-8 (a leading BOM is kept; JSON.parse callers strip it). */
export async function readRegularText(file: string, maxBytes: number): Promise<string> {
  return (await readRegularFile(file, maxBytes)).toString('utf8');
}

/** Synchronous `readRegularFile`, for the synchronous store readers. */
export function readRegularFileSync(file: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, FLAGS);
  } catch (e) {
    throw refusedOpen(file, e);
  }
  try {
    const st = fstatSync(fd);
    refuseUnlessRegular(file, st, maxBytes);
    const buf = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, buf, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    return got === st.size ? buf : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Linux refuses to open a socket with ENXIO ("no such device or address"): say what it is. */
function refusedOpen(file: string, e: unknown): unknown {
  return (e as NodeJS.ErrnoException).code === 'ENXIO' ? new FileRefused(file, 'a socket (or a device with nothing behind it), not a regular file; not read') : e;
}

/** A file error as diagnostic text: the refusal as is, else the system's message. */
export function fileErrorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Why `stat` of a path the user named failed, as "<path>: <reason>": ENOENT is "no such file or
 * directory" (what callers matched before), a symbolic-link loop, a permission or a name problem
 * says so (all of them used to read "no such file or directory"), and so does a symbolic link
 * whose target is missing (`a symbolic link to <target>, which does not exist`).
 */
export function missingPathText(path: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    code === 'ELOOP'
      ? 'a loop of symbolic links (each points on to the next)'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'ENOTDIR'
          ? 'a part of the path is a file, not a folder'
          : code === 'ENAMETOOLONG'
            ? 'the name is too long'
            : (danglingLink(path) ?? 'no such file or directory');
  return `${path}: ${reason}`;
}

/** For a path that is a symbolic link whose target does not exist, the reason saying so; else null. */
function danglingLink(path: string): string | null {
  try {
    if (!lstatSync(path).isSymbolicLink()) return null;
    return `a symbolic link to ${readlinkSync(path)}, which does not exist`;
  } catch {
    return null;
  }
}
