/**
 * OpenCode discovery and per-session reads for the host registry.
 *
 * Discovery lists sessions from the `session` table plus per-session row counts and latest update
 * times of `message` and `part` (indexed columns; no message data is parsed), or from the legacy
 * `storage/session/<project>/<id>.json` files. Each session becomes a SessionRef keyed
 * `opencode:<sessionID>` whose `stamp` changes whenever one of its rows is added or updated, so the
 * result cache can tell a changed session from an unchanged one inside a shared database.
 *
 * Opening one session reads only its rows (`WHERE session_id = ?`) from a database kept open
 * between calls (one at a time: refs of one database are opened in a row), with results identical
 * to `readOpenCode` over the whole store (store-level diagnostics attached the same way, and the
 * wire API of a custom provider inferred store-wide when the session itself does not tell).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { parseBounded } from '../../core/depth.js';
import { ownGet } from '../../core/own.js';
import { FILE_LIMITS, readRegularText } from '../files.js';
import { basename, join } from 'node:path';
import type { Database } from 'sql.js';
import type { Diagnostic, Session } from '../../core/model.js';
import type { SessionRef } from '../registry.js';
import { KNOWN_APIS, inferApis, normalizeSession, type OpenCodeApi } from './normalize.js';
import { openSqlite, readJsonStore, readTables, rows, type StoredSession } from './read.js';
import { withHostValues } from '../numbers.js';
import { OC_SESSION_ROW_TIMES, OC_SESSION_VALUES } from './schema.js';
import { withWire } from './wire.js';
import type { RequestSource } from '../wirematch.js';

/** A database kept open for per-session reads, identified by the size and mtime of it and its WAL. */
interface OpenStore {
  file: string;
  identity: string;
  db: Database | null;
  /** Problems of the whole store (WAL, missing tables): attached to every session read from it. */
  diagnostics: Diagnostic[];
  /** Wire API per provider, inferred over all sessions (computed only when a session needs it). */
  apis?: Map<string, OpenCodeApi>;
}

let current: OpenStore | null = null;

function fileIdentity(file: string): string {
  const part = (p: string) => {
    try {
      const st = statSync(p);
      return `${st.size}:${st.mtimeMs}`;
    } catch {
      return '-';
    }
  };
  return `${part(file)}|${part(`${file}-wal`)}`;
}

/** The open database for `file`, reopened when it (or its WAL) changed on disk. */
async function store(file: string): Promise<OpenStore> {
  const identity = fileIdentity(file);
  if (current && current.file === file && current.identity === identity) return current;
  releaseOpenCodeStores();
  const diagnostics: Diagnostic[] = [];
  const db = await openSqlite(file, diagnostics);
  current = { file, identity, db, diagnostics };
  if (db) {
    try {
      // Missing tables are store-level problems; an empty read with an impossible id reports them once.
      readTables(db, file, { sessionId: '\u0000' }, diagnostics);
    } catch (e) {
      diagnostics.push({ file, line: 0, severity: 'error', message: `cannot read the database (locked, half-written or corrupt?): ${(e as Error).message}` });
      db.close();
      current.db = null;
    }
  }
  return current;
}

/** Closes the database kept open for per-session reads (frees its memory). Safe to call any time. */
export function releaseOpenCodeStores(): void {
  current?.db?.close();
  current = null;
}

