/**
 * Reads OpenCode sessions from disk, strictly read-only, into plain stored sessions
 * (info + ordered messages + ordered parts), each row or file checked against the schemas.
 *
 *  - SQLite (1.2 … 1.18.x): `opencode.db` (+ `opencode.db-wal`, applied in memory by wal.ts) via
 *    sql.js. Tables `session`, `message(id, session_id, time_created, data)`,
 *    `part(id, message_id, session_id, data)`; messages `ORDER BY time_created, id`, parts
 *    `ORDER BY id` (reference/opencode.md §1.2, [bin] `MessageV2.page`).
 *  - Legacy JSON (< 1.2): `storage/session/<projectID>/<sessionID>.json`,
 *    `storage/message/<sessionID>/<messageID>.json`, `storage/part/<messageID>/<partID>.json`
 *    (reference §1.1, `json-migration.ts`).
 * Bad input never throws: an unreadable/locked/malformed database, a missing table, a row whose
 * JSON does not parse or does not fit the schema, a message without parts, an unknown part type
 * each give a Diagnostic (file + row reference) and the rest is read.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Database } from 'sql.js';
import type { Diagnostic } from '../../core/model.js';
import { bump } from '../../core/own.js';
import { depthMessage, parseBounded } from '../../core/depth.js';
import { FILE_LIMITS, readRegularFileSync } from '../files.js';
import { describeIssues } from '../issues.js';
import { checkHostValues, type ValueSpec } from '../numbers.js';
import {
  KNOWN_PART_TYPES,
  MessageInfoSchema,
  OC_MESSAGE_VALUES,
  OC_PART_VALUES,
  OC_SESSION_ROW_VALUES,
  OC_SESSION_VALUES,
  PartSchema,
  SessionInfoSchema,
  type MessageInfo,
  type Part,
  type SessionInfo,
} from './schema.js';
import { openSqlite, rows, type Row } from '../sqlite.js';

/** One stored part, parsed. `row` is the database row reference or the JSON file. */
export interface StoredPart {
  id: string;
  part: Part;
  row: string;
}

/** One stored message with its parts in id order. `ordinal` = 1-based position in the session. */
export interface StoredMessage {
  id: string;
  ordinal: number;
  info: MessageInfo;
  parts: StoredPart[];
  row: string;
}

/** One session as stored. */
export interface StoredSession {
  id: string;
  info: SessionInfo;
  messages: StoredMessage[];
  /** The database file or the legacy storage folder it was read from. */
  file: string;
  format: 'sqlite' | 'json';
  diagnostics: Diagnostic[];
  /** Ignored entries by kind (`part:<type>`, `message:no-parts`), with counts. */
  ignored: Record<string, number>;
}

/** What a store read produced: sessions, plus problems that belong to no session. */
export interface StoreRead {
  sessions: StoredSession[];
  diagnostics: Diagnostic[];
}

const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The shared SQLite opener (hosts/sqlite.ts), re-exported for this host's modules. */
export { openSqlite, rows };

/** Options shared by both store readers. */
export interface StoreOptions {
  /** Read only this session. */
  sessionId?: string;
}

/**
 * Reads an OpenCode SQLite database (and its WAL, if any) without writing either file.
 * @param file path of `opencode.db` (or another channel's database)
 */
export async function readSqliteStore(file: string, opts: StoreOptions = {}): Promise<StoreRead> {
  const diagnostics: Diagnostic[] = [];
  const db = await openSqlite(file, diagnostics);
  if (!db) return { sessions: [], diagnostics };
  try {
    return readTables(db, file, opts, diagnostics);
  } catch (e) {
    diagnostics.push({ file, line: 0, severity: 'error', message: `cannot read the database (locked, half-written or corrupt?): ${errText(e)}` });
    return { sessions: [], diagnostics };
  } finally {
    db.close();
  }
}

