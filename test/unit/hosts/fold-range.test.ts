/**
 * The session's folded summary (numbers.ts foldDiagnostics) says where the problems it did not
 * list are: lines after the listed ones, and apart from them those at lines among the listed
 * ones. A Pi file of 1,500 malformed lines lists lines 1–1000; the reader's "first line is not a
 * Pi session header" at line 1 comes after its line diagnostics and is folded with lines
 * 1001–1500: the summary read "501 more problems in this file, lines 1–1500", as if the listed
 * lines were among them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Diagnostic, Session } from '../../../src/core/model.js';
import { foldDiagnostics } from '../../../src/hosts/numbers.js';
import { openSessions } from '../../../src/hosts/open.js';

const d = (file: string, line: number, severity: Diagnostic['severity'] = 'error'): Diagnostic => ({ file, line, severity, message: `m${line}` });
const fold = (diagnostics: Diagnostic[], max: number) => foldDiagnostics({ diagnostics } as unknown as Session, max).diagnostics;

describe('folded diagnostics: the summary names the lines of the problems it did not list', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-fold-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('1,500 malformed lines: lines 1–1000 listed, the summary is of lines 1001–1500 and the header error at line 1', async () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"type":\n'.repeat(1500));
    const [s] = await openSessions(file);
    assert.equal(s.diagnostics.length, 1001);
    assert.deepEqual(s.diagnostics.slice(0, 1000).map((x) => x.line), Array.from({ length: 1000 }, (_, i) => i + 1));
    assert.deepEqual(s.diagnostics[1000], {
      file,
      line: 1001,
      severity: 'error',
      message: '501 more problems in this file, lines 1001–1500 and 1 at line 1 among the listed lines, not listed one by one (the first 1000 diagnostics of the session are)',
    });
  });

  it('folded problems all after the listed lines: worded as before', () => {
    assert.deepEqual(fold([d('f', 1), d('f', 2), d('f', 5, 'warning'), d('f', 9)], 2).slice(2), [
      { file: 'f', line: 5, severity: 'error', message: '2 more problems in this file, lines 5–9, not listed one by one (the first 2 diagnostics of the session are)' },
    ]);
  });

  it('folded problems only among the listed lines; another file folded apart', () => {
    assert.deepEqual(fold([d('f', 3), d('f', 8), d('f', 4, 'warning'), d('f', 6, 'warning'), d('g', 1)], 2).slice(2), [
      { file: 'f', line: 4, severity: 'warning', message: '2 more problems in this file, at lines 4–6 among the listed lines, not listed one by one (the first 2 diagnostics of the session are)' },
      { file: 'g', line: 1, severity: 'error', message: '1 more problem in this file, line 1, not listed one by one (the first 2 diagnostics of the session are)' },
    ]);
  });

  it("a reader's counted summary folds as the lines it stands for", () => {
    const counted: Diagnostic = { file: 'f', line: 11, severity: 'error', message: '5 more bad lines not listed, lines 11–20 (the first 2 of this file are)', counted: { lines: 5, last: 20 } };
    assert.deepEqual(fold([d('f', 1), d('f', 10), counted, d('f', 1, 'warning')], 2).slice(2), [
      { file: 'f', line: 11, severity: 'error', message: '6 more problems in this file, lines 11–20 and 1 at line 1 among the listed lines, not listed one by one (the first 2 diagnostics of the session are)' },
    ]);
  });
});
