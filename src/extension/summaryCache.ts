/**
 * Per-session analysis summaries cached across restarts in `context.globalStorageUri`
 * (`session-summaries.json`). An entry is used only when the session's file still has the same
 * size, mtime and registry stamp (OpenCode: the session's row counts and update times) AND the same
 * content check as the CLI's result cache (cache/identity.ts contentCheck: SHA-256 of its first and
 * last 64 KiB), so a file
 * rewritten within the same mtime tick, or copied with its mtime kept, is analyzed again; a Codex
 * fork's entry also holds its parent rollout's stamp (cache/identity.ts baseStamp, the CLI result
 * cache's `base`), so a parent removed, moved, rewritten or appearing is analyzed again too; and
 * a session of a host the capture join applies to (Pi, Claude Code, Codex, OpenCode) holds the
 * stamp of the capture folders the join can look at (hosts/capturestamp.ts captureStamp, the CLI
 * identity's `captures`, under the environment the analysis runs with), so bodies the capture
 * proxy saves for the session after its summary (wire evidence instead of reconstructed) make it
 * analyzed again. A summary is filed only under the capture stamp seen before its analysis and
 * still seen after it (as the CLI's result cache stores an entry), since which of the bodies saved
 * meanwhile the analysis joined is not known.
 *
 * The file is shared by every VS Code window (one extension host each). A save writes a temp file
 * and renames it over the file (a reader never sees a torn file), under a lock file
 * (`session-summaries.json.lock`, taken over when older than LOCK_STALE_MS), and merges what
 * another window saved since: the entries this window did not set are taken from the file, so two
 * windows saving do not drop each other's summaries. A file that does not parse, or an entry of
 * another shape, is ignored (counted in `stats.dropped`) and rewritten at the next save.
 *
 * Bounded: an entry not stored or used for MAX_AGE_MS (a deleted or long-idle session) is left out
 * at the next save, and at most MAX_ENTRIES are kept (the most recently used), so the file each
 * save reads and writes does not grow with every session ever listed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { baseStamp, contentCheck } from '../cache/identity.js';
import { CAPTURE_JOINED, captureRoots, captureStamp } from '../hosts/capturestamp.js';
import type { SessionRef } from '../hosts/registry.js';
import type { SessionReport } from '../report/json.js';

/** What the Sessions view shows of an analyzed session. Tokens, USD; `hitRate` 0..1 or null. */
export interface SessionSummary {
  title: string | null;
  requests: number;
  breaks: number;
  /** ttl-expired + unexplained-miss requests. */
  misses: number;
  hitRate: number | null;
  cacheRead: number;
  cacheWrite: number;
  uncached: number;
  lostTokens: number;
  costUSD: number;
  /** Diagnostics of severity error (unreadable lines, schema mismatches). */
  errors: number;
  /**
   * The session's latest request: its 1-based index, its number (core/numbering.ts; absent in
   * summaries saved by older builds), verdict, and tokens re-billed by it; null without requests.
   */
  last: { index: number; number?: string; verdict: string; lostTokens: number } | null;
}

/** The summary of one session's report (view projection of its totals). */
export function summarize(r: SessionReport): SessionSummary {
  const t = r.totals;
  return {
    title: r.title,
    requests: t.requests,
    breaks: t.breaks,
    misses: r.requests.filter((q) => q.verdict === 'ttl-expired' || q.verdict === 'unexplained-miss').length,
    hitRate: t.hitRate,
    cacheRead: t.cacheRead,
    cacheWrite: t.cacheWrite,
    uncached: t.uncached,
    lostTokens: t.lostTokens,
    costUSD: t.costUSD,
    errors: r.diagnostics.filter((d) => d.severity === 'error').length,
    last: lastOf(r),
  };
}

function lastOf(r: SessionReport): SessionSummary['last'] {
  const q = r.requests.at(-1);
  return q ? { index: q.index, number: q.number, verdict: q.verdict, lostTokens: q.lostTokens } : null;
}

