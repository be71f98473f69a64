/**
 * SQLite databases of any host, strictly read-only (sql.js): the file and its WAL are read into
 * memory, the WAL applied there (opencode/wal.ts), and neither file is ever written. Used by the
 * OpenCode, BotHarness and PI-Desktop readers; messages name no host.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import initSqlJs, { type Database, type SqlJsStatic } from 'sql.js';
import type { Diagnostic } from '../core/model.js';
import { plural } from '../plural.js';
import { FILE_LIMITS, readRegularFileSync } from './files.js';
import { applyWal, markRollbackJournal } from './opencode/wal.js';

let sqlPromise: Promise<SqlJsStatic> | undefined;
/**
 * sql.js (SQLite compiled to WebAssembly; Node 20 has no `node:sqlite`, and no native module is
 * used), loaded once.
 */
function sql(): Promise<SqlJsStatic> {
  if (!sqlPromise) {
    // A bundle may ship `sql-wasm.wasm` next to itself; else the one of the installed package.
    const pkg = 'sql.js';
    const dir = existsSync(join(__dirname, 'sql-wasm.wasm')) ? __dirname : dirname(require.resolve(pkg));
    sqlPromise = initSqlJs({ locateFile: (f: string) => join(dir, f) });
  }
  return sqlPromise;
}

const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Opens an SQLite database (OpenCode's, BotHarness's, PI-Desktop's) read-only: the file and its WAL are read into memory (the WAL
 * applied there) and handed to sql.js; neither file is written. The caller closes the database.
 * @returns null when it cannot be opened; the reasons are pushed to `diagnostics`
 */
export async function openSqlite(file: string, diagnostics: Diagnostic[]): Promise<Database | null> {
  const diag = (message: string, severity: Diagnostic['severity'] = 'error') => diagnostics.push({ file, line: 0, message, severity });
  let main: Uint8Array;
  try {
    main = new Uint8Array(readRegularFileSync(file, FILE_LIMITS.database));
  } catch (e) {
    diag(`cannot read the database: ${errText(e)}`);
    return null;
  }
  // `main` is this reader's own copy of the file: marking it in place below never touches the file.
  let image = main;
  let wal: Uint8Array | undefined;
  try {
    wal = new Uint8Array(readRegularFileSync(`${file}-wal`, FILE_LIMITS.database));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') diag(`cannot read ${file}-wal (the newest rows may be missing): ${errText(e)}`, 'warning');
  }
  if (wal && wal.length > 0) {
    const applied = applyWal(main, wal);
    if (applied.problem) diag(`${file}-wal ignored: ${applied.problem}; the newest rows may be missing`, 'warning');
    if (applied.cutShort) diag(`${file}-wal: ${applied.cutShort}; the newest rows may be missing`, 'warning');
    if (applied.ignoredFrames > 0) {
      diag(`${file}-wal: ${plural(applied.ignoredFrames, 'frame')} of an unfinished transaction ignored (the host is writing)`, 'info');
    }
    image = applied.image;
  }
  if (image.length === 0) {
    diag('the database is empty (no pages; the host may not have written it yet)', 'warning');
    return null;
  }
  if (image.length < 100 || new TextDecoder().decode(image.subarray(0, 15)) !== 'SQLite format 3') {
    diag('not an SQLite database (bad header; a half-written or foreign file)');
    return null;
  }
  markRollbackJournal(image);
  try {
    return new (await sql()).Database(image);
  } catch (e) {
    diag(`cannot open the database: ${errText(e)}`);
    return null;
  }
}

/** One result row, column name → value. */
export type Row = Record<string, unknown>;
/** Every row of a query (bound `params`). @throws on SQL errors */
export function rows(db: Database, query: string, params: Array<string | number> = []): Row[] {
  const stmt = db.prepare(query);
  try {
    stmt.bind(params);
    const out: Row[] = [];
    while (stmt.step()) out.push(stmt.getAsObject() as Row);
    return out;
  } finally {
    stmt.free();
  }
}

/**
 * The identity of a database file and its write-ahead log as `size:mtimeMs:walSize:walMtimeMs`
 * (empty WAL part when there is none), so a reader re-reads it only when either changed.
 * @returns null when the database file does not exist or cannot be stat'ed
 */
export function dbStamp(file: string): string | null {
  let st;
  try {
    st = statSync(file);
  } catch {
    return null;
  }
  let walStamp = '';
  try {
    const w = statSync(`${file}-wal`);
    walStamp = `${w.size}:${w.mtimeMs}`;
  } catch {
    // no WAL
  }
  return `${st.size}:${st.mtimeMs}:${walStamp}`;
}
