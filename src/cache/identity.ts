/**
 * Identity of a result-cache entry (results.ts) and of its output entry (output.ts): what must
 * match what is on disk now for an entry to be trusted. Node builtins only (no parser, no zod),
 * so the CLI's warm entry (src/cli/warm.ts) checks it without loading the analysis bundle.
 *
 *  - format, cache version, the analysis code's identity and the provider rules' hash;
 *  - the ref's key and host;
 *  - file-per-session hosts: size and mtime of the file, and SHA-256 of its first and last 64 KiB
 *    (a rewrite that keeps size and mtime, e.g. a restored backup, still misses);
 *  - sessions inside a shared database (OpenCode): the ref's `stamp`;
 *  - hosts the capture join applies to: the capture folders' stamp (capturestamp.ts);
 *  - a Codex fork (SessionRef.baseThread): its parent rollout's stamp (codex/locate.ts codexBaseStamp
 *    of SessionRef.basePath, the parent discovery found; looked for only for a ref without it).
 */
import type { BinaryLike } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CAPTURE_JOINED, captureRoots, captureStamp, headStartMs, homeDir } from '../hosts/capturestamp.js';
import { codexBaseStamp, type RolloutLookup } from '../hosts/codex/locate.js';
import type { SessionRef } from '../hosts/registry.js';

/** Bumped whenever the entry layout changes. */
export const CACHE_VERSION = 2;
export const FORMAT = 'prefix-lens-result-cache';
/** Bytes hashed at each end of a session file for the content check. */
export const CHECK_BYTES = 64 * 1024;

/**
 * SHA-256 (hex) of `data`. node:crypto is loaded on first use, not with this module: with it come
 * ~35 internal modules (the stream classes among them; ~12 M instructions, ~4 ms CPU here), which
 * the CLI's warm entry (src/cli/warm.ts) never needs.
 */
export function sha256Hex(data: BinaryLike): string {
  return (require('node:crypto') as typeof import('node:crypto')).createHash('sha256').update(data).digest('hex');
}

/** The CLI's cache folder: `$XDG_CACHE_HOME/prefix-lens` (absolute only, per the XDG spec) or `~/.cache/prefix-lens`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env, home?: string): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(home ?? homeDir(), '.cache'), 'prefix-lens');
}

/** The file whose size and mtime stand for the analysis code (see `code`); default: this module's bundle. */
let codeFile: string = __filename;
let codeIdentity: string | undefined;

/**
 * Makes `file` the analysis code whose identity entries carry (the CLI's warm entry: the main
 * bundle it would load, dist/cli-main.js, not itself). Call before the first identity.
 */
export function useCodeOf(file: string): void {
  codeFile = file;
  codeIdentity = undefined;
}

/**
 * Identity of the analysis code: results of another build are not trusted. The bundle's (or
 * module's) size and mtime stand for its content (any rebuild changes them).
 */
export function code(): string {
  if (codeIdentity === undefined) {
    let id = 'unknown';
    try {
      const st = statSync(codeFile);
      id = `${st.size}:${st.mtimeMs}`;
    } catch {
      // no file (eval): every run is its own build
      id = `pid:${process.pid}`;
    }
    codeIdentity = id;
  }
  return codeIdentity;
}

const ruleHashes = new WeakMap<object, string>();
/** Short SHA-256 (hex, 16 digits) of a provider rules object (core/rules.ts ProviderRules), memoized per object. */
export function rulesHash(rules: object): string {
  let h = ruleHashes.get(rules);
  if (!h) ruleHashes.set(rules, (h = sha256Hex(JSON.stringify(rules)).slice(0, 16)));
  return h;
}

/** What an entry must match (see the module comment). */
export interface Identity {
  format: string;
  version: number;
  code: string;
  rules: string;
  key: string;
  host: string;
  size: number | null;
  mtimeMs: number | null;
  stamp: string | null;
  head: string | null;
  tail: string | null;
  /** What the capture join looked at (capturestamp.ts captureStamp): new captured bodies invalidate the entry. */
  captures: string | null;
  /**
   * A Codex fork's parent rollout as it is now (codex/locate.ts codexBaseStamp: path, size,
   * mtime, or `absent`): the fork reads its first lines. Null for every other ref.
   */
  base: string | null;
}

/** One buffer for every content check of this thread (the check is synchronous: never shared between two). */
let checkBuf: Buffer | null = null;

/**
 * SHA-256 (hex) of the first and last CHECK_BYTES of a file's first `size` bytes, and the session
 * start its head shows (capturestamp.ts headStartMs, for the capture stamp), or null when it
 * cannot be read. With `knownHead` (the hash of the file's first CHECK_BYTES, already computed,
 * valid when `size` ≥ CHECK_BYTES) the head is not read again and `startMs` is null.
 */