/** Lists the sessions of an OpenCode database as refs (empty when it cannot be read). */
export async function listSqliteSessions(file: string): Promise<SessionRef[]> {
  const s = await store(file);
  if (!s.db) return [];
  const db = s.db;
  let size = 0;
  for (const p of [file, `${file}-wal`]) {
    try {
      size += statSync(p).size;
    } catch {
      // no WAL
    }
  }
  const tables = new Set(rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => String(r.name)));
  const stamps = new Map<string, string[]>();
  const stamp = (table: string) => {
    if (!tables.has(table)) return;
    for (const r of rows(db, `SELECT session_id AS s, COUNT(*) AS n, MAX(time_updated) AS t, MAX(id) AS m FROM ${table} GROUP BY session_id`)) {
      const k = String(r.s);
      stamps.set(k, [...(stamps.get(k) ?? []), `${table}:${String(r.n)}:${String(r.t)}:${String(r.m)}`]);
    }
  };
  stamp('message');
  stamp('part');
  const refs = new Map<string, SessionRef>();
  const add = (id: string, info: { title?: unknown; directory?: unknown; parent_id?: unknown; time_updated?: unknown; time_created?: unknown }) => {
    const updated = typeof info.time_updated === 'number' ? info.time_updated : typeof info.time_created === 'number' ? info.time_created : 0;
    refs.set(id, {
      host: 'opencode',
      key: `opencode:${id}`,
      path: file,
      id,
      title: typeof info.title === 'string' && info.title ? info.title : null,
      firstPrompt: null,
      project: typeof info.directory === 'string' ? info.directory : null,
      mtimeMs: updated,
      size,
      parentId: typeof info.parent_id === 'string' ? info.parent_id : null,
      ...(typeof info.time_created === 'number' ? { startMs: info.time_created } : {}),
      stamp: '',
    });
  };
  if (tables.has('session')) {
    // Times that are not times (the reader warns at the row) are taken as absent, as a missing one.
    for (const r of rows(db, 'SELECT id, title, directory, parent_id, time_created, time_updated FROM session ORDER BY time_created, id')) add(String(r.id), withHostValues(r, OC_SESSION_ROW_TIMES));
  }
  // Messages of a session without a session row are still read (readTables does the same).
  for (const id of stamps.keys()) if (!refs.has(id)) add(id, {});
  for (const r of refs.values()) {
    const st = stamps.get(r.id) ?? [];
    r.stamp = st.join('|');
    // A session row's own update time moves the stamp too (title, revert).
    r.stamp += `|session:${r.mtimeMs}`;
  }
  return [...refs.values()];
}

/** Lists the sessions of a legacy JSON `storage` folder as refs (only their info files are read). */
export async function listJsonSessions(storage: string): Promise<SessionRef[]> {
  const out: SessionRef[] = [];
  const list = (d: string) => {
    try {
      return readdirSync(d).sort();
    } catch {
      return [];
    }
  };
  for (const project of list(join(storage, 'session'))) {
    const projectDir = join(storage, 'session', project);
    let sessionNames: string[];
    try {
      sessionNames = readdirSync(projectDir).sort();
    } catch (e) {
      // A project entry that is a file (or unreadable) hides its sessions: keep it as a ref that
      // opens to a diagnostic, so they do not vanish without a word.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') out.push(unlistableRef(storage, projectDir, (e as Error).message));
      continue;
    }
    for (const name of sessionNames) {
      if (!name.endsWith('.json')) continue;
      const file = join(storage, 'session', project, name);
      const id = name.slice(0, -5);
      let info: Record<string, unknown> = {};
      try {
        const v = parseBounded(await readRegularText(file, FILE_LIMITS.small)).value;
        if (v && typeof v === 'object' && !Array.isArray(v)) info = v as Record<string, unknown>;
      } catch {
        // read (and reported) when the session is opened
      }
      // The session's identity: its info file and its message folder (one file per message).
      const msgDir = join(storage, 'message', id);
      let size = 0;
      let mtimeMs = 0;
      const names = list(msgDir);
      for (const p of [file, msgDir]) {
        try {
          const st = statSync(p);
          size += st.size;
          mtimeMs = Math.max(mtimeMs, st.mtimeMs);
        } catch {
          // no messages yet
        }
      }
      const time = (withHostValues(info, OC_SESSION_VALUES).time ?? {}) as { updated?: unknown; created?: unknown };
      out.push({
        host: 'opencode',
        key: `opencode:${id}`,
        path: storage,
        id,
        title: typeof info.title === 'string' && info.title ? info.title : null,
        firstPrompt: null,
        project: typeof info.directory === 'string' ? info.directory : null,
        mtimeMs: typeof time.updated === 'number' ? time.updated : mtimeMs,
        size,
        parentId: typeof info.parentID === 'string' ? info.parentID : null,
        ...(typeof time.created === 'number' ? { startMs: time.created } : {}),
        stamp: `json:${names.length}:${mtimeMs}:${names[names.length - 1] ?? ''}`,
      });
    }
  }
  return out;
}

/** Marks a ref that stands for a legacy project folder that cannot be listed (see openOpenCodeRef). */
const UNLISTABLE = 'unlistable:';

function unlistableRef(storage: string, dir: string, why: string): SessionRef {
  return {
    host: 'opencode',
    key: `opencode-folder:${dir}`,
    path: storage,
    id: `${basename(dir)} (unread)`,
    title: null,
    firstPrompt: null,
    project: null,
    mtimeMs: 0,
    size: 0,
    parentId: null,
    stamp: `${UNLISTABLE}${dir}\u0000${why}`,
  };
}

