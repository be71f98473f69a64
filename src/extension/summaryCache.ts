/**
 * Per-session analysis summaries cached across restarts in `context.globalStorageUri`
 * (`session-summaries.json`). An entry is used only when the session's file still has the same
 * size, mtime and registry stamp (OpenCode: the session's row counts and update times) AND the same content check (SHA-256 of its first and last 4 KiB), so a file
 * rewritten within the same mtime tick, or copied with its mtime kept, is analyzed again.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
  /** The session's latest request: its 1-based index, verdict, and tokens re-billed by it; null without requests. */
  last: { index: number; verdict: string; lostTokens: number } | null;
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
  return q ? { index: q.index, verdict: q.verdict, lostTokens: q.lostTokens } : null;
}

interface Entry {
  size: number;
  mtimeMs: number;
  /** The registry's content identity within a shared file (OpenCode rows), when any. */
  stamp?: string;
  check: string;
  /** What the summary was computed with (see SummaryCache's `basis`); another basis is a miss. */
  basis?: string;
  summary: SessionSummary;
}

const CHECK_BYTES = 4096;
/** Bump when SessionSummary or the analysis changes meaning: old entries are dropped. */
const FORMAT = 2;

/** SHA-256 (hex) of the first and last 4 KiB of a file of `size` bytes. @throws on read errors */
export async function contentCheck(path: string, size: number): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const h = createHash('sha256');
    const head = Buffer.alloc(Math.min(CHECK_BYTES, size));
    await fh.read(head, 0, head.length, 0);
    h.update(head);
    if (size > CHECK_BYTES) {
      const tail = Buffer.alloc(Math.min(CHECK_BYTES, size - CHECK_BYTES));
      await fh.read(tail, 0, tail.length, size - tail.length);
      h.update(tail);
    }
    return h.digest('hex');
  } finally {
    await fh.close();
  }
}

export class SummaryCache {
  private entries = new Map<string, Entry>();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private loaded: Promise<void> | undefined;
  /** The last save (saves are chained so two never race on the file). */
  private saving: Promise<void> = Promise.resolve();
  private writes = 0;
  /** Lookups answered from the cache / recomputed, for the log and tests. */
  readonly stats = { hits: 0, misses: 0 };

  /**
   * @param dir the extension's global storage folder
   * @param basis what a summary depends on besides the file: the extension's version and the rule
   *   overrides (`prefixLens.ttlSecondsOverrides`, `prefixLens.priceOverrides`), read at each
   *   lookup, so a summary of another build or other overrides is computed again
   */
  constructor(
    private readonly dir: string,
    readonly basis: () => string = () => '',
  ) {}

  get file(): string {
    return join(this.dir, 'session-summaries.json');
  }

  /** Loads the saved entries once (a missing or unreadable file = empty cache); `get` waits for it. */
  load(): Promise<void> {
    this.loaded ??= this.read();
    return this.loaded;
  }

  private async read(): Promise<void> {
    try {
      const data = JSON.parse(await readFile(this.file, 'utf8')) as { format: number; entries: Record<string, Entry> };
      if (data.format === FORMAT) this.entries = new Map(Object.entries(data.entries));
    } catch {
      this.entries = new Map();
    }
  }

  /**
   * The cached summary of `ref` when size, mtime, content check and basis all still match.
   * @param basis the basis the caller judges with (default: `basis()` now)
   */
  async get(ref: SessionRef, basis = this.basis()): Promise<SessionSummary | undefined> {
    await this.load();
    const e = this.entries.get(ref.key);
    if (!e || e.size !== ref.size || e.mtimeMs !== ref.mtimeMs || e.stamp !== ref.stamp || (e.basis ?? '') !== basis) return this.miss();
    try {
      if ((await contentCheck(ref.path, ref.size)) !== e.check) return this.miss();
    } catch {
      return this.miss();
    }
    this.stats.hits++;
    return e.summary;
  }

  private miss(): undefined {
    this.stats.misses++;
    return undefined;
  }

  /**
   * Stores a summary for `ref` (its check is computed now) and saves soon.
   * @param basis the basis the summary was judged with (default: `basis()` now; a summary whose
   *   analysis started before the overrides changed must pass the old one, not be filed under the new)
   */
  async set(ref: SessionRef, summary: SessionSummary, basis = this.basis()): Promise<void> {
    let check: string;
    try {
      check = await contentCheck(ref.path, ref.size);
    } catch {
      return;
    }
    this.entries.set(ref.key, { size: ref.size, mtimeMs: ref.mtimeMs, stamp: ref.stamp, check, basis, summary });
    this.scheduleSave();
  }

  private scheduleSave(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      void this.save();
    }, 1000);
  }

  /** Writes the cache now (atomically: temp file + rename); saves run one after another, each with its own temp file. */
  save(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const run = async () => {
      await mkdir(this.dir, { recursive: true });
      const tmp = `${this.file}.${process.pid}.${++this.writes}.tmp`;
      await writeFile(tmp, JSON.stringify({ format: FORMAT, entries: Object.fromEntries(this.entries) }));
      await rename(tmp, this.file);
    };
    this.saving = this.saving.then(run, run);
    return this.saving;
  }
}
