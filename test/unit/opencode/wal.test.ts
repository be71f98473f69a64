/**
 * WAL handling: `test/fixtures/opencode/wal/` was copied while `opencode serve` was still running,
 * so the manual compaction of the compaction session and the turn after it exist only in
 * `opencode.db-wal`. The reader applies the committed frames in memory; torn or stale frames are
 * ignored the way SQLite's recovery ignores them.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyWal, readOpenCode, readSqliteStore } from '../../../src/hosts/opencode/index.js';
import { cleanup, openFixture, query, sessionIds, tempDir } from './helpers.js';

const WAL_DIR = 'test/fixtures/opencode/wal';
const S = sessionIds().sessions;
const MAIN = readFileSync(join(WAL_DIR, 'opencode.db'));
const WAL = readFileSync(join(WAL_DIR, 'opencode.db-wal'));

/** Copies the snapshot (optionally with a changed WAL) into a temp dir; returns the db path. */
function snapshot(dir: string, wal: Uint8Array | null): string {
  const db = join(dir, 'opencode.db');
  copyFileSync(join(WAL_DIR, 'opencode.db'), db);
  if (wal) writeFileSync(`${db}-wal`, wal);
  return db;
}

const compactionKinds = async (db: string) => {
  const s = (await readOpenCode(db)).find((x) => x.id === S.compaction)!;
  return s.requests.map((r) => r.kind[0]).join('');
};

describe('OpenCode reader: rows that exist only in opencode.db-wal', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => cleanup(dir));

  it('the main file alone lacks the newest rows: 58 messages, the compaction session ends before the manual compaction', async () => {
    const db = snapshot(dir, null);
    const store = await readSqliteStore(db);
    assert.equal(store.sessions.reduce((n, s) => n + s.messages.length, 0), 58);
    assert.equal(await compactionKinds(db), 'aaaasaa');
  });

  it('with the WAL applied in memory: 62 messages, the manual compaction summary and the turn after it', async () => {
    const db = snapshot(dir, WAL);
    const store = await readSqliteStore(db);
    assert.deepEqual(store.diagnostics, []);
    assert.equal(store.sessions.reduce((n, s) => n + s.messages.length, 0), 62);
    assert.equal(await compactionKinds(db), 'aaaasaasa');
    // the same as the checkpointed database written after the run
    const final = await openFixture();
    assert.equal(query(final, 'SELECT count(*) AS n FROM message')[0].n, 62);
    final.close();
  });

  it('applies only committed frames with matching salts and checksums', () => {
    const pageSize = WAL.readUInt32BE(8);
    const frame = 24 + pageSize;
    assert.equal(pageSize, 4096);
    assert.equal((WAL.length - 32) / frame, 381);
    // The WAL was restarted during the run: 231 frames (26 transactions) of the current generation,
    // then 150 frames of an older one whose salts no longer match.
    const full = applyWal(MAIN, WAL);
    assert.deepEqual([full.frames, full.commits, full.ignoredFrames, full.staleFrames, full.problem], [231, 26, 0, 150, undefined]);
    const end = 32 + 231 * frame;
    // A torn last frame (cut while being written): its transaction is dropped, the 25 before apply.
    const torn = applyWal(MAIN, WAL.subarray(0, end - 100));
    assert.equal(torn.commits, 25);
    assert.equal(torn.frames, 222); // the 26th transaction's 9 frames dropped
    // A flipped byte in that frame's page breaks the cumulative checksum: the same.
    const flipped = Buffer.from(WAL);
    flipped[end - 10] ^= 0xff;
    assert.deepEqual([applyWal(MAIN, flipped).commits, applyWal(MAIN, flipped).frames], [25, torn.frames]);
    // Wrong salt in the first frame: nothing applies (a WAL reset by a checkpoint).
    const salted = Buffer.from(WAL);
    salted.writeUInt32BE(salted.readUInt32BE(32 + 8) ^ 1, 32 + 8);
    const s = applyWal(MAIN, salted);
    assert.equal(s.frames, 0);
    assert.equal(s.image, MAIN);
    // A bad header is reported and ignored.
    assert.match(applyWal(MAIN, Buffer.alloc(64)).problem!, /not a WAL file/);
  });

  it('a torn WAL still reads: older rows from the committed frames, a note, no exception', async () => {
    const db = snapshot(dir, WAL.subarray(0, 32 + 231 * 4120 - 100));
    const sessions = await readOpenCode(db);
    assert.equal(sessions.length, 6);
    assert.ok(sessions.every((s) => s.diagnostics.every((d) => d.severity !== 'error')));
  });

  it('a WAL with a broken header gives a warning and the main file is read', async () => {
    const bad = Buffer.from(WAL);
    bad.writeUInt32BE(0x12345678, 0);
    const db = snapshot(dir, bad);
    const sessions = await readOpenCode(db);
    const c = sessions.find((x) => x.id === S.compaction)!;
    assert.equal(c.requests.length, 7);
    assert.match(c.diagnostics[0].message, /opencode\.db-wal ignored: not a WAL file/);
    assert.equal(c.diagnostics[0].severity, 'warning');
  });
});
