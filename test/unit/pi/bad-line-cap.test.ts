/**
 * The Pi reader's bad-line diagnostics are bounded as the other JSONL readers' are (numbers.ts
 * LineProblems): per kind — line (malformed JSON), entry (no valid id/parentId), link (a parent
 * not found) — the first 1,000 are listed with their wording and line, the rest counted into one
 * summary; the session's folded diagnostics are what they were when every one was built. The
 * recorded Pi main session (45 lines) is followed by bursts of 400 malformed lines, 400 `{}`
 * lines and 400 entries whose parent does not exist; the live reader, grown burst by burst,
 * lists and counts as a full read of the file at that size.
 */
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Diagnostic } from '../../../src/core/model.js';
import { LineProblems, MAX_DIAGNOSTICS } from '../../../src/hosts/numbers.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { PiLiveSession } from '../../../src/hosts/pi/live.js';
import { readPiFile } from '../../../src/hosts/pi/read.js';
import { openSessions } from '../../../src/hosts/open.js';

const SESSIONS = 'test/fixtures/pi/main/agent/sessions';
const FIXTURE = (() => {
  const sub = join(SESSIONS, readdirSync(SESSIONS)[0]);
  return join(sub, readdirSync(sub)[0]);
})();

/** Burst `b` (0-based): 400 malformed lines, 400 `{}`, 400 entries of an unknown type whose parent is not in the file. */
const burst = (b: number) =>
  '{"type":\n'.repeat(400) + '{}\n'.repeat(400) + Array.from({ length: 400 }, (_, i) => `{"type":"x_note","id":"d${b}-${i}","parentId":"nope"}\n`).join('');
/** First line of burst `b` (the fixture has 45 lines). */
const at = (b: number) => 46 + 1200 * b;

const ENTRY = '(no type) entry without a valid id/parentId (type: Invalid input: expected string, received undefined; id: Invalid input: expected string, received undefined; parentId: Invalid input: expected string, received undefined); skipped';

