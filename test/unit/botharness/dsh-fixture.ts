/**
 * Builds BotHarness fixtures in a temporary DSH home, from the documented shapes
 * (reference/botharness.md part A; the verbatim DSH fixtures in test/fixtures/botharness):
 *  - DSH session logs `sessions/--<cwd>--/<session id>/session.jsonl.zstd`: the header line alone
 *    in the first zstd frame, then one frame per write batch, compressed by the official zstd
 *    library (compiled to WebAssembly: @bokuweb/zstd-wasm; test setup only);
 *  - `botharness/botharness.db`, created with sql.js from the real table definitions of
 *    `packages/core/src/database/schema-plan.ts` (generations 2, 6, 9; inbox, source events, usage).
 * BotHarness and DSH are not installable here, so these are built, not recorded.
 */
import { compress, init } from '@bokuweb/zstd-wasm';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import initSqlJs from 'sql.js';

/** The real DDL, generation by generation (reference/botharness.md A.1). */
export const DDL = {
  schema: 'CREATE TABLE _botharness_schema (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), generation INTEGER NOT NULL)',
  gen2: [
    `CREATE TABLE session_ownership (
  session_id TEXT PRIMARY KEY,
  bot_slug   TEXT NOT NULL,
  root_role  TEXT NOT NULL CHECK (root_role IN ('orchestrator','assignment')),
  created_at TEXT NOT NULL)`,
    'CREATE INDEX session_ownership_bot_role ON session_ownership (bot_slug, root_role, created_at, session_id)',
  ],
  gen6: [
    `ALTER TABLE session_ownership ADD COLUMN provenance TEXT NOT NULL DEFAULT 'legacy'
  CHECK (provenance IN ('created','fork','subagent','repair','legacy'))`,
    'ALTER TABLE session_ownership ADD COLUMN parent_session_id TEXT',
    'ALTER TABLE session_ownership ADD COLUMN cwd_reference TEXT',
  ],
  gen9: ['ALTER TABLE session_ownership ADD COLUMN persona_snapshot TEXT', 'ALTER TABLE session_ownership ADD COLUMN persona_snapshot_at TEXT'],
  sourceEvents: `CREATE TABLE source_events (source_event_id TEXT PRIMARY KEY, source_kind TEXT NOT NULL CHECK (source_kind IN ('human-message','bot-message','system-message','assignment-report','assignment-lifecycle','memory-change','bridge-message')), bot_slug TEXT, channel_id TEXT, message_id TEXT, assignment_session_id TEXT, body TEXT, created_at TEXT NOT NULL, handled_at TEXT, attempt_state TEXT, side_effect_started_at TEXT, expects_reply INTEGER, observed_at TEXT, payload_json TEXT, UNIQUE(channel_id, message_id))`,
  inbox: `CREATE TABLE inbox_admissions (source_event_id TEXT NOT NULL REFERENCES source_events(source_event_id), bot_slug TEXT NOT NULL, reason TEXT NOT NULL CHECK (reason IN ('human-dm','group-mention','bot-dm','group-invite','group-ordinary','group-join-request','group-join-decision','assignment-report','assignment-lifecycle','memory-change')), attempt_state TEXT NOT NULL DEFAULT 'pending' CHECK (attempt_state IN ('pending','running','retryable','needs-repair','handled')), side_effect_started_at TEXT, handled_at TEXT, last_error TEXT, wake_count INTEGER, wake_interval_ms INTEGER, wake_policy_revision INTEGER, observed_at TEXT, ignored_at TEXT, ignored_by_session_id TEXT, wake_mode TEXT, source_policy_revision INTEGER, source_policy_wake_mode TEXT, external_thread_policy_revision INTEGER, external_default_revision INTEGER, PRIMARY KEY (source_event_id, bot_slug))`,
  usage: `CREATE TABLE usage_daily (bot_slug TEXT NOT NULL, day TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, purpose TEXT NOT NULL, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0, unknown_input INTEGER NOT NULL DEFAULT 0, unknown_output INTEGER NOT NULL DEFAULT 0, unknown_cache_read INTEGER NOT NULL DEFAULT 0, unknown_cache_write INTEGER NOT NULL DEFAULT 0, total_tokens INTEGER NOT NULL DEFAULT 0, unknown_total INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (bot_slug, day, provider, model, purpose))`,
};

