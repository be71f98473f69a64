/**
 * The README's "Terminal report" shows the legend the CLI prints under its report, line for line
 * (the README is where a user looks the marks up; a legend changed in text.ts must change there).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { LEGEND } from '../../../src/cli/text.js';

describe('the README legend', () => {
  it('is the printed LEGEND, verbatim, in a text block under "### Terminal report"', () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('\n### Terminal report\n'));
    const start = section.indexOf('```text\n') + '```text\n'.length;
    const block = section.slice(start, section.indexOf('\n```', start));
    assert.deepEqual(block.split('\n'), LEGEND);
  });
});
