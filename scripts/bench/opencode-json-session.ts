/**
 * Writes a generated OpenCode legacy JSON storage (< 1.2: `storage/session|message|part/…json`,
 * one file per message and per part) for the scaling figures of README "Scaling per host": the
 * recording's basic session (test/fixtures/opencode/opencode.db) with its second turn (a user
 * message, an assistant message calling `read`, the assistant's answer: two requests) repeated
 * `repeats` times after it, with new ids and times, as the SQLite figures repeat it.
 *
 *   npx tsx scripts/bench/opencode-json-session.ts OUT_DIR REPEATS
 *
 * Writes OUT_DIR/opencode-json-<REPEATS>/storage (a data dir: `analyze DIR --json --no-cache`)
 * and prints the data dir.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import initSqlJs from 'sql.js';

const DB = 'test/fixtures/opencode/opencode.db';
const BASIC = 'ses_dcf12ad33ffeT01cYx7vI2BFm7';
/** Index (in time order) of the second turn's user message, and the messages it spans. */
const TURN = { from: 2, count: 3 };
/** Time between repeated turns (ms): inside the 5-minute TTL. */
const STEP_MS = 6000;

type Obj = Record<string, unknown>;

/** A copy of `v` with every number inside a `time` object moved by `ms`. */
function shifted(v: unknown, ms: number, inTime = false): unknown {
  if (typeof v === 'number') return inTime ? v + ms : v;
  if (Array.isArray(v)) return v.map((x) => shifted(x, ms, false));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shifted(x, ms, inTime || k === 'time')]));
  return v;
}

/** Writes the storage under `dataDir`. */
export async function writeOpenCodeJson(dataDir: string, repeats: number): Promise<void> {
  const SQL = await initSqlJs();
  const image = new Uint8Array(readFileSync(DB));
  image[18] = 1; // read as a rollback-journal database (the fixture's WAL header bytes)
  image[19] = 1;
  const db = new SQL.Database(image);
  const query = (sql: string): Obj[] => {
    const r = db.exec(sql)[0];
    return r ? r.values.map((v) => Object.fromEntries(r.columns.map((c, i) => [c, v[i]]))) : [];
  };
  const storage = join(dataDir, 'storage');
  const put = (path: string, value: unknown) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(value, null, 2));
  };
  const [s] = query(`SELECT * FROM session WHERE id = '${BASIC}'`);
  put(join(storage, 'session', String(s.project_id), `${s.id}.json`), { id: s.id, projectID: s.project_id, directory: s.directory, title: s.title, version: '1.1.0', time: { created: s.time_created, updated: s.time_updated } });
  const messages = query(`SELECT id, data FROM message WHERE session_id = '${BASIC}' ORDER BY time_created, id`).map((m) => ({
    id: String(m.id),
    data: JSON.parse(String(m.data)) as Obj,
    parts: query(`SELECT id, data FROM part WHERE message_id = '${m.id}' ORDER BY id`).map((p) => ({ id: String(p.id), data: JSON.parse(String(p.data)) as Obj })),
  }));
  /** Writes message `m` as copy `k` (0: the recorded one) moved by `ms`. */
  const write = (m: (typeof messages)[number], k: number, ms: number) => {
    const id = (x: string) => (k ? `${x.slice(0, 4)}${String(k).padStart(6, '0')}${x.slice(4)}` : x);
    const data = shifted(m.data, ms) as Obj;
    if (typeof data.parentID === 'string') data.parentID = id(data.parentID);
    put(join(storage, 'message', BASIC, `${id(m.id)}.json`), { id: id(m.id), sessionID: BASIC, ...data });
    for (const p of m.parts) put(join(storage, 'part', id(m.id), `${id(p.id)}.json`), { id: id(p.id), sessionID: BASIC, messageID: id(m.id), ...(shifted(p.data, ms) as Obj) });
  };
  const turn = messages.slice(TURN.from, TURN.from + TURN.count);
  const span = STEP_MS * (repeats + 1);
  messages.forEach((m, i) => write(m, 0, i >= TURN.from + TURN.count ? span : 0));
  for (let k = 1; k <= repeats; k++) for (const m of turn) write(m, k, STEP_MS * k);
  db.close();
}

if (process.argv[1] && /opencode-json-session\.ts$/.test(process.argv[1])) {
  const [out, n] = process.argv.slice(2);
  const dir = join(out, `opencode-json-${n}`);
  writeOpenCodeJson(dir, Number(n)).then(() => console.log(dir));
}