/** Reads the sessions of an open database (all, or `opts.sessionId`'s). Throws on SQL errors. */
export function readTables(db: Database, file: string, opts: StoreOptions, diagnostics: Diagnostic[]): StoreRead {
  const tables = new Set(rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => String(r.name)));
  const missing = ['session', 'message', 'part'].filter((t) => !tables.has(t));
  for (const t of missing) {
    diagnostics.push({
      file,
      line: 0,
      severity: t === 'session' ? 'warning' : 'error',
      message: `table \`${t}\` is missing (not an OpenCode ≥ 1.2 database, or a partial one)${t === 'message' ? '; no requests can be read' : ''}`,
    });
  }
  const where = opts.sessionId ? ' WHERE session_id = ?' : '';
  const params = opts.sessionId ? [opts.sessionId] : [];
  const sessions = new Map<string, StoredSession>();
  const get = (id: string): StoredSession => {
    let s = sessions.get(id);
    if (!s) {
      s = { id, info: { id }, messages: [], file, format: 'sqlite', diagnostics: [], ignored: {} };
      sessions.set(id, s);
    }
    return s;
  };

  if (tables.has('session')) {
    const q = `SELECT * FROM session${opts.sessionId ? ' WHERE id = ?' : ''} ORDER BY time_created, id`;
    for (const r of rows(db, q, params)) {
      const s = get(String(r.id));
      // Its columns as written (a non-number named, then unknown), before the info is made of them.
      checkValues(r, OC_SESSION_ROW_VALUES, s, { file, line: 0, row: `session:${String(r.id)}` });
      const parsed = SessionInfoSchema.safeParse(sessionInfoFromRow(r));
      if (parsed.success) s.info = parsed.data;
      else s.diagnostics.push({ file, line: 0, severity: 'warning', message: `row session:${String(r.id)}: unexpected columns (${describeIssues(parsed.error)})` });
    }
  }
  if (!tables.has('message')) return { sessions: [...sessions.values()], diagnostics };

  const byMessage = new Map<string, StoredMessage>();
  for (const r of rows(db, `SELECT id, session_id, time_created, data FROM message${where} ORDER BY session_id, time_created, id`, params)) {
    const id = String(r.id);
    const s = get(String(r.session_id));
    const row = `message:${id}`;
    const info = parseJson(r.data, s, file, row);
    if (info === undefined) continue;
    checkValues(info, OC_MESSAGE_VALUES, s, { file, line: 0, row });
    const parsed = MessageInfoSchema.safeParse(info);
    if (!parsed.success) {
      s.diagnostics.push({ file, line: 0, severity: 'error', message: `row ${row}: not an OpenCode message (${describeIssues(parsed.error)}); skipped` });
      continue;
    }
    const m: StoredMessage = { id, ordinal: s.messages.length + 1, info: parsed.data, parts: [], row };
    s.messages.push(m);
    byMessage.set(id, m);
  }
  if (tables.has('part')) {
    for (const r of rows(db, `SELECT id, message_id, session_id, data FROM part${where} ORDER BY message_id, id`, params)) {
      const id = String(r.id);
      const row = `part:${id} (message ${String(r.message_id)})`;
      const s = get(String(r.session_id));
      const m = byMessage.get(String(r.message_id));
      const value = parseJson(r.data, s, file, row);
      if (value === undefined) continue;
      if (!m) {
        s.diagnostics.push({ file, line: 0, severity: 'warning', message: `row ${row}: its message is missing or unreadable; part ignored` });
        continue;
      }
      const part = checkPart(value, s, file, row);
      if (part) m.parts.push({ id, part, row: `part:${id}` });
    }
  }
  for (const s of sessions.values()) finishSession(s);
  return { sessions: [...sessions.values()].sort(bySessionTime), diagnostics };
}

/**
 * The Session info object from a `session` row (the columns of `packages/opencode/src/session/session.sql.ts`),
 * checked first (OC_SESSION_ROW_VALUES: a bad column is null, unknown).
 */
function sessionInfoFromRow(r: Row): Record<string, unknown> {
  // A checked column: a number, null (not one: unknown), or undefined (no such column in this version).
  const num = (v: unknown) => (typeof v === 'number' ? v : v === null ? null : undefined);
  const count = (v: unknown) => (v === undefined ? 0 : num(v));
  const info: Record<string, unknown> = {
    id: String(r.id),
    title: typeof r.title === 'string' ? r.title : undefined,
    directory: typeof r.directory === 'string' ? r.directory : undefined,
    parentID: typeof r.parent_id === 'string' ? r.parent_id : undefined,
    version: typeof r.version === 'string' ? r.version : undefined,
    time: { created: num(r.time_created), updated: num(r.time_updated) },
  };
  if (r.tokens_input !== undefined) {
    info.tokens = {
      input: num(r.tokens_input),
      output: count(r.tokens_output),
      reasoning: count(r.tokens_reasoning),
      cache: { read: count(r.tokens_cache_read), write: count(r.tokens_cache_write) },
    };
  }
  if (r.cost !== undefined) info.cost = num(r.cost);
  return info;
}

