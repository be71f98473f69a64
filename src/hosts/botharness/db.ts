/**
 * Reads `$DSH_HOME/botharness/botharness.db` (BotHarness's one operational database, ADR-0041)
 * read-only with sql.js: the file (and its WAL) are read into memory, never written.
 *
 * Tables used (reference/botharness.md A.1, `packages/core/src/database/schema-plan.ts`):
 *  - `session_ownership(session_id, bot_slug, root_role, created_at, provenance, parent_session_id,
 *    cwd_reference, persona_snapshot, persona_snapshot_at)`: the snapshot columns arrive in
 *    generation 9; an older database has none (a diagnostic, no snapshot);
 *  - `inbox_admissions(source_event_id, bot_slug, reason, …, observed_at, …)` with
 *    `reason = 'memory-change'` (generation 32) joined with `source_events(source_event_id, body,
 *    payload_json, created_at, observed_at, …)`: memory changes delivered through the Bot Inbox;
 *  - `usage_daily(bot_slug, day, provider, model, purpose, …, cache_read_tokens, cache_write_tokens, …)`:
 *    a cross-check of the log's usage.
 * A database is read once per size and mtime and kept until `releaseBotHarnessDbs()`.
 */
import type { Database } from 'sql.js';
import type { Diagnostic } from '../../core/model.js';
import type { MemoryChange, PersonaSnapshot } from '../../core/persona.js';
import { dbStamp, openSqlite, rows } from '../sqlite.js';

/** One `session_ownership` row. */
export interface OwnershipRow extends PersonaSnapshot {
  sessionId: string;
  rootRole: string | null;
  createdAt: string | null;
  parentSessionId: string | null;
  cwdReference: string | null;
}

/** Per bot and UTC day: the roll-up's cache counters (tokens), summed over provider, model, purpose. */
export interface UsageDay {
  cacheRead: number;
  cacheWrite: number;
}

/** What the database holds for this reader. */
export interface BotHarnessDb {
  file: string;
  /** `_botharness_schema.generation`, when readable. */
  generation: number | null;
  /** False when `session_ownership` has no `persona_snapshot` column (generation < 9). */
  snapshotColumns: boolean;
  ownership: Map<string, OwnershipRow>;
  /** Memory-change admissions by bot slug, in observation order. */
  memoryChanges: Map<string, MemoryChange[]>;
  /** `usage_daily` by `<bot_slug>\u0000<day>`. */
  usage: Map<string, UsageDay>;
  /** Problems reading it (line 0; the table is named in the message). */
  diagnostics: Diagnostic[];
}

const cache = new Map<string, { stamp: string; db: BotHarnessDb }>();

/** Frees the databases kept between sessions. */
export function releaseBotHarnessDbs(): void {
  cache.clear();
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : v === null || v === undefined ? null : String(v));

/** ms since epoch of an ISO text or a number (s or ms), else null. */
export function timeOf(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v < 1e11 ? v * 1000 : v;
  if (typeof v === 'string' && v) {
    const t = Date.parse(v);
    return Number.isFinite(t) ? t : null;
  }
  return null;
}

/** File names a memory change names: in its payload (`paths`/`files`/`changes[].path`), else `*.md` names in its body. */
function pathsOf(payload: unknown, body: unknown): string[] {
  const out = new Set<string>();
  const visit = (v: unknown, depth: number) => {
    if (depth > 4) return;
    if (typeof v === 'string') {
      if (/\.[A-Za-z0-9]+$/.test(v) && v.length < 400) out.add(v);
    } else if (Array.isArray(v)) v.forEach((x) => visit(x, depth + 1));
    else if (v && typeof v === 'object') {
      for (const k of ['paths', 'files', 'changes', 'path', 'file']) if (Object.hasOwn(v, k)) visit((v as Record<string, unknown>)[k], depth + 1);
    }
  };
  if (typeof payload === 'string') {
    try {
      visit(JSON.parse(payload), 0);
    } catch {
      // not JSON: the body is searched below
    }
  }
  if (!out.size && typeof body === 'string') for (const m of body.matchAll(/[\w./-]+\.md\b/g)) out.add(m[0]);
  return [...out];
}

/**
 * The database's rows this reader needs, read once per (size, mtime).
 * @returns null when the file does not exist; otherwise the rows read, with diagnostics for what could not be
 */