export async function contentCheck(path: string, size: number, knownHead?: string): Promise<{ head: string; tail: string; startMs: number | null } | null> {
  const c = checkSync(path, size, knownHead);
  return c && { head: c.head, tail: c.tail, startMs: c.headBytes ? headStartMs(c.headBytes) : null };
}

/**
 * contentCheck with the head's bytes instead of its session start (null when the head was not
 * read): `headBytes` is this thread's buffer, valid until the next check. Synchronous reads (two
 * from the page cache, as fast as a thread-pool round trip is slow; the warm entry checks every
 * file of a run in a row).
 */
function checkSync(path: string, size: number, knownHead?: string): { head: string; tail: string; headBytes: Buffer | null } | null {
  try {
    const fd = openSync(path, 'r');
    try {
      const n = Math.min(size, CHECK_BYTES);
      checkBuf ??= Buffer.allocUnsafe(2 * CHECK_BYTES);
      let head = knownHead;
      let headBytes: Buffer | null = null;
      if (head === undefined || size < CHECK_BYTES) {
        headBytes = checkBuf.subarray(0, n);
        if (readFull(fd, headBytes, 0) !== n) return null;
        head = sha256Hex(headBytes);
      }
      const tailBytes = checkBuf.subarray(CHECK_BYTES, CHECK_BYTES + n);
      if (readFull(fd, tailBytes, Math.max(0, size - n)) !== n) return null;
      return { head, tail: sha256Hex(tailBytes), headBytes };
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/** Reads `buf.length` bytes at `pos` (fewer only at the end of the file); returns the bytes read. */
function readFull(fd: number, buf: Buffer, pos: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/** What identityOf reads of a ref (a run manifest stores these, src/cli/warm.ts). */
export type RefIdentityFields = Pick<SessionRef, 'host' | 'key' | 'path' | 'id' | 'mtimeMs' | 'parentId' | 'stamp' | 'startMs' | 'baseThread' | 'basePath'>;

/**
 * Identity.base of a ref: for a Codex fork its parent rollout's stamp (codex/locate.ts
 * codexBaseStamp: `<path>:<size>:<mtime ms>` or `absent`, of SessionRef.basePath, or of the
 * parent looked for now, through `lookup` when given, for a ref without it); null for any other
 * ref. What the extension's summary cache keys a fork by too.
 */
export function baseStamp(ref: Pick<RefIdentityFields, 'host' | 'path' | 'baseThread' | 'basePath'>, lookup?: RolloutLookup): Promise<string | null> {
  return ref.host === 'codex' && typeof ref.baseThread === 'string' ? codexBaseStamp(ref.path, ref.baseThread, ref.basePath, lookup) : Promise.resolve(null);
}

/**
 * The identity of a ref as it is on disk now; null when the file cannot be checked (then never cached).
 * @param rules the provider rules' hash (rulesHash)
 * @param env where the capture roots are read from (capturestamp.ts captureRoots)
 */
export async function identityWithRules(ref: RefIdentityFields, rules: string, env: NodeJS.ProcessEnv = process.env): Promise<Identity | null> {
  const captures = (startMs: number | null | (() => number | null)) =>
    CAPTURE_JOINED.has(ref.host) ? captureStamp(ref.id, ref.mtimeMs, captureRoots(env), ref.parentId, startMs) : Promise.resolve(null);
  // Taken before the file is checked: the check's head bytes (this thread's buffer) are used right after it.
  const parent = await baseStamp(ref);
  const base = { format: FORMAT, version: CACHE_VERSION, code: code(), rules, key: ref.key, host: ref.host, base: parent };
  if (ref.stamp !== undefined) {
    return { ...base, captures: await captures(ref.startMs ?? null), size: null, mtimeMs: null, stamp: ref.stamp, head: null, tail: null };
  }
  const checked = checkFile(ref.path);
  if (!checked) return null;
  const { size, mtimeMs, check } = checked;
  // The head's bytes are this thread's buffer: read for the stamp (only when a capture root exists) before anything else runs.
  return { ...base, captures: await captures(() => (check.headBytes ? headStartMs(check.headBytes) : null)), size, mtimeMs, stamp: null, head: check.head, tail: check.tail };
}

/** A regular file's size (bytes), mtime (ms) and content check (checkSync); null when it is not one or cannot be read. */
function checkFile(path: string): { size: number; mtimeMs: number; check: NonNullable<ReturnType<typeof checkSync>> } | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isFile()) return null;
  const check = checkSync(path, st.size);
  return check && { size: st.size, mtimeMs: st.mtimeMs, check };
}

/**
 * The bytes a file ref's content check hashed (`head`: its first min(size, CHECK_BYTES) bytes,
 * `tail`: its last as many; copies) with the identity they gave: what a run manifest keeps so
 * the warm entry (src/cli/warm.ts) compares bytes instead of hashing (identityBySample).
 */
export interface SampledIdentity {
  id: Identity;
  head: Buffer;
  tail: Buffer;
}

/**
 * identityWithRules of a file ref, with the bytes its head and tail hashes were computed from
 * (one read: the hashes are of exactly these bytes). Null for a ref inside a database (`stamp`)
 * and when the file cannot be checked.
 */
export async function identityWithSample(ref: RefIdentityFields, rules: string, env: NodeJS.ProcessEnv = process.env): Promise<SampledIdentity | null> {
  if (ref.stamp !== undefined) return null;
  const parent = await baseStamp(ref);
  const checked = checkFile(ref.path);
  if (!checked?.check.headBytes) return null;
  const { size, mtimeMs, check } = checked;
  const n = check.headBytes!.length;
  const head = Buffer.from(check.headBytes!);
  const tail = Buffer.from(checkBuf!.subarray(CHECK_BYTES, CHECK_BYTES + n));
  const captures = CAPTURE_JOINED.has(ref.host) ? await captureStamp(ref.id, ref.mtimeMs, captureRoots(env), ref.parentId, () => headStartMs(head)) : null;
  return { id: fileIdentity(ref, rules, captures, parent, size, mtimeMs, check.head, check.tail), head, tail };
}

/**
 * The identity of a file ref as it is on disk now, as identityWithRules gives it, without hashing:
 * the file must have the size and mtime of `expected` (an identity identityWithSample gave) and
 * its head and tail must be byte for byte `sample` (the bytes that identity's hashes are of), so
 * its head and tail hashes are `expected`'s. That is the same evidence the hashes are (the same
 * bytes compared, not a digest of them), without node:crypto. The capture stamp is taken now, as
 * identityWithRules takes it. Null when anything differs or the file cannot be read.
 * @param lookup the run's parent search (codex/locate.ts RolloutLookup), for a fork without basePath
 */
export async function identityBySample(
  ref: RefIdentityFields,
  rules: string,
  env: NodeJS.ProcessEnv,
  expected: { size: number; mtimeMs: number; head: string; tail: string },
  sample: { head: Uint8Array; tail: Uint8Array },
  lookup?: RolloutLookup,
): Promise<Identity | null> {
  if (ref.stamp !== undefined) return null;
  let st;
  try {
    st = statSync(ref.path);
  } catch {
    return null;
  }
  if (!st.isFile() || st.size !== expected.size || st.mtimeMs !== expected.mtimeMs) return null;
  // A Codex fork's parent search lists the Codex home: only once the file itself still matches.
  const parent = await baseStamp(ref, lookup);
  const n = Math.min(st.size, CHECK_BYTES);
  if (sample.head.length !== n || sample.tail.length !== n) return null;
  let headBytes: Buffer;
  try {
    const fd = openSync(ref.path, 'r');
    try {
      checkBuf ??= Buffer.allocUnsafe(2 * CHECK_BYTES);
      headBytes = checkBuf.subarray(0, n);
      if (readFull(fd, headBytes, 0) !== n || !headBytes.equals(sample.head)) return null;
      const tailBytes = checkBuf.subarray(CHECK_BYTES, CHECK_BYTES + n);
      if (readFull(fd, tailBytes, Math.max(0, st.size - n)) !== n || !tailBytes.equals(sample.tail)) return null;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  // headBytes is this thread's buffer: read for the stamp (only when a capture root exists) before anything else runs.
  const captures = CAPTURE_JOINED.has(ref.host) ? await captureStamp(ref.id, ref.mtimeMs, captureRoots(env), ref.parentId, () => headStartMs(headBytes)) : null;
  return fileIdentity(ref, rules, captures, parent, st.size, st.mtimeMs, expected.head, expected.tail);
}

/** The Identity of a file ref (not inside a database) from what was checked of it. */
function fileIdentity(ref: RefIdentityFields, rules: string, captures: string | null, base: string | null, size: number, mtimeMs: number, head: string, tail: string): Identity {
  return { format: FORMAT, version: CACHE_VERSION, code: code(), rules, key: ref.key, host: ref.host, captures, base, size, mtimeMs, stamp: null, head, tail };
}

const FIELDS: Array<keyof Identity> = ['format', 'version', 'code', 'rules', 'key', 'host', 'size', 'mtimeMs', 'stamp', 'head', 'tail', 'captures', 'base'];

/** True when `raw` (an entry's identity as stored) is one of ours and matches `id` field for field. */
export function sameIdentity(raw: unknown, id: Identity): boolean {
  if (!raw || typeof raw !== 'object') return false;
  const e = raw as Partial<Identity>;
  return FIELDS.every((f) => e[f] === id[f]);
}

/** File of a ref's entry: named by a hash of its key (keys are paths or ids: not file names). */
export function entryFile(cacheDir: string, key: string): string {
  return join(cacheDir, `v${CACHE_VERSION}`, `${sha256Hex(key).slice(0, 40)}.json`);
}
