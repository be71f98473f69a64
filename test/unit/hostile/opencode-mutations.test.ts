/**
 * Generated corpus, OpenCode: mutations of the recorded database (one `message` or `part` row's
 * JSON changed, replaced by garbage or by nothing, or moved to a prototype-key session) and of the
 * recorded WAL (bit flips, truncation, and commit frames with valid checksums but an absurd
 * database size). For every input: no crash, no hang, valid `--json` of the documented shape,
 * clean terminal output, nothing written, and no good row lost — every assistant message the
 * mutation did not touch still gives its request.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Database } from 'sql.js';
import { openFixture, query } from '../opencode/helpers.js';
import { checkJson, checkText, checkUnwritten, runCli, snapshot } from './harness.js';
import { applyValueMutations, fieldMutationArb, hostileArb, hostileText, PROTO_KEYS, valueMutationArb, type ValueMutation } from './mutate.js';

const SEED = 20261202;
const RUNS = 40;
const WAL_RUNS = 30;

/** The fields the OpenCode reader indexes tables with, turns into times, tokens and prices, or re-encodes. */
const FIELDS: Array<Array<string | number>> = [
  ['role'],
  ['providerID'],
  ['modelID'],
  ['time', 'created'],
  ['time', 'completed'],
  ['time', 'start'],
  ['tokens', 'input'],
  ['tokens', 'output'],
  ['tokens', 'cache', 'read'],
  ['tokens', 'cache', 'write'],
  ['cost'],
  ['error'],
  ['parentID'],
  ['type'],
  ['text'],
  ['tool'],
  ['callID'],
  ['state', 'status'],
  ['state', 'input'],
  ['state', 'output'],
  ['metadata'],
  ['synthetic'],
];

/** A change to one row of the recorded database. */
type RowMutation =
  | { table: 'message' | 'part'; pick: number; op: 'data'; muts: ValueMutation[] }
  | { table: 'message' | 'part'; pick: number; op: 'garbage'; text: string }
  | { table: 'message' | 'part'; pick: number; op: 'empty' }
  | { table: 'message' | 'part'; pick: number; op: 'session'; id: string };

const rowMutationArb: fc.Arbitrary<RowMutation> = fc.record({ table: fc.constantFrom('message' as const, 'part' as const), pick: fc.nat() }).chain((r) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.array(valueMutationArb, { minLength: 1, maxLength: 3 }).map((muts) => ({ ...r, op: 'data' as const, muts })) },
    { weight: 6, arbitrary: fc.array(fieldMutationArb(FIELDS), { minLength: 1, maxLength: 2 }).map((muts) => ({ ...r, op: 'data' as const, muts })) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ unit: 'binary', maxLength: 50 }), hostileArb.map(hostileText)).map((text) => ({ ...r, op: 'garbage' as const, text })) },
    { weight: 1, arbitrary: fc.constant({ ...r, op: 'empty' as const }) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS).map((id) => ({ ...r, op: 'session' as const, id })) },
  ),
);

interface RowRef {
  id: string;
  message: string;
  data: string;
}

