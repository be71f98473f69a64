/**
 * The Pi reader validates a current-version file line by line as it reads it (read.ts
 * PiReadBuilder): past a valid version-3 header each object line becomes its entry, or is dropped,
 * right away, instead of every line's object being held until the end of the file. Nothing a read
 * gives may change: the same diagnostics in the same order (lines, head, entries, links), the same
 * entries and tree, a compaction keeping a later entry still named as one (the links are checked
 * once every entry is known), and the live reader, grown line by line, gives the full read at every
 * step. Older versions, files without a valid header and newer versions keep the whole-file path
 * (their migrations and version guess are file-wide).
 */
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { analyzeSession } from '../../../src/core/analyze.js';
import type { Session } from '../../../src/core/model.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { PiLiveSession } from '../../../src/hosts/pi/live.js';
import { PiReadBuilder, readPiFile, type PiRead } from '../../../src/hosts/pi/read.js';
import { sessionReport } from '../../../src/report/json.js';
import { HEADER, assistant, cleanup, entry, tempDir, user, writeJsonl } from './helpers.js';

const NO_ID = '(no type) entry without a valid id/parentId (type: Invalid input: expected string, received undefined; id: Invalid input: expected string, received undefined; parentId: Invalid input: expected string, received undefined); skipped';
const DONE = 'no entry before the compaction is kept (its context is read as the summary, then the entries after it, as Pi builds it)';

/** A version-3 session with bad lines among the good ones, a reused id, a parent on a later line and a compaction keeping a later entry. */
function mixed(): Array<object | string> {
  return [
    HEADER, // 1
    user('u1', null, 'Hello'), // 2
    '{}', // 3: no entry
    assistant('a1', 'u1', 'Hi'), // 4: its parent u1 is the line-11 entry (the later one wins): a later line
    '[1]', // 5: not an object
    'not json {', // 6: malformed
    entry('x1', 'a1', 'context_edit', { targetId: 'u1' }), // 7: unknown type, kept as a node
    entry('c1', 'x1', 'compaction', { summary: 'so far', firstKeptEntryId: 'u2', tokensBefore: 100 }), // 8: keeps a later entry
    entry('m1', 'c1', 'message', { message: { role: 'assistant' } }), // 9: does not fit the schema
    user('u2', 'm1', 'Again'), // 10
    user('u1', 'u2', 'Hello again'), // 11: a reused id
    assistant('a3', 'f1', 'Answer'), // 12: its parent is on line 13
    user('f1', 'u1', 'Forward'), // 13
    assistant('a4', 'f1', 'Last', { usage: { input: 10, output: 2, cacheRead: -5, cacheWrite: 0 } }), // 14: a bad count
  ];
}

const rows = (read: PiRead) => read.entries.map((e) => [e.line, e.order, e.id, e.type, e.parent?.line ?? null, e.entry === null]);
const report = (s: Session) => JSON.stringify(sessionReport(analyzeSession(s)));