function parseJson(data: unknown, s: StoredSession, file: string, row: string): unknown {
  const text = data instanceof Uint8Array ? new TextDecoder().decode(data) : String(data ?? '');
  try {
    const { value, cut } = parseBounded(text);
    if (cut) s.diagnostics.push({ file, line: 0, severity: 'warning', message: `row ${row}: ${depthMessage(cut)}` });
    return value;
  } catch (e) {
    s.diagnostics.push({ file, line: 0, severity: 'error', message: `row ${row}: data is not JSON (${errText(e)}); skipped` });
    return undefined;
  }
}

/**
 * checkHostValues of one row's or file's data, its problems as one warning at the row (`row <row>: …`,
 * line 0) or file (line 1, no row).
 */
function checkValues(value: unknown, spec: ValueSpec, s: StoredSession, at: { file: string; line: number; row?: string }): void {
  const problems: string[] = [];
  checkHostValues(value, spec, '', problems);
  if (problems.length) s.diagnostics.push({ file: at.file, line: at.line, severity: 'warning', message: `${at.row ? `row ${at.row}: ` : ''}values taken as unknown: ${problems.join('; ')}` });
}

function checkPart(value: unknown, s: StoredSession, file: string, row: string): Part | undefined {
  checkValues(value, OC_PART_VALUES, s, { file, line: 0, row });
  const type = value && typeof value === 'object' ? (value as { type?: unknown }).type : undefined;
  if (typeof type === 'string' && !KNOWN_PART_TYPES.has(type)) {
    s.diagnostics.push({ file, line: 0, severity: 'warning', message: `row ${row}: unknown part type \`${type}\`; ignored` });
    bump(s.ignored, `part:${type}`);
    return undefined;
  }
  const parsed = PartSchema.safeParse(value);
  if (!parsed.success) {
    s.diagnostics.push({ file, line: 0, severity: 'error', message: `row ${row}: not an OpenCode part (${describeIssues(parsed.error)}); skipped` });
    return undefined;
  }
  return parsed.data;
}

/** Message-level checks once the parts are attached. */
function finishSession(s: StoredSession): void {
  for (const m of s.messages) {
    if (m.parts.length === 0) {
      s.diagnostics.push({
        file: s.file,
        line: 0,
        severity: 'warning',
        message: `${m.row}: message has no (readable) parts; OpenCode sends nothing for it`,
      });
      bump(s.ignored, 'message:no-parts');
    }
  }
}

