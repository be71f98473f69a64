/**
 * `prefix-lens diff` cuts a line longer than MAX_DIFF_LINE_CHARS (2,000) instead of printing a 50 MB
 * message whole: a context line keeps its start, a changed line and the line it replaces keep a
 * window from 200 characters before their first difference, and each cut counts what it left out.
 */
import assert from 'node:assert/strict';
import { createTwoFilesPatch } from 'diff';
import { MAX_DIFF_LINE_CHARS, diffOutputLines } from '../../../src/cli/diffLines.js';

describe('diff output: long lines cut, the change kept in view', () => {
  const long = 'x'.repeat(100_000);
  const before = ['header', `same ${long}`, 'short', `${long}OLD${'y'.repeat(50_000)}`, '-- a removed line that starts with two dashes', 'tail'].join('\n');
  const after = ['header', `same ${long}`, 'short', `${long}NEW${'y'.repeat(50_000)}`, 'tail'].join('\n');
  const lines = diffOutputLines(createTwoFilesPatch('request #1', 'request #2', before, after, undefined, undefined, { context: 3 }));

  it('keeps the file lines and hunk header, and short lines, as jsdiff wrote them', () => {
    assert.deepEqual(lines.slice(0, 3), ['--- request #1', '+++ request #2', '@@ -1,6 +1,5 @@']);
    assert.deepEqual([lines[3], lines[5], lines.at(-2), lines.at(-1)], [' header', ' short', ' tail', '\\ No newline at end of file']);
    // A removed line whose text starts with `--`: a body line, not a file line.
    assert.equal(lines[7], '--- a removed line that starts with two dashes');
  });

  it('a long context line: its first 1,999 characters, then how many were left out', () => {
    assert.equal(lines[4], ` same ${'x'.repeat(MAX_DIFF_LINE_CHARS - 7)}… (98,007 characters not shown)`);
  });

  it('a long changed line and its replacement: the same window from 200 characters before the change on both sides', () => {
    const [removed, added] = [lines[6], lines[8]];
    assert.equal(removed, `-… (99,800 characters not shown)${'x'.repeat(200)}OLD${'y'.repeat(MAX_DIFF_LINE_CHARS - 1 - 203)}… (48,204 characters not shown)`);
    assert.equal(added, `+… (99,800 characters not shown)${'x'.repeat(200)}NEW${'y'.repeat(MAX_DIFF_LINE_CHARS - 1 - 203)}… (48,204 characters not shown)`);
  });
});
