/**
 * Reads `<data>/pi.sqlite` (PI-Desktop's index database, schema v11) read-only with sql.js
 * (hosts/sqlite.ts: the file and its WAL are read into memory, never written).
 *
 * Tables used (project reference `reference/botharness.md` B.1 "SQLite tables"):
 *  - `sessions(id, title, project_id, provider_id, model_id, …)`: titles and session models;
 *  - `turns(id, session_id, status, provider_id, model_id, …, input_tokens, output_tokens, …)`:
 *    turn counts and totals (ADR 0171: a turn's total includes its sub-agents' deltas);
 *  - `projects(id, path, name, …)`: the folder a session belongs to, by `sessions.project_id`
 *    (columns as in PI-Desktop's `crates/host-core/src/db/schema.rs`, e.g. vastsa/PI-Desktop
 *    @ 5d8a52d; not in the reference's v11 list, so a database without it gives no project);
 *  - `models`: the route's pi-ai compatibility flag `supportsMidConvoSystemMessages`. Its columns
 *    are not documented, so every column of every row is searched: a column named like the flag
 *    (`supports_mid_convo_system_messages`), or a JSON text that carries the key; the route is the
 *    row's `provider_id` + `model_id` (or an `id` of the form `provider/model`).
 * A database is read once per size and mtime (and WAL) and kept until `releasePiDesktopDbs()`.
 */
import type { Database } from 'sql.js';
import type { Diagnostic } from '../../core/model.js';
import { dbStamp, openSqlite, rows, type Row } from '../sqlite.js';

/** One `sessions` row. */
export interface PdSessionRow {
  title: string | null;
  providerId: string | null;
  modelId: string | null;
  projectId: string | null;
  /** The project's folder (`projects.path`), null when the session has none or the table is missing. */
  projectPath: string | null;
}

/** Totals of one session's `turns` rows (tokens). */
export interface PdTurns {
  count: number;
  inputTokens: number;
  outputTokens: number;
}

/** A route's compatibility flag and where it was read. */
export interface RouteCompat {
  supportsMidConvoSystemMessages: boolean;
  /** e.g. `models.compat_json (row deepseek/deepseek-v4-flash)`. */
  source: string;
}

/** What pi.sqlite holds for this reader. */
export interface PiDesktopDb {
  file: string;
  userVersion: number | null;
  sessions: Map<string, PdSessionRow>;
  turns: Map<string, PdTurns>;
  /** By `provider/model`. */
  routes: Map<string, RouteCompat>;
  diagnostics: Diagnostic[];
}

const cache = new Map<string, { stamp: string; db: PiDesktopDb }>();

/** Frees the databases kept between sessions. */
export function releasePiDesktopDbs(): void {
  cache.clear();
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : v === null || v === undefined ? null : String(v));
const FLAG = 'supportsMidConvoSystemMessages';
const FLAG_COLUMN = /^supports_?mid_?convo(_?system_?messages)?$/i;

/** The flag inside a JSON value (depth ≤ 4), or undefined. */
function flagIn(v: unknown, depth = 0): boolean | undefined {
  if (!v || typeof v !== 'object' || depth > 4) return undefined;
  if (Object.hasOwn(v, FLAG) && typeof (v as Record<string, unknown>)[FLAG] === 'boolean') return (v as Record<string, boolean>)[FLAG];
  for (const x of Object.values(v)) {
    const f = flagIn(x, depth + 1);
    if (f !== undefined) return f;
  }
  return undefined;
}

/**
 * The database's rows this reader needs, read once per (size, mtime).
 * @returns null when the file does not exist; otherwise the rows read, with diagnostics for what could not be
 */
export async function loadPiDesktopDb(file: string): Promise<PiDesktopDb | null> {
  const stamp = dbStamp(file);
  if (stamp === null) return null;
  const hit = cache.get(file);
  if (hit && hit.stamp === stamp) return hit.db;
  const out: PiDesktopDb = { file, userVersion: null, sessions: new Map(), turns: new Map(), routes: new Map(), diagnostics: [] };
  const db = await openSqlite(file, out.diagnostics);
  if (db) {
    try {
      readRows(db, out);
    } catch (e) {
      out.diagnostics.push({ file, line: 0, severity: 'error', message: `cannot read pi.sqlite (locked, half-written or corrupt?): ${e instanceof Error ? e.message : String(e)}` });
    } finally {
      db.close();
    }
  }
  cache.set(file, { stamp, db: out });
  return out;
}

