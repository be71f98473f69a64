/**
 * Result cache: the report entries of one session, stored per SessionRef outside the host's
 * folders (CLI: `$XDG_CACHE_HOME/prefix-lens`, default `~/.cache/prefix-lens`; the extension passes
 * its global storage folder). An unchanged session is never read again.
 *
 * An entry is valid only when all of these match what is on disk now:
 *  - format, cache version, the analysis code's identity and the provider rules' hash;
 *  - the ref's key and host;
 *  - file-per-session hosts: size and mtime of the file, and SHA-256 of its first and last 64 KiB
 *    (a rewrite that keeps size and mtime, e.g. a restored backup, still misses);
 *  - sessions inside a shared database (OpenCode): the ref's `stamp` (row counts and latest update
 *    times of the session's messages and parts), since the database's own size and mtime change
 *    with every other session.
 * A corrupt, truncated, foreign or stale entry is ignored and rewritten; entries are written to a
 * temporary file and renamed into place, so a reader never sees half an entry.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, statSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../core/analyze.js';
import { defaultRules, type ProviderRules } from '../core/rules.js';
import { readLines } from '../hosts/lines.js';
import { CAPTURE_JOINED, openRef, type SessionRef } from '../hosts/registry.js';
import { captureRoots, captureStamp, headStartMs } from '../hosts/capturejoin.js';
import { sessionReport, type SessionReport } from '../report/json.js';
import { attachPhux } from '../report/phux.js';

/** Bumped whenever the entry layout changes. */
const CACHE_VERSION = 2;
const FORMAT = 'prefix-lens-result-cache';
/** Bytes hashed at each end of a session file for the content check. */
const CHECK_BYTES = 64 * 1024;

/** The CLI's cache folder: `$XDG_CACHE_HOME/prefix-lens` (absolute only, per the XDG spec) or `~/.cache/prefix-lens`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(home, '.cache'), 'prefix-lens');
}

/**
 * Identity of the analysis code: results of another build are not trusted. The running bundle's (or
 * module's) size and mtime stand for its content (any rebuild changes them).
 */
let codeIdentity: string | undefined;
function code(): string {
  if (codeIdentity === undefined) {
    let id = 'unknown';
    try {
      const st = statSync(__filename);
      id = `${st.size}:${st.mtimeMs}`;
    } catch {
      // no file (eval): every run is its own build
      id = `pid:${process.pid}`;
    }
    codeIdentity = id;
  }
  return codeIdentity;
}

const ruleHashes = new WeakMap<ProviderRules, string>();
function rulesHash(rules: ProviderRules): string {
  let h = ruleHashes.get(rules);
  if (!h) ruleHashes.set(rules, (h = createHash('sha256').update(JSON.stringify(rules)).digest('hex').slice(0, 16)));
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
  /** What the capture join looked at (capturejoin.ts captureStamp): new captured bodies invalidate the entry. */
  captures: string | null;
}

/**
 * SHA-256 (hex) of the first and last CHECK_BYTES of a file, and the session start its head shows
 * (capturejoin.ts headStartMs, for the capture stamp), or null when it cannot be read.
 */
async function contentCheck(path: string, size: number): Promise<{ head: string; tail: string; startMs: number | null } | null> {
  try {
    const fh = await open(path, 'r');
    try {
      const n = Math.min(size, CHECK_BYTES);
      const buf = Buffer.alloc(n);
      await fh.read(buf, 0, n, 0);
      const head = createHash('sha256').update(buf).digest('hex');
      const startMs = headStartMs(buf);
      await fh.read(buf, 0, n, Math.max(0, size - n));
      return { head, tail: createHash('sha256').update(buf).digest('hex'), startMs };
    } finally {
      await fh.close();
    }
  } catch {
    return null;
  }
}

/** The identity of a ref as it is on disk now; null when the file cannot be checked (then never cached). */
export async function identityOf(ref: SessionRef, rules: ProviderRules): Promise<Identity | null> {
  const captures = (startMs: number | null) => (CAPTURE_JOINED.has(ref.host) ? captureStamp(ref.id, ref.mtimeMs, captureRoots(process.env), ref.parentId, startMs) : Promise.resolve(null));
  const base = { format: FORMAT, version: CACHE_VERSION, code: code(), rules: rulesHash(rules), key: ref.key, host: ref.host };
  if (ref.stamp !== undefined) {
    return { ...base, captures: await captures(ref.startMs ?? null), size: null, mtimeMs: null, stamp: ref.stamp, head: null, tail: null };
  }
  let st;
  try {
    st = statSync(ref.path);
  } catch {
    return null;
  }
  if (!st.isFile()) return null;
  const check = await contentCheck(ref.path, st.size);
  if (!check) return null;
  return { ...base, captures: await captures(check.startMs), size: st.size, mtimeMs: st.mtimeMs, stamp: null, head: check.head, tail: check.tail };
}

const FIELDS: Array<keyof Identity> = ['format', 'version', 'code', 'rules', 'key', 'host', 'size', 'mtimeMs', 'stamp', 'head', 'tail', 'captures'];

/** True when the entry's first line is one of ours and matches `id` field for field. */
export function sameIdentity(raw: unknown, id: Identity): boolean {
  if (!raw || typeof raw !== 'object') return false;
  const e = raw as Partial<Identity>;
  return FIELDS.every((f) => e[f] === id[f]);
}

