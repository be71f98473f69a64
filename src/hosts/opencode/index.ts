/**
 * The OpenCode host reader (OpenCode 1.18.x SQLite store, and the JSON storage of < 1.2;
 * reference/opencode.md).
 *
 *   locateOpenCode(env)                       → data dir, database(s), legacy storage (locate.ts)
 *   readOpenCode(pathOrDir, {requestsDir?})   → normalized Sessions (read.ts → normalize.ts [→ wire.ts])
 *
 * Without `requestsDir` every request is reconstructed from the stored messages (evidence
 * `reconstructed`, head opaque). With it, captured bodies give the exact bytes (evidence `wire`).
 * Read-only: the database and its WAL are read into memory and never opened for writing.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Diagnostic, Session } from '../../core/model.js';
import { locateOpenCode } from './locate.js';
import { inferApis, normalizeSession, type OpenCodeApi } from './normalize.js';
import { readJsonStore, readSqliteStore, type StoreRead, type StoredSession } from './read.js';
import { withWire } from './wire.js';
import type { RequestSource } from '../wirematch.js';

export { locateOpenCode, openCodeDataDir, type OpenCodeLocation } from './locate.js';
export { readSqliteStore, readJsonStore, type StoredSession, type StoredMessage, type StoredPart, type StoreRead } from './read.js';
export { normalizeSession, filterCompacted, toModelMessages, usageOf, inferApis, HEAD_NOTE, type OpenCodeApi, type Reconstruction } from './normalize.js';
export { readOpenCodeBodies, applyWire, withWire, type OpenCodeBody } from './wire.js';
export { applyWal, type WalApplied } from './wal.js';

/** Options of `readOpenCode`. */
export interface ReadOpenCodeOptions {
  /** Environment for `opencode:<id>` (locates the data dir); defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Captured request bodies: a folder (`NNN-<kind>.body.json` + `.meta.json`) or body files in send order (the capture join): wire mode. */
  requestsDir?: RequestSource;
  /** Read only this session. */
  session?: string;
  /** Wire API per provider id, when the stored data does not tell (custom providers). */
  apis?: Record<string, OpenCodeApi>;
}

/**
 * Reads OpenCode sessions.
 * @param pathOrDir a data dir (holding `opencode.db` and/or `storage/`), a database file, a
 *   legacy `storage` folder, or `opencode:<sessionID>` (located with `opts.env`)
 * @returns one Session per stored session (child sessions are their own, with `parentId`), in
 *   creation order. Never throws for bad content: problems are diagnostics; when nothing can be
 *   read at all, one empty session carries them.
 */
export async function readOpenCode(pathOrDir: string, opts: ReadOpenCodeOptions = {}): Promise<Session[]> {
  let target = pathOrDir;
  let sessionId = opts.session;
  if (pathOrDir.startsWith('opencode:')) {
    sessionId = pathOrDir.slice('opencode:'.length) || undefined;
    const loc = locateOpenCode(opts.env ?? process.env);
    target = loc.db ?? loc.storage ?? loc.dataDir;
  }
  const reads: StoreRead[] = [];
  const storeOpts = { sessionId };
  const isDir = (() => {
    try {
      return statSync(target).isDirectory();
    } catch {
      return false;
    }
  })();
  if (!existsSync(target)) {
    return [failed(target, `no OpenCode data at ${target}`)];
  }
  if (!isDir) {
    reads.push(await readSqliteStore(target, storeOpts));
  } else if (existsSync(join(target, 'session')) && !existsSync(join(target, 'opencode.db'))) {
    reads.push(readJsonStore(target, storeOpts));
  } else {
    const db = join(target, 'opencode.db');
    if (existsSync(db)) reads.push(await readSqliteStore(db, storeOpts));
    if (existsSync(join(target, 'storage', 'session'))) {
      const legacy = readJsonStore(join(target, 'storage'), storeOpts);
      // 1.18 neither reads nor imports the legacy tree: keep the sessions the database lacks.
      const known = new Set(reads.flatMap((r) => r.sessions.map((s) => s.id)));
      reads.push({ sessions: legacy.sessions.filter((s) => !known.has(s.id)), diagnostics: legacy.diagnostics });
    }
    if (!reads.length) return [failed(target, `no opencode.db and no storage/ folder in ${target}`)];
  }

  const stored: StoredSession[] = reads.flatMap((r) => r.sessions);
  const storeDiagnostics: Diagnostic[] = reads.flatMap((r) => r.diagnostics);
  if (sessionId && !stored.some((s) => s.id === sessionId)) {
    return [failed(target, `session ${sessionId} not found in ${target}`, storeDiagnostics, sessionId)];
  }
  if (!stored.length) {
    if (storeDiagnostics.length) return [failed(target, 'no sessions could be read', storeDiagnostics)];
    return [];
  }
  const apis = inferApis(stored, opts.apis);
  const recons = stored.map((s) => normalizeSession(s, { apis }));
  // Store-level problems (WAL, missing tables, unreadable storage folders) concern every session
  // read from that store; those that concern none of them (a store all of whose sessions were
  // lost) are carried by an empty session of their own, so that no problem goes unreported.
  const attached = new Set<Diagnostic>();
  for (const r of recons) {
    const mine = storeDiagnostics.filter((d) => belongsTo(d.file, r.session.path));
    for (const d of mine) attached.add(d);
    r.session.diagnostics.unshift(...mine);
  }
  const orphans = storeDiagnostics.filter((d) => !attached.has(d));

  if (opts.requestsDir) await withWire(recons, opts.requestsDir);
  const sessions = recons.map((r) => r.session);
  if (orphans.length) sessions.push(unattached(target, orphans));
  return sessions;
}

/** An empty session carrying store problems that concern no session read (its requests are lost). */
function unattached(target: string, diagnostics: Diagnostic[]): Session {
  return { host: 'opencode', id: `${basename(target)} (unread)`, path: target, requests: [], diagnostics, ignored: {}, events: [] };
}

/** A store diagnostic's file is the store itself, its WAL (`opencode.db-wal`), or a file inside a storage folder. */
function belongsTo(file: string, storePath: string): boolean {
  return file === storePath || file.startsWith(`${storePath}-`) || file.startsWith(`${storePath}/`) || file.startsWith(`${storePath}\\`);
}

/** An empty session that carries the reason nothing could be read. */
function failed(path: string, message: string, diagnostics: Diagnostic[] = [], id?: string): Session {
  return {
    host: 'opencode',
    id: id ?? basename(path),
    path,
    requests: [],
    diagnostics: [...diagnostics, { file: path, line: 0, severity: 'error', message }],
    ignored: {},
    events: [],
  };
}
