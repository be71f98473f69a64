/**
 * Output cache: the `--json` bytes of a ref's sessions exactly as the CLI wrote them, so a warm
 * `analyze --json` copies them instead of parsing the cached report and serializing it again
 * (issue 9, "warm speed"). Stored next to the result cache's entry (results.ts), under the same
 * identity (format, code, rules, key, host, size, mtime, head/tail SHA-256 or database stamp).
 *
 * Layout of `<entry>.out` (one file, written to a temporary name and renamed into place):
 *
 *   <block 1 bytes><block 2 bytes>…<trailer JSON>\n<trailer length: 16 decimal digits>\n
 *
 * A block is one session's lines of the JSON document (indented by 4, as JsonReportWriter writes
 * them), each with its newline, except the session's closing line `    }` (always the same; the
 * writer appends it with or without the comma that separates sessions). The trailer holds the
 * identity and per block its byte length, request count and whether nothing was readable (the
 * CLI's exit code needs it). The trailer is read first; a file whose sizes do not add up, whose
 * trailer does not parse or whose identity differs is ignored (and rewritten on the next miss).
 *
 * Node builtins only (no parser): the CLI's warm entry (src/cli/warm.ts) copies entries with it
 * without loading the analysis bundle.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionRef } from '../hosts/registry.js';
import { entryFile, identityWithRules, sameIdentity, type Identity } from './identity.js';
import { LEN_FIELD, trailerAt, trailerBytes, writeAllSync } from './trailer.js';

/** Bytes read per chunk when copying a block. */
const CHUNK = 1024 * 1024;
/** Bytes read per chunk when a block is copied as bytes (no line split: fewer, larger reads). */
const BYTES_CHUNK = 4 * 1024 * 1024;

/**
 * The `--json` document around the session blocks (JsonReportWriter in src/cli/pipeline.ts writes
 * it; the warm entry writes it around copied blocks): each is printed as one line, i.e. followed by
 * a newline. Between two sessions the previous one's SESSION_END gets a comma.
 */
export const DOC_START = '{\n  "version": 1,\n  "sessions": [';
/** The closing line of a session in the document. */
export const SESSION_END = '    }';
export const DOC_END = '  ]\n}';
/** The whole document when there are no sessions. */
export const DOC_EMPTY = '{\n  "version": 1,\n  "sessions": []\n}';

/** One session's block in an output entry. */
export interface OutputBlock {
  /** Byte length of the block (UTF-8). */
  bytes: number;
  /** Requests in the session. */
  requests: number;
  /** True when nothing could be read from the session (no requests, an error diagnostic). */
  unreadable: boolean;
}

/** A valid output entry, ready to be copied. */
export interface CachedOutput {
  file: string;
  blocks: OutputBlock[];
}

/** File of a ref's output entry. */
export function outputFile(cacheDir: string, key: string): string {
  return entryFile(cacheDir, key).replace(/\.json$/, '.out');
}

/**
 * The output entry of `ref` when it is valid for the ref as it is on disk now, else null (never
 * throws: a missing, corrupt or stale entry is a miss).
 * @param opts.id the ref's identity now (results.ts identityOf, identity.ts identityWithRules); null: a miss
 */
export async function cachedOutput(ref: Pick<SessionRef, 'key'>, opts: { cacheDir: string; id: Identity | null }): Promise<CachedOutput | null> {
  return opts.id ? cachedOutputAt(outputFile(opts.cacheDir, ref.key), opts.id) : null;
}