/** File of a ref's entry: named by a hash of its key (keys are paths or ids: not file names). */
export function entryFile(cacheDir: string, key: string): string {
  return join(cacheDir, `v${CACHE_VERSION}`, `${createHash('sha256').update(key).digest('hex').slice(0, 40)}.json`);
}

/** Options of analyzeRefCached. */
export interface CacheOptions {
  /** Folder of the entries (created when missing). */
  cacheDir: string;
  /** Provider rules to judge with (part of the entry's identity). Default: the bundled rules. */
  rules?: ProviderRules;
  /** Analysis of a ref on a miss; default: read it with its host's reader and analyze it here. */
  analyze?: (ref: SessionRef, rules: ProviderRules) => Promise<SessionReport[]>;
  /** Called with 'hit' or 'miss' (statistics, tests). */
  onResult?: (kind: 'hit' | 'miss', ref: SessionRef) => void;
}

/** Reads and analyzes a ref in this thread (the cache's default `analyze`). */
export async function analyzeRefUncached(ref: SessionRef, rules: ProviderRules = defaultRules): Promise<SessionReport[]> {
  return (await openRef(ref)).map((s) => attachPhux(sessionReport(analyzeSession(s, rules), rules), s));
}

/**
 * The report entries of a ref (one per session it holds), from the cache when the entry is
 * valid, else analyzed and stored. A cache folder that cannot be written only costs the caching
 * (the result is still returned).
 * @throws what `analyze` throws (readers do not throw for bad content)
 */
export async function analyzeRefCached(ref: SessionRef, opts: CacheOptions): Promise<SessionReport[]> {
  const rules = opts.rules ?? defaultRules;
  const id = await identityOf(ref, rules);
  const file = entryFile(opts.cacheDir, ref.key);
  const hit = id && (await lookup(file, id));
  if (hit) {
    opts.onResult?.('hit', ref);
    return hit;
  }
  opts.onResult?.('miss', ref);
  const reports = await (opts.analyze ?? analyzeRefUncached)(ref, rules);
  // The file may have changed while it was read: store only under the identity seen before and after.
  const after = id && (await identityOf(ref, rules));
  if (id && after && FIELDS.every((f) => id[f] === after[f])) await store(file, id, reports);
  return reports;
}

/**
 * The reports of a valid entry for `id`, or null (missing, corrupt, foreign, stale, cut short).
 * Layout (one JSON value per line, so neither reading nor writing needs a string of a whole
 * session): the identity with `sessions: n`; then per session a line
 * `{"keys":[…],"report":{…without requests},"requests":m}` followed by its m requests.
 * A stale entry is rejected after its first line.
 */
async function lookup(file: string, id: Identity): Promise<SessionReport[] | null> {
  try {
    const lines = readLines(file);
    const next = async (): Promise<unknown> => {
      const r = await lines.next();
      if (r.done || !r.value.eol) throw new Error('entry cut short');
      return JSON.parse(r.value.text);
    };
    try {
      const head = (await next()) as { sessions?: unknown };
      if (!sameIdentity(head, id) || typeof head.sessions !== 'number') return null;
      const out: SessionReport[] = [];
      for (let i = 0; i < head.sessions; i++) {
        const s = (await next()) as { keys?: unknown; report?: Record<string, unknown>; requests?: unknown };
        if (!Array.isArray(s.keys) || !s.report || typeof s.report !== 'object' || typeof s.requests !== 'number') return null;
        const requests: unknown[] = [];
        for (let j = 0; j < s.requests; j++) requests.push(await next());
        // The report's own key order (the JSON output follows it).
        const report: Record<string, unknown> = {};
        for (const k of s.keys as string[]) report[k] = k === 'requests' ? requests : s.report[k];
        out.push(report as unknown as SessionReport);
      }
      return (await lines.next()).done ? out : null;
    } finally {
      await lines.return(undefined);
    }
  } catch {
    return null; // missing or corrupt: rewritten by the next analysis
  }
}

/**
 * The cached reports of a ref when its entry is valid, else null; never analyzes. Lets a caller
 * answer hits itself and send only misses elsewhere (the CLI's worker threads).
 */
export async function cachedReports(ref: SessionRef, opts: { cacheDir: string; rules?: ProviderRules }): Promise<SessionReport[] | null> {
  const id = await identityOf(ref, opts.rules ?? defaultRules);
  return id ? lookup(entryFile(opts.cacheDir, ref.key), id) : null;
}

async function store(file: string, id: Identity, reports: SessionReport[]): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const out = createWriteStream(tmp);
    const failed = new Promise<never>((_, reject) => out.once('error', reject));
    failed.catch(() => {});
    const write = (v: unknown) => Promise.race([failed, new Promise<void>((ok) => (out.write(`${JSON.stringify(v)}\n`) ? ok() : out.once('drain', ok)))]);
    await write({ ...id, sessions: reports.length });
    for (const r of reports) {
      const { requests, ...rest } = r;
      await write({ keys: Object.keys(r), report: rest, requests: requests.length });
      for (const q of requests) await write(q);
    }
    await Promise.race([failed, new Promise<void>((ok) => out.end(ok))]);
    await rename(tmp, file);
  } catch {
    await unlink(tmp).catch(() => {});
  }
}
