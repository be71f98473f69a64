/** Shared helpers for the OpenCode reader tests: the recorded fixtures, temp dirs, edited databases. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import initSqlJs, { type Database } from 'sql.js';
import { blocksOf, type BlockNode } from '../../../src/core/chain.js';
import type { Block } from '../../../src/core/model.js';

export const FIXTURES = 'test/fixtures/opencode';
export const DB = join(FIXTURES, 'opencode.db');
export const REQUESTS = join(FIXTURES, 'requests');

/** Scenario name → root session id, child id → parent id (written by the recorder). */
export function sessionIds(root = FIXTURES): { sessions: Record<string, string>; children: Record<string, string> } {
  return JSON.parse(readFileSync(join(root, 'sessions.json'), 'utf8'));
}

export function tempDir(prefix = 'opencode-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Messages-segment blocks of a chain. */
export function messageBlocksOf(tail: BlockNode | null): Block[] {
  return blocksOf(tail).filter((b) => b.segment === 'messages');
}

/** Items in the messages segment of a chain. */
export function messageCount(tail: BlockNode | null): number {
  return new Set(messageBlocksOf(tail).map((b) => b.item)).size;
}

/** The recorded database opened in sql.js (a rollback-journal copy in memory). */
export async function openFixture(file = DB): Promise<Database> {
  const SQL = await initSqlJs();
  const image = new Uint8Array(readFileSync(file));
  image[18] = 1;
  image[19] = 1;
  return new SQL.Database(image);
}

/**
 * Writes `<dir>/opencode.db`: the recorded database after the given SQL statements.
 * @returns the database path
 */
export async function editedDb(dir: string, statements: string[]): Promise<string> {
  const db = await openFixture();
  for (const s of statements) db.run(s);
  const file = join(dir, 'opencode.db');
  writeFileSync(file, db.export());
  db.close();
  return file;
}

/** Rows of a query as objects. */
export function query(db: Database, sql: string): Array<Record<string, unknown>> {
  const r = db.exec(sql)[0];
  if (!r) return [];
  return r.values.map((v) => Object.fromEntries(r.columns.map((c, i) => [c, v[i]])));
}

/**
 * Writes the legacy JSON layout (OpenCode < 1.2) of the recorded sessions under `<dir>/storage`:
 * the inverse of OpenCode's `json-migration.ts` (row `data` + `id`, `sessionID`, `messageID`).
 */
export async function writeLegacyStorage(dir: string): Promise<string> {
  const db = await openFixture();
  const storage = join(dir, 'storage');
  const put = (path: string, value: unknown) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(value, null, 2));
  };
  for (const s of query(db, 'SELECT * FROM session')) {
    put(join(storage, 'session', String(s.project_id), `${s.id}.json`), {
      id: s.id,
      projectID: s.project_id,
      directory: s.directory,
      ...(s.parent_id ? { parentID: s.parent_id } : {}),
      title: s.title,
      version: '1.1.0',
      time: { created: s.time_created, updated: s.time_updated },
    });
  }
  for (const m of query(db, 'SELECT id, session_id, data FROM message')) {
    put(join(storage, 'message', String(m.session_id), `${m.id}.json`), { id: m.id, sessionID: m.session_id, ...JSON.parse(String(m.data)) });
  }
  for (const p of query(db, 'SELECT id, message_id, session_id, data FROM part')) {
    put(join(storage, 'part', String(p.message_id), `${p.id}.json`), { id: p.id, sessionID: p.session_id, messageID: p.message_id, ...JSON.parse(String(p.data)) });
  }
  db.close();
  return storage;
}