describe('Pi reader: bad-line diagnostics past 1,000 of a kind are counted into one summary', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-pi-cap-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the recorded main session then 2,500 `{}` lines: lines 46–1045 listed, 1,500 counted (lines 1046–2545); the session folds as before', async () => {
    const file = join(dir, 'empty-entries.jsonl');
    copyFileSync(FIXTURE, file);
    assert.equal(readFileSync(file, 'utf8').split('\n').length - 1, 45);
    appendFileSync(file, '{}\n'.repeat(2500));
    const d = (await readPiFile(file)).diagnostics;
    assert.equal(d.length, MAX_DIAGNOSTICS + 1);
    assert.deepEqual(
      d.slice(0, MAX_DIAGNOSTICS).map((x) => [x.line, x.severity, x.message]),
      Array.from({ length: MAX_DIAGNOSTICS }, (_, i) => [46 + i, 'error', ENTRY]),
    );
    assert.deepEqual(d[MAX_DIAGNOSTICS], { file, line: 1046, severity: 'error', message: '1500 more bad lines not listed, lines 1046–2545 (the first 1000 of this file are)', counted: { lines: 1500, last: 2545 } });
    const [s] = await openSessions(file);
    assert.equal(s.diagnostics.length, MAX_DIAGNOSTICS + 1);
    assert.deepEqual(s.diagnostics[MAX_DIAGNOSTICS], { file, line: 1046, severity: 'error', message: '1500 more problems in this file, lines 1046–2545, not listed one by one (the first 1000 diagnostics of the session are)' });
    assert.deepEqual(
      s.requests.map((r) => [r.source.line, r.usage?.cacheRead]),
      (await openSessions(FIXTURE))[0].requests.map((r) => [r.source.line, r.usage?.cacheRead]),
    );
  });

  it('four bursts of each kind: per kind 1,000 listed and one summary of the other 600, with their first and last lines; the session folds the 3,800 unlisted', async () => {
    const file = join(dir, 'bursts.jsonl');
    copyFileSync(FIXTURE, file);
    appendFileSync(file, burst(0) + burst(1) + burst(2) + burst(3));
    const d = (await readPiFile(file)).diagnostics;
    assert.equal(d.length, 3 * (MAX_DIAGNOSTICS + 1));
    const lines = d.slice(0, 1001);
    const entries = d.slice(1001, 2002);
    const links = d.slice(2002);
    // Listed: bursts 0 and 1 whole (800 of a kind), then the first 200 of burst 2.
    const listed = (offset: number) => [0, 1, 2].flatMap((b) => Array.from({ length: b < 2 ? 400 : 200 }, (_, i) => at(b) + offset + i));
    assert.deepEqual(lines.slice(0, 1000).map((x) => x.line), listed(0));
    assert.deepEqual(entries.slice(0, 1000).map((x) => x.line), listed(400));
    assert.deepEqual(links.slice(0, 1000).map((x) => x.line), listed(800));
    assert.deepEqual(lines[0], { file, line: 46, severity: 'error', message: 'malformed JSON line skipped: Unexpected end of JSON input' });
    assert.deepEqual(entries[999], { file, line: 3045, severity: 'error', message: ENTRY });
    assert.deepEqual(links[999], { file, line: 3445, severity: 'warning', message: 'parentId nope not found; entry treated as a root (its context starts here)' });
    assert.deepEqual(lines[1000], { file, line: 2646, severity: 'error', message: '600 more bad lines not listed, lines 2646–4045 (the first 1000 of this file are)', counted: { lines: 600, last: 4045 } });
    assert.deepEqual(entries[1000], { file, line: 3046, severity: 'error', message: '600 more bad lines not listed, lines 3046–4445 (the first 1000 of this file are)', counted: { lines: 600, last: 4445 } });
    assert.deepEqual(links[1000], { file, line: 3446, severity: 'warning', message: '600 more bad lines not listed, lines 3446–4845 (the first 1000 of this file are)', counted: { lines: 600, last: 4845 } });
    // Folded as the 4,800 built one by one were: the first 1,000 (the malformed lines, to line 2645), then 3,800:
    // 2,200 after line 2645 and the 1,600 entry and link problems of bursts 0 and 1, among the listed lines.
    const [s] = await openSessions(file);
    assert.deepEqual(s.diagnostics.slice(0, 1000), lines.slice(0, 1000));
    assert.deepEqual(s.diagnostics.slice(1000), [
      { file, line: 2646, severity: 'error', message: '3800 more problems in this file, lines 2646–4845 and 1600 at lines 446–2445 among the listed lines, not listed one by one (the first 1000 diagnostics of the session are)' },
    ]);
  });

  it('the live reader grown burst by burst lists and counts as a full read at every size', async () => {
    const file = join(dir, 'live.jsonl');
    copyFileSync(FIXTURE, file);
    const live = await PiLiveSession.open(file);
    for (let b = 0; b < 4; b++) {
      appendFileSync(file, burst(b));
      assert.equal(await live.update(), 'appended');
      const full = (await readPiSession(file)).diagnostics;
      assert.deepEqual(live.session().diagnostics, full, `after burst ${b}`);
      assert.equal(full.length, b < 2 ? 1200 * (b + 1) : 3003);
    }
  });

  it('LineProblems.resume continues a saved list (its summary taken back as the count): as one instance over all the lines', () => {
    const lines: Array<[number, Diagnostic['severity']]> = [
      [3, 'warning'],
      [4, 'info'],
      [7, 'warning'],
      [5, 'info'],
      [9, 'error'],
      [8, 'warning'],
    ];
    const whole = new LineProblems([], 'f', 2);
    for (const [n, sev] of lines) whole.add(n, sev, `m${n}`);
    // Saved after 2 (none counted yet) or after 4 (two counted), as JSON, then continued.
    for (const cut of [2, 4]) {
      const first = new LineProblems([], 'f', 2);
      for (const [n, sev] of lines.slice(0, cut)) first.add(n, sev, `m${n}`);
      const saved = JSON.parse(JSON.stringify(first.withSummary())) as Diagnostic[];
      const rest = LineProblems.resume(saved, 'f', 2);
      for (const [n, sev] of lines.slice(cut)) rest.add(n, sev, () => assert.fail('past the bound a message is not built'));
      assert.deepEqual(rest.withSummary(), whole.withSummary(), `cut after ${cut}`);
    }
    assert.deepEqual(whole.withSummary(), [
      { file: 'f', line: 3, severity: 'warning', message: 'm3' },
      { file: 'f', line: 4, severity: 'info', message: 'm4' },
      { file: 'f', line: 5, severity: 'error', message: '4 more bad lines not listed, lines 5–9 (the first 2 of this file are)', counted: { lines: 4, last: 9 } },
    ]);
  });
});
