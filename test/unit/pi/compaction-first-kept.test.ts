/**
 * A Pi compaction whose `firstKeptEntryId` is missing or names no earlier entry of its branch (not
 * found, the compaction itself, a later entry) gets a warning at its line saying what was done:
 * nothing before the compaction is kept (as Pi builds the context), so later prefixes change.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPiSession } from '../../../src/hosts/pi/index.js';

const MAIN = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';
/** Line 29 of the recording: the compaction (id 898d9b83, firstKeptEntryId 73076b98). */
const LINE = 29;
const DONE = 'no entry before the compaction is kept (its context is read as the summary, then the entries after it, as Pi builds it)';

describe('Pi compaction firstKeptEntryId that names no earlier entry of its branch', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-first-kept-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function variant(name: string, edit: (o: Record<string, unknown>) => void): string {
    const lines = readFileSync(MAIN, 'utf8').split('\n');
    const o = JSON.parse(lines[LINE - 1]) as Record<string, unknown>;
    assert.equal(o.type, 'compaction');
    edit(o);
    lines[LINE - 1] = JSON.stringify(o);
    const file = join(dir, `${name}.jsonl`);
    writeFileSync(file, lines.join('\n'));
    return file;
  }
  const warningsAt = (s: { diagnostics: Array<{ line: number; severity: string; message: string }> }) => s.diagnostics.filter((d) => d.line === LINE && d.severity === 'warning').map((d) => d.message);

  it('the recording itself: no warning; request #9 (the first after the compaction) has prefix aabe687fbe73', async () => {
    const s = await readPiSession(MAIN);
    assert.deepEqual(warningsAt(s), []);
    assert.equal(s.requests[8].tail?.shortHash, 'aabe687fbe73');
  });

  it('missing, not found, the compaction itself, a later entry: one warning each at the compaction line; all read alike (summary only)', async () => {
    const cases: Array<[string, (o: Record<string, unknown>) => void, string]> = [
      ['missing', (o) => delete o.firstKeptEntryId, `compaction without firstKeptEntryId: ${DONE}`],
      ['dangling', (o) => (o.firstKeptEntryId = 'deadbeef'), `compaction firstKeptEntryId "deadbeef" not found: ${DONE}`],
      ['itself', (o) => (o.firstKeptEntryId = o.id), `compaction firstKeptEntryId "898d9b83" is this compaction itself: ${DONE}`],
      ['later', (o) => (o.firstKeptEntryId = 'a2d8636e'), `compaction firstKeptEntryId "a2d8636e" is a later entry (line 31): ${DONE}`],
    ];
    for (const [name, edit, message] of cases) {
      const s = await readPiSession(variant(name, edit));
      assert.deepEqual(warningsAt(s), [message], name);
      assert.equal(s.requests.length, 13, name);
      // Summary only, then the entries after the compaction: the same prefix in every case.
      assert.equal(s.requests[8].tail?.shortHash, '65b0087c9f15', name);
      assert.equal(s.requests[8].index, 9);
    }
  });
});