/** One saved summary and what it is valid for. */
export interface Entry {
  size: number;
  mtimeMs: number;
  /** The registry's content identity within a shared file (OpenCode rows), when any. */
  stamp?: string;
  check: string;
  /** A Codex fork's parent rollout stamp (cache/identity.ts baseStamp: `<path>:<size>:<mtime>` or `absent`); absent for any other session. */
  base?: string;
  /** The capture folders' stamp (hosts/capturestamp.ts captureStamp) when the summary was computed; absent when no capture root exists or the host is not joined. */
  captures?: string;
  /** What the summary was computed with (see SummaryCache's `basis`); another basis is a miss. */
  basis?: string;
  /** When the summary was last stored or used (ms since epoch); an entry saved without one counts as used when read. */
  seenAt?: number;
  summary: SessionSummary;
}

/** Bump when SessionSummary or the analysis changes meaning: old entries are dropped. */
const FORMAT = 2;
/** A lock file older than this (ms) is a save that died: it is taken over. */
const LOCK_STALE_MS = 10_000;
/** How long a save waits for another window's lock (ms) before it writes anyway (still atomically). */
const LOCK_WAIT_MS = 2_000;
/** An entry not stored or used for this long (ms: 60 days) is dropped at the next save. */
export const MAX_AGE_MS = 60 * 24 * 3600 * 1000;
/** Most entries a save keeps (the most recently used). */
export const MAX_ENTRIES = 20_000;
/** A hit refreshes an entry's `seenAt` (and saves) only when it is older than this (ms: 1 day), not at every lookup. */
const SEEN_REFRESH_MS = 24 * 3600 * 1000;

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isNumOrNull = (v: unknown): boolean => v === null || isNum(v);

/** Whether `v` has the shape of an Entry (the file is shared and may be of another build, or damaged). */
function isEntry(v: unknown): v is Entry {
  if (!v || typeof v !== 'object') return false;
  const e = v as Record<string, unknown>;
  if (!isNum(e.size) || !isNum(e.mtimeMs) || typeof e.check !== 'string') return false;
  if (e.stamp !== undefined && typeof e.stamp !== 'string') return false;
  if (e.base !== undefined && typeof e.base !== 'string') return false;
  if (e.captures !== undefined && typeof e.captures !== 'string') return false;
  if (e.basis !== undefined && typeof e.basis !== 'string') return false;
  if (e.seenAt !== undefined && !isNum(e.seenAt)) return false;
  const t = e.summary as Record<string, unknown> | null;
  if (!t || typeof t !== 'object') return false;
  const counts = ['requests', 'breaks', 'misses', 'cacheRead', 'cacheWrite', 'uncached', 'lostTokens', 'costUSD', 'errors'];
  if (!counts.every((k) => isNum(t[k])) || !isNumOrNull(t.hitRate) || (t.title !== null && typeof t.title !== 'string')) return false;
  const last = t.last as Record<string, unknown> | null;
  return last === null || (!!last && typeof last === 'object' && isNum(last.index) && (last.number === undefined || typeof last.number === 'string') && typeof last.verdict === 'string' && isNum(last.lostTokens));
}

/**
 * The entries of a saved file's text: those of the current format that have an Entry's shape.
 * `dropped`: entries (or, for text that does not parse or is of another shape, 1 for the file) left out.
 */
export function parseEntries(text: string): { entries: Map<string, Entry>; dropped: number } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { entries: new Map(), dropped: 1 };
  }
  const d = data as { format?: unknown; entries?: unknown } | null;
  if (!d || typeof d !== 'object' || !d.entries || typeof d.entries !== 'object' || Array.isArray(d.entries)) return { entries: new Map(), dropped: 1 };
  // Another format version: its entries mean something else, dropped silently (not damage).
  if (d.format !== FORMAT) return { entries: new Map(), dropped: 0 };
  const entries = new Map<string, Entry>();
  let dropped = 0;
  for (const [k, e] of Object.entries(d.entries as Record<string, unknown>)) {
    if (isEntry(e)) entries.set(k, e);
    else dropped++;
  }
  return { entries, dropped };
}

/**
 * The content check of a session file of `size` bytes (the CLI's, cache/identity.ts contentCheck:
 * SHA-256 of its first and last CHECK_BYTES, hex, joined by ":") and the session start its head
 * shows (ms since epoch, or null: where the capture stamp's window starts).
 * @throws when the file cannot be read
 */
async function fileCheck(path: string, size: number): Promise<{ check: string; startMs: number | null }> {
  const c = await contentCheck(path, size);
  if (!c) throw new Error(`${path}: cannot be read`);
  return { check: `${c.head}:${c.tail}`, startMs: c.startMs };
}