describe('hostile corpus: OpenCode database and WAL mutations', function () {
  this.timeout(180_000);
  let dir: string;
  let fixture: Database;
  let rowsOf: Record<'message' | 'part', RowRef[]>;
  let baseline: string[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-hostile-opencode-'));
    fixture = await openFixture();
    rowsOf = {
      message: query(fixture, 'SELECT id, id AS message, data FROM message ORDER BY id').map((r) => ({ id: String(r.id), message: String(r.message), data: String(r.data) })),
      part: query(fixture, 'SELECT id, message_id AS message, data FROM part ORDER BY id').map((r) => ({ id: String(r.id), message: String(r.message), data: String(r.data) })),
    };
    assert.deepEqual([rowsOf.message.length, rowsOf.part.length], [62, 134], 'the recorded database: 62 messages, 134 parts');
    writeFileSync(join(dir, 'opencode.db'), fixture.export());
    const report = checkJson(await runCli(['analyze', '--json', '--no-cache', dir]), 'the recorded database');
    baseline = report.sessions.flatMap((s) => s.requests.map((r) => (r as { row?: string }).row ?? ''));
    assert.equal(baseline.length, 34, 'the recorded sessions make 34 requests');
  });
  after(() => {
    fixture.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${RUNS} generated row mutations: no crash, no hang, valid --json, clean terminal, nothing written, no good row lost`, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(rowMutationArb, async (m: RowMutation) => {
        const row = rowsOf[m.table][m.pick % rowsOf[m.table].length];
        const db = await openFixture();
        try {
          if (m.op === 'data') db.run(`UPDATE ${m.table} SET data = ? WHERE id = ?`, [applyValueMutations(row.data, m.muts), row.id]);
          else if (m.op === 'garbage') db.run(`UPDATE ${m.table} SET data = ? WHERE id = ?`, [m.text, row.id]);
          else if (m.op === 'empty') db.run(`UPDATE ${m.table} SET data = '' WHERE id = ?`, [row.id]);
          else db.run(`UPDATE ${m.table} SET session_id = ? WHERE id = ?`, [m.id, row.id]);
          writeFileSync(join(dir, 'opencode.db'), db.export());
        } finally {
          db.close();
        }
        const before = snapshot(dir);
        const what = `${m.table} row ${row.id}: ${JSON.stringify(m).slice(0, 300)}`;
        const report = checkJson(await runCli(['analyze', '--json', '--no-cache', dir]), what);
        const rows = new Set(report.sessions.flatMap((s) => s.requests.map((r) => (r as { row?: string }).row)));
        const lost = baseline.filter((r) => r !== `message:${row.message}` && !rows.has(r));
        assert.deepEqual(lost, [], `${what}: requests of untouched messages lost`);
        if (m.op === 'garbage' || m.op === 'empty') {
          assert.ok(report.sessions.some((s) => s.diagnostics.some((d) => d.message.includes(row.id))), `${what}: no diagnostic names the row`);
        }
        if (n++ % 4 === 0) checkText(await runCli(['analyze', '--no-cache', dir]), [0, 2], `${what} (text)`);
        checkUnwritten(before, dir, what);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it(`${WAL_RUNS} generated WAL mutations (bit flips, truncation, absurd commit sizes with valid checksums): no crash, no hang, no runaway allocation`, async () => {
    const WAL_DIR = 'test/fixtures/opencode/wal';
    const wal = new Uint8Array(readFileSync(join(WAL_DIR, 'opencode.db-wal')));
    const commits = validCommitFrames(wal);
    assert.ok(commits.length > 1, 'the recorded WAL holds several transactions');
    const walArb = fc.oneof(
      fc.record({ op: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('commit-size' as const), frame: fc.nat(), pages: fc.constantFrom(0xffffffff, 0x7fffffff, 1 << 24, 1 << 20, 300_000) }),
      fc.record({ op: fc.constant('page-number' as const), frame: fc.nat(), page: fc.constantFrom(0xffffffff, 1 << 24) }),
    );
    await fc.assert(
      fc.asyncProperty(walArb, async (m) => {
        let w: Uint8Array = Uint8Array.from(wal);
        if (m.op === 'flip') w[m.at % w.length] ^= 1 << m.bit;
        else if (m.op === 'truncate') w = w.subarray(0, m.at % w.length);
        // Mostly the last valid commit (its size is the database's), else any frame.
        else {
          const frame = m.frame % 2 === 0 ? commits[commits.length - 1] : m.frame;
          w = rewriteFrame(w, frame, m.op === 'commit-size' ? { commitSize: m.pages } : { page: m.page });
        }
        copyFileSync(join(WAL_DIR, 'opencode.db'), join(dir, 'opencode.db'));
        writeFileSync(join(dir, 'opencode.db-wal'), w);
        const before = snapshot(dir);
        const what = `WAL ${JSON.stringify(m)}`;
        const rssBefore = process.memoryUsage().rss;
        const report = checkJson(await runCli(['analyze', '--json', '--no-cache', dir]), what);
        // The recorded main file alone holds these sessions; a bad WAL may only take the newest rows away.
        assert.ok(report.sessions.length >= 6, `${what}: sessions of the main file lost`);
        assert.ok(process.memoryUsage().rss - rssBefore < 512 * 1024 * 1024, `${what}: RSS grew by more than 512 MB`);
        checkUnwritten(before, dir, what);
      }),
      { seed: SEED + 1, numRuns: WAL_RUNS },
    );
    rmSync(join(dir, 'opencode.db-wal'), { force: true });
  });

  it('a commit frame with valid checksums claiming 2^32-1 pages: the frames before it are applied, a warning names it', async () => {
    const WAL_DIR = 'test/fixtures/opencode/wal';
    const wal = new Uint8Array(readFileSync(join(WAL_DIR, 'opencode.db-wal')));
    copyFileSync(join(WAL_DIR, 'opencode.db'), join(dir, 'opencode.db'));
    writeFileSync(join(dir, 'opencode.db-wal'), rewriteFrame(wal, validCommitFrames(wal).at(-1)!, { commitSize: 0xffffffff }));
    const report = checkJson(await runCli(['analyze', '--json', '--no-cache', dir]), 'absurd commit size');
    const warnings = report.sessions[0].diagnostics.filter((d) => /more than the database and the WAL hold/.test(d.message));
    assert.equal(warnings.length, 1, JSON.stringify(report.sessions[0].diagnostics));
    assert.match(warnings[0].message, /^.*opencode\.db-wal: frame \d+ claims a database of 4294967295 pages, more than the database and the WAL hold \(\d+\); it and the frames after it are ignored; the newest rows may be missing$/);
    rmSync(join(dir, 'opencode.db-wal'), { force: true });
  });
});

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

function pageSizeOf(wal: Uint8Array): number {
  return new DataView(wal.buffer, wal.byteOffset).getUint32(8);
}

/**
 * Indices of the commit frames (database size ≠ 0) among the valid frames (salts of the header,
 * cumulative checksum holding), as a reader walks them.
 */
function validCommitFrames(wal: Uint8Array): number[] {
  const v = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const bigEndian = v.getUint32(0) === 0x377f0683;
  const frameSize = FRAME_HEADER + pageSizeOf(wal);
  let s: [number, number] = [v.getUint32(24), v.getUint32(28)];
  const out: number[] = [];
  for (let i = 0, off = WAL_HEADER; off + frameSize <= wal.length; i++, off += frameSize) {
    if (v.getUint32(off + 8) !== v.getUint32(16) || v.getUint32(off + 12) !== v.getUint32(20)) break;
    s = checksum(v, bigEndian, off, 8, s);
    s = checksum(v, bigEndian, off + FRAME_HEADER, frameSize - FRAME_HEADER, s);
    if (s[0] !== v.getUint32(off + 16) || s[1] !== v.getUint32(off + 20)) break;
    if (v.getUint32(off + 4) !== 0) out.push(i);
  }
  return out;
}

function checksum(v: DataView, bigEndian: boolean, off: number, len: number, s: [number, number]): [number, number] {
  let [s0, s1] = s;
  for (let i = off; i < off + len; i += 8) {
    s0 = (s0 + v.getUint32(i, !bigEndian) + s1) >>> 0;
    s1 = (s1 + v.getUint32(i + 4, !bigEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/**
 * A copy of `wal` with frame `frame` (modulo the frame count) given another page number or
 * database size, and every checksum from there on recomputed (SQLite's cumulative WAL checksum,
 * https://www.sqlite.org/fileformat2.html#walformat), so the frames stay valid to a reader.
 */
function rewriteFrame(wal: Uint8Array, frame: number, change: { commitSize?: number; page?: number }): Uint8Array {
  const out = Uint8Array.from(wal);
  const v = new DataView(out.buffer);
  const bigEndian = v.getUint32(0) === 0x377f0683;
  const frameSize = FRAME_HEADER + pageSizeOf(out);
  const frames = Math.floor((out.length - WAL_HEADER) / frameSize);
  if (frames === 0) return out;
  const target = frame % frames;
  const sum = (off: number, len: number, s: [number, number]) => checksum(v, bigEndian, off, len, s);
  let s: [number, number] = [v.getUint32(24), v.getUint32(28)];
  for (let i = 0; i < frames; i++) {
    const off = WAL_HEADER + i * frameSize;
    if (i === target) {
      if (change.commitSize !== undefined) v.setUint32(off + 4, change.commitSize);
      if (change.page !== undefined) v.setUint32(off, change.page);
    }
    s = sum(off, 8, s);
    s = sum(off + FRAME_HEADER, frameSize - FRAME_HEADER, s);
    if (i >= target) {
      v.setUint32(off + 16, s[0]);
      v.setUint32(off + 20, s[1]);
    } else {
      s = [v.getUint32(off + 16), v.getUint32(off + 20)];
    }
  }
  return out;
}