/** cachedOutput of the entry in `file` (outputFile) for identity `id`. */
export function cachedOutputAt(file: string, id: Identity): CachedOutput | null {
  // Synchronous reads of the two small pieces (the warm entry checks ~40 entries in a row; no
  // thread-pool round trips, and node:fs/promises need not be loaded for it).
  try {
    const fd = openSync(file, 'r');
    try {
      const { size } = fstatSync(fd);
      if (size < LEN_FIELD) return null;
      const lenBuf = Buffer.alloc(LEN_FIELD);
      readSync(fd, lenBuf, 0, lenBuf.length, size - lenBuf.length);
      const at = trailerAt(lenBuf, size);
      if (!at) return null;
      const { start, len } = at;
      const trailerBuf = Buffer.alloc(len);
      readSync(fd, trailerBuf, 0, len, start);
      const trailer = JSON.parse(trailerBuf.toString('utf8')) as { blocks?: unknown };
      if (!sameIdentity(trailer, id) || !Array.isArray(trailer.blocks)) return null;
      const blocks: OutputBlock[] = [];
      let total = 0;
      for (const b of trailer.blocks as Array<Partial<OutputBlock>>) {
        if (!b || !Number.isSafeInteger(b.bytes) || b.bytes! < 0 || !Number.isSafeInteger(b.requests) || typeof b.unreadable !== 'boolean') return null;
        blocks.push({ bytes: b.bytes!, requests: b.requests!, unreadable: b.unreadable });
        total += b.bytes!;
      }
      // The trailer ends with "\n" before the length field.
      if (total !== start || trailerBuf[len - 1] !== 0x0a) return null;
      return { file, blocks };
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/**
 * Copies block `index` of an entry to `write` as bytes, read synchronously in chunks into one
 * reused buffer: each chunk is valid only during the call, and when `write` returns a promise
 * (backpressure) the next chunk is read after it resolves (the warm entry writes to fd 1 at once:
 * no buffer per chunk to allocate and collect, no thread-pool round trip per read).
 * @throws when the file cannot be read or is shorter than its trailer says (removed or cut meanwhile)
 */
export async function copyBlockInto(out: CachedOutput, index: number, write: (bytes: Uint8Array) => void | Promise<void>, buf: Buffer): Promise<void> {
  let at = 0;
  for (let i = 0; i < index; i++) at += out.blocks[i].bytes;
  const end = at + out.blocks[index].bytes;
  if (end === at) return;
  const fd = openSync(out.file, 'r');
  try {
    let last = 0;
    while (at < end) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - at), at);
      if (n === 0) throw new Error(`${out.file}: cut short`);
      at += n;
      last = buf[n - 1];
      const w = write(buf.subarray(0, n));
      if (w) await w;
    }
    if (last !== 0x0a) throw new Error(`${out.file}: block does not end with a line break`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies block `index` of an entry to `write` as text in chunks that end at a line break (the
 * chunk passed has no final newline; `write` adds it, as the CLI's line sink does), or, with
 * `writeBytes`, as the bytes themselves (newlines included; each chunk a fresh copy).
 * @throws when the file cannot be read (it was valid a moment ago: removed meanwhile)
 */
export async function copyBlock(
  out: CachedOutput,
  index: number,
  write: (text: string) => void | Promise<void>,
  writeBytes?: (bytes: Uint8Array) => void | Promise<void>,
): Promise<void> {
  let at = 0;
  for (let i = 0; i < index; i++) at += out.blocks[i].bytes;
  const end = at + out.blocks[index].bytes;
  const fh = await open(out.file, 'r');
  try {
    if (writeBytes) {
      // Bytes as they are: each chunk read into a buffer of its own (a stream may keep it until it is flushed).
      while (at < end) {
        const chunk = Buffer.allocUnsafeSlow(Math.min(BYTES_CHUNK, end - at));
        const { bytesRead } = await fh.read(chunk, 0, chunk.length, at);
        if (bytesRead === 0) throw new Error(`${out.file}: cut short`);
        at += bytesRead;
        await writeBytes(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
      }
      if (out.blocks[index].bytes && !(await endsWithNewline(fh, end))) throw new Error(`${out.file}: block does not end with a line break`);
      return;
    }
    const buf = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer | null = null;
    while (at < end) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, end - at), at);
      if (bytesRead === 0) throw new Error(`${out.file}: cut short`);
      at += bytesRead;
      let chunk = buf.subarray(0, bytesRead);
      if (carry) chunk = Buffer.concat([carry, chunk]);
      carry = null;
      const nl = chunk.lastIndexOf(0x0a);
      if (nl < 0) {
        carry = Buffer.from(chunk);
        continue;
      }
      if (nl + 1 < chunk.length) carry = Buffer.from(chunk.subarray(nl + 1));
      await write(chunk.toString('utf8', 0, nl));
    }
    if (carry?.length) throw new Error(`${out.file}: block does not end with a line break`);
  } finally {
    await fh.close();
  }
}

async function endsWithNewline(fh: Awaited<ReturnType<typeof open>>, end: number): Promise<boolean> {
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, end - 1);
  return b[0] === 0x0a;
}

/**
 * Writes one ref's output entry while the CLI prints it: `block` is called with each session's
 * text chunks (lines joined by newlines, each chunk ending with one), `endSession` after each
 * session, `commit` at the end stores it under `id` when the ref still has that identity.
 * Write errors only cost the caching.
 *
 * Each chunk is written at once with `writeSync` (into the page cache, a local file): nothing
 * queues in memory, and the main thread does not wait for a thread-pool write per chunk. Through
 * a write stream every ~64 KiB chunk overfilled its 16 KiB buffer and the CLI awaited its 'drain':
 * one thread-pool round trip per chunk (~1,000 for the bench corpus's 66 MB), the main thread
 * idle meanwhile (CPU profile: idle ~800 ms with the cache written against ~340 with --no-cache).
 */
export class OutputEntryWriter {
  private readonly tmp: string;
  private fd = -1;
  private failed = false;
  private readonly blocks: OutputBlock[] = [];
  private current = 0;

  /** @param id the ref's identity before it was read (the entry is stored only if the ref still has it at `commit`) */
  constructor(
    private readonly ref: SessionRef,
    private readonly id: Identity,
    private readonly cacheDir: string,
  ) {
    const file = outputFile(cacheDir, ref.key);
    this.tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      mkdirSync(join(file, '..'), { recursive: true });
      this.fd = openSync(this.tmp, 'w');
    } catch {
      this.failed = true;
    }
  }

  /** Writes all of `data` at the end of the file; a failure marks the entry failed (never throws). */
  private put(data: Uint8Array): void {
    if (this.failed) return;
    try {
      writeAllSync(this.fd, data);
    } catch {
      this.failed = true;
    }
  }

  /** Appends text of the current session's block (written before it returns). */
  text(chunk: string): void {
    if (this.failed) return;
    const b = Buffer.from(chunk, 'utf8');
    this.current += b.length;
    this.put(b);
  }

  /** Appends bytes (UTF-8 text, whole lines) of the current session's block (written before it returns). */
  bytes(chunk: Uint8Array): void {
    if (this.failed) return;
    this.current += chunk.length;
    this.put(chunk);
  }

  /** Ends the current session's block. */
  endSession(requests: number, unreadable: boolean): void {
    this.blocks.push({ bytes: this.current, requests, unreadable });
    this.current = 0;
  }

  private close(): void {
    if (this.fd < 0) return;
    try {
      closeSync(this.fd);
    } catch {
      this.failed = true;
    }
    this.fd = -1;
  }

  /** Renames the entry into place when every write worked and the ref is unchanged; else removes it. */
  async commit(): Promise<void> {
    this.put(trailerBytes(JSON.stringify({ ...this.id, blocks: this.blocks })));
    this.close();
    try {
      const after = await identityWithRules(this.ref, this.id.rules);
      if (this.failed || !after || !sameIdentity(after, this.id)) throw new Error('not stored');
      await rename(this.tmp, outputFile(this.cacheDir, this.ref.key));
    } catch {
      await unlink(this.tmp).catch(() => {});
    }
  }

  /** Drops the entry (the run failed midway). */
  async abort(): Promise<void> {
    this.failed = true;
    this.close();
    await unlink(this.tmp).catch(() => {});
  }
}
