/**
 * The BotHarness host reader: DSH (DeepSeek Harness) session logs plus BotHarness's own
 * botharness.db (reference/botharness.md part A; BotHarness ADR-0060 / ADR-0134).
 *
 *   listDshLogs(dshHome(env, home))       → session logs on disk (locate.ts)
 *   botharnessRef(file, explicit)         → SessionRef from a peek (discover.ts)
 *   readBotHarnessSession(file, {dbFile}) → normalized Session (read.ts → normalize.ts; db.ts)
 *
 * Requests carry the head DSH recorded (system prompt and tools from `request/header` /
 * `system/message`) and reconstructed messages; the Session carries the persona evidence
 * (`Session.persona`) the core judges (core/persona.ts).
 */
import { basename, dirname } from 'node:path';
import type { Diagnostic, Session } from '../../core/model.js';
import { loadBotHarnessDb } from './db.js';
import { botharnessDbPath, dshHomeOfLog } from './locate.js';
import { normalizeDsh } from './normalize.js';
import { readDshLog } from './read.js';

export { dshHome, botharnessDbPath, listDshLogs, logOfSessionDir, LOG_NAME } from './locate.js';
export { botharnessRef, peekDshLog } from './discover.js';
export { readDshLog, type DshRead } from './read.js';
export { normalizeDsh, DSH_NOTE } from './normalize.js';
export { loadBotHarnessDb, releaseBotHarnessDbs, type BotHarnessDb } from './db.js';

export interface ReadBotHarnessOptions {
  /** botharness.db to read the Session's ownership row from (default: the log's DSH home's). */
  dbFile?: string;
}

/**
 * Reads one DSH session log (and the Session's rows in botharness.db) into a Session (host `botharness`).
 *
 * - requests: one per model call (see normalize.ts), in log order;
 * - diagnostics: zstd frame problems, malformed lines, schema mismatches, unknown event types,
 *   database problems (an older generation without the snapshot columns), usage roll-up mismatches;
 * - persona (BotHarness-owned Sessions only: a `session_ownership` row): the snapshot and the
 *   per-request system prompts, judged in core/persona.ts.
 * Never throws for bad content.
 */
export async function readBotHarnessSession(file: string, opts: ReadBotHarnessOptions = {}): Promise<Session> {
  const read = await readDshLog(file);
  const id = read.header?.id ?? basename(dirname(file));
  const home = dshHomeOfLog(file);
  const dbPath = opts.dbFile ?? (home ? botharnessDbPath(home) : null);
  const db = dbPath ? await loadBotHarnessDb(dbPath) : null;
  const row = db?.ownership.get(id);
  const memoryChanges = row?.botSlug ? (db?.memoryChanges.get(row.botSlug) ?? []) : [];
  const norm = normalizeDsh(read, memoryChanges);
  const diagnostics: Diagnostic[] = [...read.diagnostics, ...(db?.diagnostics ?? [])];
  if (db && row && row.botSlug) diagnostics.push(...usageCheck(db, row.botSlug, norm.requests, db.file));
  const session: Session = {
    host: 'botharness',
    id,
    path: file,
    requests: norm.requests,
    diagnostics,
    ignored: read.ignored,
    events: norm.events,
    turnLines: norm.turnLines,
  };
  // A persona only exists for a Session BotHarness owns (a row in session_ownership); a plain DSH
  // Session has none.
  if (db && row) {
    session.persona = {
      snapshot: { body: row.body, takenAt: row.takenAt, botSlug: row.botSlug, provenance: row.provenance },
      snapshotColumns: db.snapshotColumns,
      requests: norm.persona,
      memoryChanges,
    };
  }
  if (norm.title) session.title = norm.title;
  if (read.header?.cwd) session.cwd = read.header.cwd;
  if (row?.parentSessionId) session.parentId = row.parentSessionId;
  return session;
}

/**
 * Cross-check with `usage_daily`: the roll-up of a bot's day covers all its Sessions, so this
 * Session's cache reads and writes on that UTC day cannot exceed it. An excess is reported.
 */
function usageCheck(db: NonNullable<Awaited<ReturnType<typeof loadBotHarnessDb>>>, bot: string, requests: Session['requests'], file: string): Diagnostic[] {
  const days = new Map<string, { cacheRead: number; cacheWrite: number }>();
  for (const r of requests) {
    if (!r.usage || r.timeMs === null) continue;
    const day = new Date(r.timeMs).toISOString().slice(0, 10);
    const d = days.get(day) ?? { cacheRead: 0, cacheWrite: 0 };
    // Known counts only (a null one is unknown): still a lower bound of the Session's.
    d.cacheRead += r.usage.cacheRead ?? 0;
    d.cacheWrite += r.usage.cacheWrite ?? 0;
    days.set(day, d);
  }
  const out: Diagnostic[] = [];
  for (const [day, d] of days) {
    const roll = db.usage.get(`${bot}\u0000${day}`);
    if (!roll) continue;
    if (d.cacheRead > roll.cacheRead || d.cacheWrite > roll.cacheWrite) {
      out.push({ file, line: 0, severity: 'warning', message: `usage_daily (${bot}, ${day}) has cache read ${roll.cacheRead} / write ${roll.cacheWrite} tokens, less than this Session's log alone (${d.cacheRead} / ${d.cacheWrite})` });
    }
  }
  return out;
}
