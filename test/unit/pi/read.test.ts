import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { COMPACTION_SUMMARY_PREFIX } from '../../../src/hosts/pi/normalize.js';
import { HEADER, assistant, cleanup, entry, messageCount, messageText, tempDir, user, writeJsonl } from './helpers.js';

describe('pi reader: malformed and old input', () => {
  let dir: string;
  before(async () => (dir = await tempDir()));
  after(async () => cleanup(dir));

  const base = () => [HEADER, user('u1', null, 'Hello'), assistant('a1', 'u1', 'Hi'), user('u2', 'a1', 'Again')];

  it('a truncated last line (being written) is a warning at its line; the rest is analyzed', async () => {
    const f = join(dir, 'truncated.jsonl');
    const full = JSON.stringify(assistant('a2', 'u2', 'Second answer'));
    await writeJsonl(f, [...base(), full.slice(0, 60)], '');
    const s = await readPiSession(f);
    assert.equal(s.requests.length, 1);
    assert.equal(s.requests[0].source.line, 3);
    assert.equal(s.diagnostics.length, 1);
    assert.equal(s.diagnostics[0].file, f);
    assert.equal(s.diagnostics[0].line, 5);
    assert.equal(s.diagnostics[0].severity, 'warning');
    assert.match(s.diagnostics[0].message, /truncated last line/);
  });

  it('a garbage line in the middle is an error at its line; later entries still count', async () => {
    const f = join(dir, 'garbage.jsonl');
    await writeJsonl(f, [...base(), 'this is not json {', assistant('a2', 'u2', 'Second answer')]);
    const s = await readPiSession(f);
    assert.deepEqual(
      s.requests.map((r) => r.source.line),
      [3, 6],
    );
    assert.deepEqual(
      s.diagnostics.map((d) => [d.line, d.severity]),
      [[5, 'error']],
    );
    // The request after the garbage line still has its full context: Hello, Hi, Again.
    assert.equal(messageCount(s.requests[1].tail), 3);
  });

  it('unknown entry types are kept as ignored with counts and do not cut the tree', async () => {
    const f = join(dir, 'unknown.jsonl');
    await writeJsonl(f, [
      HEADER,
      user('u1', null, 'Hello'),
      entry('x1', 'u1', 'context_edit', { targetId: 'u1', replacement: null }),
      entry('x2', 'x1', 'usage', { kind: 'cache_warm' }),
      entry('x3', 'x2', 'context_edit', { targetId: 'u1', replacement: null }),
      assistant('a1', 'x3', 'Hi'),
      entry('m1', 'a1', 'message', { message: { role: 'system', content: 'patched' } }),
    ]);
    const s = await readPiSession(f);
    assert.deepEqual(s.ignored, { context_edit: 2, usage: 1, 'message:system': 1 });
    assert.equal(s.requests.length, 1);
    assert.equal(messageCount(s.requests[0].tail), 1);
    assert.deepEqual(s.diagnostics, []);
  });

  it('an empty file gives an error diagnostic at line 1 and no requests', async () => {
    const f = join(dir, 'empty.jsonl');
    await writeFile(f, '');
    const s = await readPiSession(f);
    assert.equal(s.requests.length, 0);
    assert.deepEqual(s.diagnostics, [{ file: f, line: 1, severity: 'error', message: 'empty session file (0 bytes or only blank lines): no header, no entries, nothing to analyze' }]);
  });

  it('a missing file gives a diagnostic, not an exception', async () => {
    const s = await readPiSession(join(dir, 'nope.jsonl'));
    assert.equal(s.requests.length, 0);
    assert.match(s.diagnostics[0].message, /cannot read file/);
  });

  it('a v1 file (no ids) is migrated in memory: linear chain, firstKeptEntryIndex → id; the file bytes are unchanged', async () => {
    const f = join(dir, 'v1.jsonl');
    const strip = (o: object) => {
      const { id: _i, parentId: _p, ...rest } = o as Record<string, unknown>;
      return rest;
    };
    const { version: _v, ...v1Header } = HEADER;
    await writeJsonl(f, [
      v1Header,
      strip(user('', null, 'one')), // file index 1
      strip(assistant('', null, 'ONE')), // 2
      strip(user('', null, 'two')), // 3
      strip(assistant('', null, 'TWO')), // 4
      { type: 'compaction', timestamp: '2026-11-29T10:10:00.000Z', summary: 'S', firstKeptEntryIndex: 3, tokensBefore: 99 }, // 5
      strip(user('', null, 'three')), // 6
      strip(assistant('', null, 'THREE')), // 7
    ]);
    const before = await readFile(f);
    const s = await readPiSession(f);
    assert.deepEqual(await readFile(f), before);
    assert.deepEqual(s.diagnostics, []);
    assert.deepEqual(
      s.requests.map((r) => [r.source.line, messageCount(r.tail)]),
      [
        [3, 1],
        [5, 3],
        // after the compaction: summary, kept "two", "TWO", then "three"
        [8, 4],
      ],
    );
    const last = s.requests[2].tail;
    assert.ok(messageText(last, 0).includes(JSON.stringify(COMPACTION_SUMMARY_PREFIX + 'S').slice(1, -1)));
    assert.equal(messageText(last, 1), '{"role":"user","content":[{"type":"text","text":"two"}]}');
    assert.deepEqual(s.events, [{ kind: 'compaction', line: 6, timeMs: Date.parse('2026-11-29T10:10:00.000Z') }]);
  });

  it('a v2 file: hookMessage becomes a custom message and is sent as a user message', async () => {
    const f = join(dir, 'v2.jsonl');
    await writeJsonl(f, [
      { ...HEADER, version: 2 },
      user('u1', null, 'Hello'),
      entry('h1', 'u1', 'message', { message: { role: 'hookMessage', customType: 'note', content: 'from a hook', display: true, timestamp: 1 } }),
      assistant('a1', 'h1', 'Hi'),
    ]);
    const s = await readPiSession(f);
    assert.deepEqual(s.ignored, {});
    assert.equal(messageCount(s.requests[0].tail), 2);
    assert.equal(messageText(s.requests[0].tail, 1), '{"role":"user","content":[{"type":"text","text":"from a hook"}]}');
  });

  it('an entry that does not fit its schema stays a tree node, with a warning at its line', async () => {
    const f = join(dir, 'schema.jsonl');
    await writeJsonl(f, [HEADER, user('u1', null, 'Hello'), entry('c1', 'u1', 'compaction', { summary: 42 }), assistant('a1', 'c1', 'Hi')]);
    const s = await readPiSession(f);
    assert.deepEqual(
      s.diagnostics.map((d) => [d.line, d.severity]),
      [[3, 'warning']],
    );
    assert.equal(messageCount(s.requests[0].tail), 1);
  });

  it('a dangling parentId makes the entry a root, with a warning', async () => {
    const f = join(dir, 'dangling.jsonl');
    await writeJsonl(f, [HEADER, user('u1', null, 'Hello'), user('u2', 'gone', 'orphan'), assistant('a1', 'u2', 'Hi')]);
    const s = await readPiSession(f);
    assert.deepEqual(
      s.diagnostics.map((d) => [d.line, d.severity]),
      [[3, 'warning']],
    );
    assert.equal(messageCount(s.requests[0].tail), 1);
  });
});