export class SummaryCache {
  private entries = new Map<string, Entry>();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private loaded: Promise<void> | undefined;
  /** The last save (saves are chained so two never race on the file). */
  private saving: Promise<void> = Promise.resolve();
  /** Keys set since the last save: this window's, written over what another window saved for them. */
  private dirty = new Set<string>();
  /**
   * Lookups answered from the cache / recomputed; entries (or damaged files) ignored when read;
   * saves that found another window's lock still held after LOCK_WAIT_MS. For the log and tests.
   */
  readonly stats = { hits: 0, misses: 0, dropped: 0, lockTimeouts: 0 };

  /**
   * @param dir the extension's global storage folder
   * @param basis what a summary depends on besides the file: the extension's version and the rule
   *   overrides (`prefixLens.ttlSecondsOverrides`, `prefixLens.priceOverrides`), read at each
   *   lookup, so a summary of another build or other overrides is computed again
   */
  constructor(
    private readonly dir: string,
    readonly basis: () => string = () => '',
    private readonly opts: { now?: () => number; maxAgeMs?: number; maxEntries?: number; env?: NodeJS.ProcessEnv } = {},
  ) {}

  /**
   * The stamp of the capture folders the join can look at for `ref` now (hosts/capturestamp.ts
   * captureStamp over the capture roots of the environment the analysis runs with: `opts.env`,
   * default process.env, which the extension's worker is given), or null (no capture root, or a
   * host the join does not apply to).
   * @param startMs the session start its file's head shows (fileCheck), for a file ref
   */
  private captures(ref: SessionRef, startMs: number | null): Promise<string | null> {
    if (!CAPTURE_JOINED.has(ref.host)) return Promise.resolve(null);
    // A ref inside a database (OpenCode) starts at its row's time_created, as the CLI identity takes it.
    return captureStamp(ref.id, ref.mtimeMs, captureRoots(this.opts.env ?? process.env), ref.parentId, ref.stamp !== undefined ? (ref.startMs ?? null) : startMs);
  }