function readRows(db: Database, out: PiDesktopDb): void {
  const diag = (message: string, severity: Diagnostic['severity'] = 'warning') => out.diagnostics.push({ file: out.file, line: 0, severity, message });
  const v = rows(db, 'PRAGMA user_version')[0]?.user_version;
  out.userVersion = typeof v === 'number' ? v : null;
  const tables = new Set(rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => String(r.name)));
  const columns = (t: string) => new Set(rows(db, `PRAGMA table_info(${t})`).map((r) => String(r.name)));
  const pick = (cols: Set<string>, c: string) => (cols.has(c) ? c : `NULL AS ${c}`);
  if (!tables.has('sessions')) diag('table `sessions` is missing: no titles or session models (not a PI-Desktop index database, or a partial one)');
  else {
    const cols = columns('sessions');
    const projects = new Map<string, string>();
    if (tables.has('projects')) {
      const pc = columns('projects');
      if (pc.has('id') && pc.has('path')) for (const r of rows(db, 'SELECT id, path FROM projects')) if (str(r.id) && str(r.path)) projects.set(str(r.id)!, str(r.path)!);
    }
    for (const r of rows(db, `SELECT id, ${pick(cols, 'title')}, ${pick(cols, 'provider_id')}, ${pick(cols, 'model_id')}, ${pick(cols, 'project_id')} FROM sessions`)) {
      const id = str(r.id);
      const projectId = str(r.project_id);
      if (id) out.sessions.set(id, { title: str(r.title), providerId: str(r.provider_id), modelId: str(r.model_id), projectId, projectPath: projectId !== null ? (projects.get(projectId) ?? null) : null });
    }
  }
  if (tables.has('turns')) {
    const cols = columns('turns');
    for (const r of rows(db, `SELECT session_id, COUNT(*) AS n, SUM(${cols.has('input_tokens') ? 'input_tokens' : 0}) AS i, SUM(${cols.has('output_tokens') ? 'output_tokens' : 0}) AS o FROM turns GROUP BY session_id`)) {
      const id = str(r.session_id);
      if (id) out.turns.set(id, { count: Number(r.n) || 0, inputTokens: Number(r.i) || 0, outputTokens: Number(r.o) || 0 });
    }
  }
  if (tables.has('models')) {
    for (const r of rows(db, 'SELECT * FROM models')) routeOf(r, out);
  }
  if (out.userVersion !== null && out.userVersion !== 11) diag(`pi.sqlite user_version ${out.userVersion}; this reader was written for schema v11`, 'info');
}

/** Records a `models` row's flag under its route, when the row carries one. */
function routeOf(r: Row, out: PiDesktopDb): void {
  let flag: boolean | undefined;
  let where = '';
  for (const [k, val] of Object.entries(r)) {
    if (FLAG_COLUMN.test(k) && (typeof val === 'number' || typeof val === 'boolean')) {
      flag = Boolean(val);
      where = `models.${k}`;
      break;
    }
    if (typeof val === 'string' && val.includes(FLAG)) {
      try {
        const f = flagIn(JSON.parse(val));
        if (f !== undefined) {
          flag = f;
          where = `models.${k}`;
          break;
        }
      } catch {
        // not JSON
      }
    }
  }
  if (flag === undefined) return;
  const provider = str(r.provider_id);
  const model = str(r.model_id);
  const id = str(r.id);
  const route = provider && model ? `${provider}/${model}` : id && id.includes('/') ? id : null;
  if (!route) {
    out.diagnostics.push({ file: out.file, line: 0, severity: 'warning', message: `models row ${id ?? '(no id)'} carries ${FLAG} but names no provider_id/model_id: the flag is not used` });
    return;
  }
  out.routes.set(route, { supportsMidConvoSystemMessages: flag, source: `${where} (row ${route})` });
}