/**
 * Refs of an OpenCode location: a database file, a legacy `storage` folder, or a data dir holding
 * `opencode.db` (+ channel databases) and/or `storage/`. Legacy sessions the database also has are
 * left out (1.18 neither reads nor imports the legacy tree; readOpenCode does the same).
 */
export async function openCodeRefsAt(path: string): Promise<SessionRef[]> {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    return [];
  }
  if (!isDir) return listSqliteSessions(path);
  if (existsSync(join(path, 'session')) && !existsSync(join(path, 'opencode.db'))) return listJsonSessions(path);
  const out: SessionRef[] = [];
  const dbs = [join(path, 'opencode.db'), ...list(path).filter((n) => /^opencode-.+\.db$/.test(n)).map((n) => join(path, n))];
  for (const db of dbs) if (existsSync(db)) out.push(...(await listSqliteSessions(db)));
  if (existsSync(join(path, 'storage', 'session'))) {
    const known = new Set(out.map((r) => r.id));
    out.push(...(await listJsonSessions(join(path, 'storage'))).filter((r) => !known.has(r.id)));
  }
  return out;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/**
 * Reads and normalizes the one session a ref names: reconstructed evidence, or wire evidence for
 * the requests whose bodies `requestsDir` holds (index.ts withWire; the capture join passes the
 * session's captured body files).
 * Never throws for bad content: when the session is gone, one empty session carries the reason.
 */
export async function openOpenCodeRef(ref: SessionRef, opts: { requestsDir?: RequestSource } = {}): Promise<Session[]> {
  let stored: StoredSession[];
  let storeDiagnostics: Diagnostic[] = [];
  let apisOf: () => Map<string, OpenCodeApi>;
  /** False when the store holds a session before this one (by id): that read reports the bodies no session owns. */
  let firstOfStore = true;
  if (ref.stamp?.startsWith(UNLISTABLE)) {
    const [dir, why] = ref.stamp.slice(UNLISTABLE.length).split('\u0000');
    return [failed(ref, `${dir}: cannot list this session folder (${why}); the sessions it should hold are not read`, [])];
  }
  if (statSafe(ref.path)?.isDirectory()) {
    const read = readJsonStore(ref.path, { sessionId: ref.id });
    stored = read.sessions;
    storeDiagnostics = read.diagnostics;
    apisOf = () => inferApis(readJsonStore(ref.path).sessions);
  } else {
    const s = await store(ref.path);
    if (!s.db) return [failed(ref, 'the database cannot be read', s.diagnostics)];
    stored = readTables(s.db, ref.path, { sessionId: ref.id }, []).sessions;
    try {
      const head = rows(s.db, 'SELECT id FROM session ORDER BY id LIMIT 1')[0]?.id;
      firstOfStore = head === undefined || String(head) === ref.id;
    } catch {
      // No session table: the only session read is the first.
    }
    storeDiagnostics = s.diagnostics;
    apisOf = () => (s.apis ??= inferApis(readTables(s.db!, ref.path, {}, []).sessions));
  }
  if (!stored.length) return [failed(ref, `session ${ref.id} not found in ${ref.path}`, storeDiagnostics)];
  const local = inferApis(stored);
  const providers = new Set(stored.flatMap((x) => x.messages.filter((m) => m.info.role === 'assistant').map((m) => (m.info as { providerID: string }).providerID)));
  const apis = [...providers].every((p) => Boolean(ownGet(KNOWN_APIS, p))) ? local : apisOf();
  const recons = stored.map((x) => {
    const r = normalizeSession(x, { apis });
    r.session.diagnostics.unshift(...storeDiagnostics.filter((d) => d.file === r.session.path || d.file.startsWith(`${r.session.path}-`)));
    return r;
  });
  if (opts.requestsDir !== undefined) await withWire(recons, opts.requestsDir, firstOfStore);
  return recons.map((r) => r.session);
}

function statSafe(p: string) {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

function failed(ref: SessionRef, message: string, diagnostics: Diagnostic[]): Session {
  return {
    host: 'opencode',
    id: ref.id || basename(ref.path),
    path: ref.path,
    requests: [],
    diagnostics: [...diagnostics, { file: ref.path, line: 0, severity: 'error', message }],
    ignored: {},
    events: [],
  };
}
