/**
 * Bad input: the recorded database edited with sql.js (a missing table, a part whose JSON does not
 * parse, a message without parts, an unknown part type), half-written files, a broken legacy
 * file. Each gives a Diagnostic with the file and the row; the rest is still analyzed; nothing throws.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from '../../../src/core/model.js';
import { readOpenCode } from '../../../src/hosts/opencode/index.js';
import { DB, cleanup, editedDb, openFixture, query, sessionIds, tempDir, writeLegacyStorage } from './helpers.js';

const S = sessionIds().sessions;

describe('OpenCode reader: bad input', () => {
  let dir: string;
  let ids: { textPart: string; userMessage: string; firstAssistant: string };
  before(async () => {
    const db = await openFixture();
    const user = query(db, `SELECT id FROM message WHERE session_id = '${S.basic}' ORDER BY time_created, id`);
    const text = query(db, `SELECT id FROM part WHERE message_id = '${user[2].id}' ORDER BY id`);
    ids = { userMessage: String(user[2].id), textPart: String(text[0].id), firstAssistant: String(user[1].id) };
    db.close();
  });
  beforeEach(() => (dir = tempDir()));
  afterEach(() => cleanup(dir));
  const basic = (ss: Session[]) => ss.find((s) => s.id === S.basic)!;

  it('captured bodies of another host are not mixed in: error naming the folder, requests reconstructed', async () => {
    const sessions = await readOpenCode(DB, { requestsDir: 'test/fixtures/pi/main/requests' });
    const b = basic(sessions);
    assert.ok(b.requests.every((r) => r.evidence === 'reconstructed'));
    const d = b.diagnostics.find((x) => x.severity === 'error')!;
    assert.equal(d.file, 'test/fixtures/pi/main/requests');
    assert.match(d.message, /^none of the 16 captured bodies in test\/fixtures\/pi\/main\/requests belongs to a session here/);
  });

  it('a capture meta that is not JSON: a warning at that meta file, line 1, in the session it belongs to', async () => {
    const requests = join(dir, 'requests');
    cpSync('test/fixtures/opencode/requests', requests, { recursive: true });
    const metaOf = (n: string) => JSON.parse(readFileSync(join(requests, n), 'utf8')) as { headers?: Record<string, string> };
    const name = readdirSync(requests).find((n) => n.endsWith('-agent.meta.json') && metaOf(n).headers?.['x-session-id'] === S.basic)!;
    writeFileSync(join(requests, name), '{"kind": "ag');
    const [s] = await readOpenCode(DB, { requestsDir: requests, session: S.basic });
    assert.deepEqual(
      s.diagnostics.filter((d) => d.file.endsWith('.meta.json')).map((d) => [d.file, d.line, d.severity]),
      [[join(requests, name), 1, 'warning']],
    );
    assert.match(s.diagnostics.find((d) => d.file.endsWith('.meta.json'))!.message, /^meta file is not JSON; ignored/);
  });

  it('a part whose JSON does not parse: error at its row, the part skipped, every request still there', async () => {
    const db = await editedDb(dir, [`UPDATE part SET data = '{"type":"text","text":' WHERE id = '${ids.textPart}'`]);
    const s = basic(await readOpenCode(db));
    assert.equal(s.requests.length, 6);
    const d = s.diagnostics.filter((x) => x.message.includes(ids.textPart));
    assert.equal(d[0].file, db);
    assert.equal(d[0].severity, 'error');
    assert.match(d[0].message, new RegExp(`^row part:${ids.textPart} \\(message ${ids.userMessage}\\): data is not JSON`));
    // the user message lost its only part: reported as a message without parts
    assert.ok(s.diagnostics.some((x) => x.message.startsWith(`message:${ids.userMessage}: message has no (readable) parts`)));
  });

  it('a message without parts: warning, counted as ignored, OpenCode sends nothing for it', async () => {
    const db = await editedDb(dir, [`DELETE FROM part WHERE message_id = '${ids.userMessage}'`]);
    const s = basic(await readOpenCode(db));
    assert.deepEqual(s.ignored, { 'message:no-parts': 1 });
    assert.equal(s.diagnostics.length, 1);
    assert.equal(s.diagnostics[0].severity, 'warning');
    // request 2 (the read tool call) had 3 messages; without its user message it has 2
    assert.equal(s.requests.length, 6);
  });

  it('an unknown part type: warning with the row, counted, the rest of the message is used', async () => {
    const db = await editedDb(dir, [`UPDATE part SET data = json_set(data, '$.type', 'hologram') WHERE id = '${ids.textPart}'`]);
    const s = basic(await readOpenCode(db));
    assert.deepEqual(s.ignored, { 'part:hologram': 1, 'message:no-parts': 1 });
    assert.match(s.diagnostics[0].message, /unknown part type `hologram`; ignored/);
  });

  it('a message that is not an OpenCode message: error at its row, skipped', async () => {
    const db = await editedDb(dir, [`UPDATE message SET data = '{"role":"robot"}' WHERE id = '${ids.firstAssistant}'`]);
    const s = basic(await readOpenCode(db));
    assert.equal(s.requests.length, 5);
    assert.match(s.diagnostics[0].message, new RegExp(`^row message:${ids.firstAssistant}: not an OpenCode message`));
  });

  it('a missing part table: an error for the database, messages still listed (their tokens still count)', async () => {
    const db = await editedDb(dir, ['DROP TABLE part']);
    const ss = await readOpenCode(db);
    const s = basic(ss);
    assert.equal(s.requests.length, 6);
    assert.ok(s.requests.every((r) => r.usage !== null));
    assert.match(s.diagnostics[0].message, /table `part` is missing/);
  });

  it('a missing message table: an error, sessions without requests', async () => {
    const db = await editedDb(dir, ['DROP TABLE message']);
    const ss = await readOpenCode(db);
    assert.equal(ss.length, 6);
    assert.ok(ss.every((s) => s.requests.length === 0));
    assert.ok(ss[0].diagnostics.some((d) => /table `message` is missing .*; no requests can be read/.test(d.message) && d.severity === 'error'));
  });

  it('a half-written database file: one session carrying the error, no exception', async () => {
    const file = join(dir, 'opencode.db');
    writeFileSync(file, readFileSync(DB).subarray(0, 5000));
    const ss = await readOpenCode(file);
    assert.equal(ss.length, 1);
    assert.equal(ss[0].requests.length, 0);
    assert.ok(ss[0].diagnostics.some((d) => d.severity === 'error' && d.file === file && /cannot (read|open) the database/.test(d.message)), JSON.stringify(ss[0].diagnostics));
  });

  it('a file that is not a database, an empty one, and a path that is a directory', async () => {
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, 'this is not sqlite at all, just text that OpenCode never wrote\n'.repeat(10));
    assert.match((await readOpenCode(garbage))[0].diagnostics[0].message, /not an SQLite database/);
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    assert.match((await readOpenCode(empty))[0].diagnostics[0].message, /the database is empty/);
    const folder = join(dir, 'folder.db');
    mkdirSync(folder);
    writeFileSync(join(folder, 'x'), '');
    assert.match((await readOpenCode(folder))[0].diagnostics.at(-1)!.message, /no opencode\.db and no storage\/ folder/);
    assert.match((await readOpenCode(join(dir, 'nope')))[0].diagnostics[0].message, /no OpenCode data at/);
  });

  it('legacy JSON: a broken part file is an error at that file, line 1; the rest is read', async () => {
    const storage = await writeLegacyStorage(dir);
    const db = await openFixture();
    const [p] = query(db, `SELECT id, message_id FROM part WHERE id = '${ids.textPart}'`);
    db.close();
    const file = join(storage, 'part', String(p.message_id), `${p.id}.json`);
    writeFileSync(file, '{"id": "truncated');
    const s = basic(await readOpenCode(dir));
    assert.equal(s.requests.length, 6);
    assert.deepEqual(
      s.diagnostics.filter((d) => d.file === file).map((d) => [d.line, d.severity]),
      [[1, 'error']],
    );
    assert.match(s.diagnostics.find((d) => d.file === file)!.message, /^not JSON/);
  });
});