/** One log line (an object) or a batch of them (one zstd frame). */
export type Batch = Array<Record<string, unknown>>;

let ready: Promise<void> | undefined;
/** Loads the zstd encoder once. */
export function zstdReady(): Promise<void> {
  return (ready ??= init());
}

/** One zstd frame holding these lines (each followed by a newline). Call `zstdReady()` first. */
export function frame(lines: Batch): Buffer {
  return Buffer.from(compress(Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join(''), 'utf8'), 3));
}

/** A whole log: the header alone in frame 0, then one frame per batch. */
export function logBytes(header: Record<string, unknown>, batches: Batch[]): Buffer {
  return Buffer.concat([frame([header]), ...batches.map(frame)]);
}

/** A fresh temporary DSH home. */
export function tempHome(label: string): string {
  return mkdtempSync(join(tmpdir(), `prefix-lens-dsh-${label}-`));
}

/** Writes a session log under a DSH home; returns its path. */
export function writeLog(home: string, cwdDir: string, sessionId: string, bytes: Buffer, name = 'session.jsonl.zstd'): string {
  const dir = join(home, 'sessions', cwdDir, sessionId);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

/** Rows of the fixture database. */
export interface DbRows {
  /** Highest generation applied: 6 = before the snapshot columns, 9+ = with them. */
  generation: number;
  ownership: Array<{ session_id: string; bot_slug: string; root_role?: string; created_at: string; provenance?: string; parent_session_id?: string | null; cwd_reference?: string | null; persona_snapshot?: string | null; persona_snapshot_at?: string | null }>;
  memoryChanges?: Array<{ id: string; bot: string; body: string; payload: unknown; observedAt: string }>;
  usage?: Array<{ bot: string; day: string; provider: string; model: string; input: number; output: number; cacheRead: number; cacheWrite: number }>;
}

/** Creates `<home>/botharness/botharness.db` with the real DDL up to `rows.generation`. */
export async function writeDb(home: string, rows: DbRows): Promise<string> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run(DDL.schema);
  db.run('INSERT INTO _botharness_schema VALUES (1, ?)', [rows.generation]);
  for (const s of DDL.gen2) db.run(s);
  for (const s of DDL.gen6) db.run(s);
  if (rows.generation >= 9) for (const s of DDL.gen9) db.run(s);
  db.run(DDL.sourceEvents);
  db.run(DDL.inbox);
  db.run(DDL.usage);
  for (const o of rows.ownership) {
    const cols = ['session_id', 'bot_slug', 'root_role', 'created_at', 'provenance', 'parent_session_id', 'cwd_reference'];
    const vals: Array<string | null> = [o.session_id, o.bot_slug, o.root_role ?? 'orchestrator', o.created_at, o.provenance ?? 'created', o.parent_session_id ?? null, o.cwd_reference ?? null];
    if (rows.generation >= 9) {
      cols.push('persona_snapshot', 'persona_snapshot_at');
      vals.push(o.persona_snapshot ?? null, o.persona_snapshot_at ?? null);
    }
    db.run(`INSERT INTO session_ownership (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, vals);
  }
  for (const m of rows.memoryChanges ?? []) {
    db.run("INSERT INTO source_events (source_event_id, source_kind, bot_slug, body, created_at, observed_at, payload_json) VALUES (?, 'memory-change', ?, ?, ?, ?, ?)", [m.id, m.bot, m.body, m.observedAt, m.observedAt, JSON.stringify(m.payload)]);
    db.run("INSERT INTO inbox_admissions (source_event_id, bot_slug, reason, attempt_state, observed_at) VALUES (?, ?, 'memory-change', 'handled', ?)", [m.id, m.bot, m.observedAt]);
  }
  for (const u of rows.usage ?? []) {
    db.run("INSERT INTO usage_daily (bot_slug, day, provider, model, purpose, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens) VALUES (?, ?, ?, ?, 'orchestrator', ?, ?, ?, ?, ?)", [u.bot, u.day, u.provider, u.model, u.input, u.output, u.cacheRead, u.cacheWrite, u.input + u.output + u.cacheRead + u.cacheWrite]);
  }
  const dir = join(home, 'botharness');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'botharness.db');
  writeFileSync(file, Buffer.from(db.export()));
  db.close();
  return file;
}