export async function loadBotHarnessDb(file: string): Promise<BotHarnessDb | null> {
  const stamp = dbStamp(file);
  if (stamp === null) return null;
  const hit = cache.get(file);
  if (hit && hit.stamp === stamp) return hit.db;
  const out: BotHarnessDb = { file, generation: null, snapshotColumns: false, ownership: new Map(), memoryChanges: new Map(), usage: new Map(), diagnostics: [] };
  const diag = (message: string, severity: Diagnostic['severity'] = 'warning') => out.diagnostics.push({ file, line: 0, severity, message });
  const db = await openSqlite(file, out.diagnostics);
  if (db) {
    try {
      readRows(db, out, diag);
    } catch (e) {
      diag(`cannot read botharness.db (locked, half-written or corrupt?): ${e instanceof Error ? e.message : String(e)}`, 'error');
    } finally {
      db.close();
    }
  }
  cache.set(file, { stamp, db: out });
  return out;
}

function readRows(db: Database, out: BotHarnessDb, diag: (m: string, s?: Diagnostic['severity']) => void): void {
  const tables = new Set(rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => String(r.name)));
  if (tables.has('_botharness_schema')) {
    const g = rows(db, 'SELECT generation FROM _botharness_schema LIMIT 1')[0]?.generation;
    out.generation = typeof g === 'number' ? g : null;
  }
  const gen = out.generation !== null ? ` (schema generation ${out.generation})` : '';
  if (!tables.has('session_ownership')) {
    diag(`table \`session_ownership\` is missing${gen}: not a BotHarness database, or a partial one; no persona snapshots`);
  } else {
    const cols = new Set(rows(db, 'PRAGMA table_info(session_ownership)').map((r) => String(r.name)));
    out.snapshotColumns = cols.has('persona_snapshot') && cols.has('persona_snapshot_at');
    if (!out.snapshotColumns) {
      diag(`session_ownership has no persona_snapshot / persona_snapshot_at columns${gen}: an older BotHarness generation (the snapshot arrives in generation 9); persona verdicts unknown`);
    }
    const pick = (c: string) => (cols.has(c) ? c : `NULL AS ${c}`);
    const q = `SELECT session_id, bot_slug, ${pick('root_role')}, ${pick('created_at')}, ${pick('provenance')}, ${pick('parent_session_id')}, ${pick('cwd_reference')}, ${pick('persona_snapshot')}, ${pick('persona_snapshot_at')} FROM session_ownership`;
    for (const r of rows(db, q)) {
      const id = str(r.session_id);
      if (!id) continue;
      out.ownership.set(id, {
        sessionId: id,
        botSlug: str(r.bot_slug),
        rootRole: str(r.root_role),
        createdAt: str(r.created_at),
        provenance: str(r.provenance),
        parentSessionId: str(r.parent_session_id),
        cwdReference: str(r.cwd_reference),
        // personaSnapshot(): undefined when either column is NULL; '' is a real snapshot.
        body: r.persona_snapshot === null || r.persona_snapshot_at === null ? null : str(r.persona_snapshot),
        takenAt: r.persona_snapshot === null || r.persona_snapshot_at === null ? null : str(r.persona_snapshot_at),
      });
    }
  }
  if (tables.has('inbox_admissions')) {
    const hasEvents = tables.has('source_events');
    const q = hasEvents
      ? 'SELECT a.source_event_id AS id, a.bot_slug AS bot, a.observed_at AS observed, e.body AS body, e.payload_json AS payload, e.created_at AS created FROM inbox_admissions a LEFT JOIN source_events e ON e.source_event_id = a.source_event_id WHERE a.reason = \'memory-change\''
      : "SELECT source_event_id AS id, bot_slug AS bot, observed_at AS observed, NULL AS body, NULL AS payload, NULL AS created FROM inbox_admissions WHERE reason = 'memory-change'";
    try {
      for (const r of rows(db, q)) {
        const id = str(r.id);
        const bot = str(r.bot);
        if (!id || !bot) continue;
        const list = out.memoryChanges.get(bot) ?? [];
        list.push({ sourceEventId: id, observedAtMs: timeOf(r.observed) ?? timeOf(r.created), paths: pathsOf(r.payload, r.body) });
        out.memoryChanges.set(bot, list);
      }
      for (const list of out.memoryChanges.values()) list.sort((a, b) => (a.observedAtMs ?? 0) - (b.observedAtMs ?? 0));
    } catch (e) {
      diag(`inbox_admissions could not be read (an older generation?): ${e instanceof Error ? e.message : String(e)}`, 'info');
    }
  }
  if (tables.has('usage_daily')) {
    try {
      for (const r of rows(db, 'SELECT bot_slug, day, SUM(cache_read_tokens) AS rd, SUM(cache_write_tokens) AS wr FROM usage_daily GROUP BY bot_slug, day')) {
        out.usage.set(`${str(r.bot_slug)}\u0000${str(r.day)}`, { cacheRead: Number(r.rd) || 0, cacheWrite: Number(r.wr) || 0 });
      }
    } catch (e) {
      diag(`usage_daily could not be read: ${e instanceof Error ? e.message : String(e)}`, 'info');
    }
  }
}