function bySessionTime(a: StoredSession, b: StoredSession): number {
  return (a.info.time?.created ?? 0) - (b.info.time?.created ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Reads the legacy JSON layout (OpenCode < 1.2).
 * @param storage the `storage` folder (holding `session/`, `message/`, `part/`)
 */
export function readJsonStore(storage: string, opts: StoreOptions = {}): StoreRead {
  const diagnostics: Diagnostic[] = [];
  /**
   * Names in a folder. An absent folder holds nothing (a session without messages yet); a path
   * that is there but cannot be listed (a file where a folder belongs, no permission) is an error
   * naming what it should hold, since everything under it is missing from the analysis.
   */
  const list = (dir: string, holds: string, s: StoredSession | null = null): string[] => {
    try {
      return readdirSync(dir).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        (s?.diagnostics ?? diagnostics).push({ file: dir, line: 1, severity: 'error', message: `cannot list this folder (${errText(e)}); the ${holds} it should hold are not read` });
      }
      return [];
    }
  };
  const load = (path: string, s: StoredSession | null): unknown => {
    let text: string;
    try {
      text = readRegularFileSync(path, FILE_LIMITS.small).toString('utf8');
    } catch (e) {
      (s?.diagnostics ?? diagnostics).push({ file: path, line: 1, severity: 'error', message: `cannot read: ${errText(e)}` });
      return undefined;
    }
    try {
      const { value, cut } = parseBounded(text);
      if (cut) (s?.diagnostics ?? diagnostics).push({ file: path, line: 1, severity: 'warning', message: depthMessage(cut) });
      return value;
    } catch (e) {
      (s?.diagnostics ?? diagnostics).push({ file: path, line: 1, severity: 'error', message: `not JSON (${errText(e)}); skipped` });
      return undefined;
    }
  };
  const sessions: StoredSession[] = [];
  if (!existsSync(join(storage, 'session'))) {
    diagnostics.push({ file: storage, line: 1, severity: 'warning', message: 'no `session` folder: not an OpenCode storage folder' });
  }
  for (const project of list(join(storage, 'session'), 'projects')) {
    for (const name of list(join(storage, 'session', project), 'sessions')) {
      if (!name.endsWith('.json')) continue;
      const id = name.slice(0, -5);
      if (opts.sessionId && id !== opts.sessionId) continue;
      const file = join(storage, 'session', project, name);
      const s: StoredSession = { id, info: { id }, messages: [], file: storage, format: 'json', diagnostics: [], ignored: {} };
      const raw = load(file, s);
      checkValues(raw, OC_SESSION_VALUES, s, { file, line: 1 });
      const parsed = SessionInfoSchema.safeParse(raw);
      if (parsed.success) s.info = parsed.data;
      else if (raw !== undefined) s.diagnostics.push({ file, line: 1, severity: 'warning', message: `unexpected session info (${describeIssues(parsed.error)})` });
      const msgs: Array<StoredMessage & { created: number | null }> = [];
      for (const mname of list(join(storage, 'message', id), 'messages', s)) {
        if (!mname.endsWith('.json')) continue;
        const mfile = join(storage, 'message', id, mname);
        const value = load(mfile, s);
        if (value === undefined) continue;
        checkValues(value, OC_MESSAGE_VALUES, s, { file: mfile, line: 1 });
        const p = MessageInfoSchema.safeParse(value);
        if (!p.success) {
          s.diagnostics.push({ file: mfile, line: 1, severity: 'error', message: `not an OpenCode message (${describeIssues(p.error)}); skipped` });
          continue;
        }
        const mid = typeof (value as { id?: unknown }).id === 'string' ? (value as { id: string }).id : mname.slice(0, -5);
        const parts: StoredPart[] = [];
        for (const pname of list(join(storage, 'part', mid), 'parts', s)) {
          if (!pname.endsWith('.json')) continue;
          const pfile = join(storage, 'part', mid, pname);
          const pv = load(pfile, s);
          if (pv === undefined) continue;
          const part = checkPartFile(pv, s, pfile);
          const pid = typeof (pv as { id?: unknown }).id === 'string' ? (pv as { id: string }).id : pname.slice(0, -5);
          if (part) parts.push({ id: pid, part, row: pfile });
        }
        parts.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        msgs.push({ id: mid, ordinal: 0, info: p.data, parts, row: mfile, created: p.data.time.created });
      }
      // OpenCode orders a session's messages by time.created (then id). A message whose time is
      // unknown (not a time, checkHostValues) has no place in that order: then all keep the order
      // of their file names (ids, which OpenCode makes ascending), and a warning says so.
      const unknownTime = msgs.find((m) => m.created === null);
      if (unknownTime) {
        s.diagnostics.push({ file: unknownTime.row, line: 1, severity: 'warning', message: 'time.created unknown: the messages of this session are taken in file-name (id) order, not time order' });
        msgs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      } else msgs.sort((a, b) => a.created! - b.created! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      s.messages = msgs.map(({ created: _c, ...m }, i) => ({ ...m, ordinal: i + 1 }));
      finishSession(s);
      sessions.push(s);
    }
  }
  return { sessions: sessions.sort(bySessionTime), diagnostics };
}

function checkPartFile(value: unknown, s: StoredSession, file: string): Part | undefined {
  const before = s.diagnostics.length;
  const part = checkPart(value, s, file, 'part');
  // Re-anchor the message on the file (JSON files have lines; the row label is redundant).
  for (const d of s.diagnostics.slice(before)) {
    d.line = 1;
    d.message = d.message.replace(/^row part: /, '');
  }
  return part;
}