/** A full garbage collection (V8's `gc`, exposed for this test). */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('Pi reader: a current-version file is validated line by line, with the same results', () => {
  let dir: string;
  before(async () => (dir = await tempDir('pi-stream-')));
  after(async () => cleanup(dir));

  it('bad lines among good ones, a reused id, a later parent, a compaction keeping a later entry: every diagnostic, in phase and line order', async () => {
    const file = join(dir, 'mixed.jsonl');
    await writeJsonl(file, mixed());
    const read = await readPiFile(file);
    assert.deepEqual(
      read.diagnostics.map((d) => [d.line, d.severity, d.message]),
      [
        // lines
        [5, 'error', 'line is JSON but not an object; skipped'],
        [6, 'error', 'malformed JSON line skipped: Unexpected token \'o\', "not json {" is not valid JSON'],
        [14, 'warning', 'values taken as unknown: message.usage.cacheRead -5 is not a token count (a non-negative integer ≤ 1000000000000)'],
        // entries
        [3, 'error', NO_ID],
        [9, 'warning', 'assistant message does not match the Pi 0.73 schema (content: Invalid input: expected array, received undefined; api: Invalid input: expected string, received undefined; provider: Invalid input: expected string, received undefined); kept as a tree node only'],
        [11, 'warning', 'duplicate entry id u1; the later entry wins (as in Pi)'],
        // links
        [4, 'warning', 'parentId u1 refers to a later line (11); entry treated as a root'],
        [12, 'warning', 'parentId f1 refers to a later line (13); entry treated as a root'],
        [8, 'warning', `compaction firstKeptEntryId "u2" is a later entry (line 10): ${DONE}`],
      ],
    );
    assert.deepEqual(rows(read), [
      [2, 0, 'u1', 'message', null, false],
      [4, 1, 'a1', 'message', null, false],
      [7, 2, 'x1', 'context_edit', 4, true],
      [8, 3, 'c1', 'compaction', 7, false],
      [9, 4, 'm1', 'message', 8, true],
      [10, 5, 'u2', 'message', 9, false],
      [11, 6, 'u1', 'message', 10, false],
      [12, 7, 'a3', 'message', null, false],
      [13, 8, 'f1', 'message', 11, false],
      [14, 9, 'a4', 'message', 13, false],
    ]);
    assert.equal(read.byId.get('u1')?.line, 11);
    assert.deepEqual(read.ignored, { context_edit: 1 });
    assert.equal(read.version, 3);
    assert.equal(read.header?.id, HEADER.id);
    const s = await readPiSession(file);
    assert.deepEqual(
      s.requests.map((r) => r.source.line),
      [4, 12, 14],
    );
  });

  it('the same bad lines grown line by line in the live reader: the full read at every step; the reused id reads again', async () => {
    const file = join(dir, 'mixed-live.jsonl');
    // Without what a later line changes (a compaction keeping, a parent on, a later line: a live
    // read words them as not found until the line is there), the reused id last.
    const m = mixed();
    m[7] = entry('c1', 'x1', 'compaction', { summary: 'so far', firstKeptEntryId: 'gone', tokensBefore: 100 });
    m[11] = assistant('a3', 'u2', 'Answer');
    m.push(m.splice(10, 1)[0]);
    const lines = m.map((l) => (typeof l === 'string' ? l : JSON.stringify(l)) + '\n');
    writeFileSync(file, lines.slice(0, 2).join(''));
    const live = await PiLiveSession.open(file);
    assert.equal(report(live.session()), report(await readPiSession(file)));
    const changes: string[] = [];
    for (const l of lines.slice(2)) {
      appendFileSync(file, l);
      changes.push(await live.update());
      assert.equal(report(live.session()), report(await readPiSession(file)), `after ${l}`);
    }
    // The last line reuses an earlier id: a full read links earlier entries to it, so the live reader reads again there.
    assert.deepEqual(changes, [...Array<string>(11).fill('appended'), 'reset']);
    assert.deepEqual(
      live.session().diagnostics.map((d) => [d.line, d.severity, d.message]),
      [
        [5, 'error', 'line is JSON but not an object; skipped'],
        [6, 'error', 'malformed JSON line skipped: Unexpected token \'o\', "not json {" is not valid JSON'],
        [13, 'warning', 'values taken as unknown: message.usage.cacheRead -5 is not a token count (a non-negative integer ≤ 1000000000000)'],
        [3, 'error', NO_ID],
        [9, 'warning', 'assistant message does not match the Pi 0.73 schema (content: Invalid input: expected array, received undefined; api: Invalid input: expected string, received undefined; provider: Invalid input: expected string, received undefined); kept as a tree node only'],
        [14, 'warning', 'duplicate entry id u1; the later entry wins (as in Pi)'],
        [4, 'warning', 'parentId u1 refers to a later line (14); entry treated as a root'],
        [12, 'warning', 'parentId u1 refers to a later line (14); entry treated as a root'],
        [8, 'warning', `compaction firstKeptEntryId "gone" not found: ${DONE}`],
      ],
    );
  });

  it('a bad line before the header: the header is still the first object line (line 2), and the entries are validated as they come', async () => {
    const file = join(dir, 'late-header.jsonl');
    await writeJsonl(file, ['{"type":"sess', HEADER, user('u1', null, 'Hello'), '{}', assistant('a1', 'u1', 'Hi')]);
    const read = await readPiFile(file);
    assert.deepEqual(
      read.diagnostics.map((d) => [d.line, d.severity, d.message]),
      [
        [1, 'error', 'malformed JSON line skipped: Unterminated string in JSON at position 13'],
        [4, 'error', NO_ID],
      ],
    );
    assert.equal(read.header?.id, HEADER.id);
    assert.deepEqual(rows(read), [
      [3, 0, 'u1', 'message', null, false],
      [5, 1, 'a1', 'message', 3, false],
    ]);
  });

  it('a v2 file is still migrated file-wide: hookMessage read as custom; a v1 file gets its id chain and firstKeptEntryIndex as an id', async () => {
    const v2 = join(dir, 'v2.jsonl');
    await writeJsonl(v2, [
      { ...HEADER, version: 2 },
      user('u1', null, 'Hello'),
      '{}',
      entry('h1', 'u1', 'message', { message: { role: 'hookMessage', customType: 'note', content: 'from a hook', display: true, timestamp: 1 } }),
      assistant('a1', 'h1', 'Hi'),
    ]);
    const r2 = await readPiFile(v2);
    assert.equal(r2.version, 2);
    assert.deepEqual(
      r2.diagnostics.map((d) => [d.line, d.message]),
      [[3, NO_ID]],
    );
    const h1 = r2.byId.get('h1')?.entry;
    assert.equal(h1?.type === 'message' ? h1.message.role : null, 'custom');

    const v1 = join(dir, 'v1.jsonl');
    const { version: _, ...v1Header } = HEADER;
    await writeJsonl(v1, [
      v1Header,
      { type: 'message', timestamp: '2026-11-29T10:00:02.000Z', message: { role: 'user', content: 'Hello', timestamp: 1 } },
      '{}',
      { type: 'message', timestamp: '2026-11-29T10:00:03.000Z', message: { role: 'user', content: 'Again', timestamp: 2 } },
      { type: 'compaction', timestamp: '2026-11-29T10:00:04.000Z', summary: 'so far', firstKeptEntryIndex: 3 },
    ]);
    const r1 = await readPiFile(v1);
    assert.equal(r1.version, 1);
    assert.deepEqual(
      r1.entries.map((e) => [e.line, e.id, e.parentId, e.type]),
      [
        [2, 'v1-line-2', null, 'message'],
        [4, 'v1-line-4', 'v1-line-3', 'message'],
        [5, 'v1-line-5', 'v1-line-4', 'compaction'],
      ],
    );
    // Index 3 of the file's object lines (the header is 0, `{}` is 2): line 4.
    const c = r1.byId.get('v1-line-5')?.entry;
    assert.equal(c?.type === 'compaction' ? c.firstKeptEntryId : null, 'v1-line-4');
    // The `{}` got an id in the chain (every object line does, as in Pi's migration), so line 4's parent is not found.
    assert.deepEqual(
      r1.diagnostics.map((d) => [d.line, d.severity, d.message]),
      [
        [3, 'error', '(no type) entry without a valid id/parentId (type: Invalid input: expected string, received undefined); skipped'],
        [4, 'warning', 'parentId v1-line-3 not found; entry treated as a root (its context starts here)'],
      ],
    );
  });

  it('past a version-3 header a line that is no entry is not held; before the header is known, or with an older one, every object line is', async () => {
    const held = async (header: object): Promise<boolean> => {
      const b = new PiReadBuilder('held.jsonl', [], {});
      b.push({ line: 1, obj: { ...header } });
      const ref = pushTracked(b);
      // A WeakRef's target lives until the end of the job that made it.
      await new Promise((resolve) => setImmediate(resolve));
      collect();
      const kept = ref.deref() !== undefined;
      b.build(2);
      return kept;
    };
    assert.equal(await held(HEADER), false);
    assert.equal(await held({ ...HEADER, version: 2 }), true);
    assert.equal(await held({ ...HEADER, version: 4 }), true);
    assert.equal(await held({ type: 'message', id: 'u0', parentId: null }), true);
  });
});

/** Pushes a `{}` line to `b` and returns a weak reference to its object (made in another function, so that nothing here holds it). */
function pushTracked(b: PiReadBuilder): WeakRef<object> {
  const obj = {};
  b.push({ line: 2, obj });
  return new WeakRef(obj);
}