  /**
   * What `set` compares the capture stamp with: the stamp before the analysis of `ref` starts
   * (a summary whose capture folders changed meanwhile is not filed). Null when there is none or
   * the file cannot be read.
   */
  async capturesBefore(ref: SessionRef): Promise<string | null> {
    if (!CAPTURE_JOINED.has(ref.host)) return null;
    try {
      return await this.captures(ref, (await fileCheck(ref.path, ref.size)).startMs);
    } catch {
      return null;
    }
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  get file(): string {
    return join(this.dir, 'session-summaries.json');
  }

  /** Loads the saved entries once (a missing or unreadable file = empty cache); `get` waits for it. */
  load(): Promise<void> {
    this.loaded ??= this.read();
    return this.loaded;
  }

  private async read(): Promise<void> {
    const saved = await this.readFile();
    // Entries set before the load finished (none in practice: `get` waits for it) win.
    for (const [k, e] of saved) if (!this.entries.has(k)) this.entries.set(k, e);
  }

  /** The valid entries of the file as it is now (missing, unreadable or damaged: none). */
  private async readFile(): Promise<Map<string, Entry>> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return new Map();
    }
    const { entries, dropped } = parseEntries(text);
    this.stats.dropped += dropped;
    const now = this.now();
    for (const e of entries.values()) e.seenAt ??= now;
    return entries;
  }

  /**
   * The cached summary of `ref` when size, mtime, content check, basis, the capture folders' stamp
   * and (a Codex fork) its parent rollout's stamp all still match.
   * @param basis the basis the caller judges with (default: `basis()` now)
   */
  async get(ref: SessionRef, basis = this.basis()): Promise<SessionSummary | undefined> {
    await this.load();
    const e = this.entries.get(ref.key);
    if (!e || e.size !== ref.size || e.mtimeMs !== ref.mtimeMs || e.stamp !== ref.stamp || (e.basis ?? '') !== basis) return this.miss();
    let startMs: number | null;
    try {
      const c = await fileCheck(ref.path, ref.size);
      if (c.check !== e.check) return this.miss();
      startMs = c.startMs;
    } catch {
      return this.miss();
    }
    if (e.captures !== ((await this.captures(ref, startMs)) ?? undefined)) return this.miss();
    if (e.base !== ((await baseStamp(ref)) ?? undefined)) return this.miss();
    this.stats.hits++;
    const now = this.now();
    if (now - (e.seenAt ?? 0) > SEEN_REFRESH_MS) {
      e.seenAt = now;
      this.dirty.add(ref.key);
      this.scheduleSave();
    }
    return e.summary;
  }

  private miss(): undefined {
    this.stats.misses++;
    return undefined;
  }

  /**
   * Stores a summary for `ref` (its check, the capture folders' stamp and a Codex fork's parent
   * stamp, taken now) and saves soon.
   * @param basis the basis the summary was judged with (default: `basis()` now; a summary whose
   *   analysis started before the overrides changed must pass the old one, not be filed under the new)
   * @param capturesBefore the capture stamp before the analysis started (capturesBefore); when
   *   given and the stamp now differs, nothing is stored (bodies were saved during the analysis)
   */
  async set(ref: SessionRef, summary: SessionSummary, basis = this.basis(), capturesBefore?: string | null): Promise<void> {
    let checked: { check: string; startMs: number | null };
    try {
      checked = await fileCheck(ref.path, ref.size);
    } catch {
      return;
    }
    const { check } = checked;
    const captures = await this.captures(ref, checked.startMs);
    if (capturesBefore !== undefined && captures !== capturesBefore) return;
    const base = await baseStamp(ref);
    this.entries.set(ref.key, { size: ref.size, mtimeMs: ref.mtimeMs, ...(ref.stamp !== undefined ? { stamp: ref.stamp } : {}), check, ...(captures !== null ? { captures } : {}), ...(base !== null ? { base } : {}), basis, seenAt: this.now(), summary });
    this.dirty.add(ref.key);
    this.scheduleSave();
  }

  private scheduleSave(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      // A failed save (disk full, folder gone) loses nothing shown: the next set saves again.
      this.save().catch(() => undefined);
    }, 1000);
  }

  /**
   * Writes the cache now: under the lock, merged with what another window saved (the entries this
   * one did not set since its last save are taken from the file), to a temp file of its own that
   * is renamed over the file. Saves of this instance run one after another.
   * @throws on write errors (the entries stay to be saved next time)
   */
  save(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const run = async () => {
      await mkdir(this.dir, { recursive: true });
      const release = await this.lock();
      const written = new Set(this.dirty);
      try {
        for (const [k, e] of await this.readFile()) if (!this.dirty.has(k)) this.entries.set(k, e);
        this.evict();
        const tmp = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
        try {
          await writeFile(tmp, JSON.stringify({ format: FORMAT, entries: Object.fromEntries(this.entries) }));
          await rename(tmp, this.file);
        } catch (e) {
          await rm(tmp, { force: true }).catch(() => undefined);
          throw e;
        }
        for (const k of written) this.dirty.delete(k);
      } finally {
        await release();
      }
    };
    this.saving = this.saving.then(run, run);
    return this.saving;
  }

  /** Drops the entries not used for maxAgeMs, then all but the maxEntries most recently used. */
  private evict(): void {
    const oldest = this.now() - (this.opts.maxAgeMs ?? MAX_AGE_MS);
    for (const [k, e] of this.entries) if ((e.seenAt ?? 0) < oldest) this.entries.delete(k);
    const max = this.opts.maxEntries ?? MAX_ENTRIES;
    if (this.entries.size <= max) return;
    const byUse = [...this.entries].sort((a, b) => (b[1].seenAt ?? 0) - (a[1].seenAt ?? 0));
    this.entries = new Map(byUse.slice(0, max));
  }

  /**
   * Takes the lock file (created exclusively; one older than LOCK_STALE_MS is taken over), waiting
   * up to LOCK_WAIT_MS for another window's. Resolves with its release; after the wait, without
   * the lock (the write is still atomic, only a concurrent save's entries may be missed).
   */
  private async lock(): Promise<() => Promise<void>> {
    const path = `${this.file}.lock`;
    const t0 = Date.now();
    for (;;) {
      try {
        const fh = await open(path, 'wx');
        await fh.close();
        return () => rm(path, { force: true }).catch(() => undefined);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return async () => undefined;
      }
      const st = await stat(path).catch(() => undefined);
      if (st && Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await rm(path, { force: true }).catch(() => undefined);
        continue;
      }
      if (Date.now() - t0 > LOCK_WAIT_MS) {
        this.stats.lockTimeouts++;
        return async () => undefined;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
