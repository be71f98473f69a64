/**
 * The terminal report of a session with no requests (an unreadable file, a damaged database) is
 * its header and its diagnostics: no empty request table, no totals line, and no legend unless
 * some other session's table was printed. It printed all three around the one useful line.
 * `--json` is unchanged: the session with its empty `requests` and zero totals.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../runCli.js';
import { LEGEND, renderReport } from '../../../src/cli/text.js';
import type { Report } from '../../../src/report/json.js';

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';
const MALFORMED = `malformed JSON line skipped: Unexpected token 'g', "garbage" is not valid JSON`;
const NO_HEADER = 'first line is not a Pi session header ({"type":"session",…}); Pi would treat the file as invalid. Reading the entries anyway, session id from the file name: x';

describe('a session with no requests in the terminal report', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-zero-requests-'));
    file = join(dir, 'x.jsonl');
    writeFileSync(file, 'garbage\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a file of no JSON alone: header and its two errors, nothing else (exit 2)', async () => {
    const r = await runCli(['analyze', file, '--no-cache']);
    assert.equal(r.code, 2);
    assert.deepEqual(r.outLines, ['pi session x', `  ${file}`, '  0 requests', `  error: ${file}:1: ${MALFORMED}`, `  error: ${file}:1: ${NO_HEADER}`]);
    assert.equal(r.err, '');
  });

  it('beside a readable session: the legend is printed once, under the table of the readable one (exit 0)', async () => {
    const r = await runCli(['analyze', file, PI, '--no-cache']);
    assert.equal(r.code, 0);
    assert.deepEqual(r.outLines.slice(0, 6), ['pi session x', `  ${file}`, '  0 requests', `  error: ${file}:1: ${MALFORMED}`, `  error: ${file}:1: ${NO_HEADER}`, '']);
    assert.equal(r.outLines[6], 'pi session 01a230ec-9a4e-7417-8af1-68d34234bdc8 "pi lab session"');
    assert.equal(r.outLines.filter((l) => l.startsWith('   # time ')).length, 1);
    assert.equal(r.outLines.filter((l) => l.startsWith('  totals: ')).length, 1);
    assert.deepEqual(r.outLines.slice(-LEGEND.length - 1), ['', ...LEGEND]);
  });

  it('--json keeps the session entry as it was: empty requests, zero totals, the diagnostics', async () => {
    const r = await runCli(['analyze', file, '--json', '--no-cache']);
    assert.equal(r.code, 2);
    assert.deepEqual(JSON.parse(r.out) as Report, {
      version: 1,
      sessions: [
        {
          host: 'pi',
          id: 'x',
          path: file,
          title: null,
          parentId: null,
          diagnostics: [
            { file, line: 1, message: MALFORMED, severity: 'error' },
            { file, line: 1, message: NO_HEADER, severity: 'error' },
          ],
          ignored: {},
          totals: { requests: 0, breaks: 0, cacheRead: 0, cacheWrite: 0, uncached: 0, output: 0, lostTokens: 0, costUSD: 0, hitRate: null },
          tokenModel: { base: {}, perByte: 0.25, calibrated: false },
          models: [],
          evidence: null,
          requests: [],
        },
      ],
    });
  });

  it('renderReport (library) of such a report alone prints no legend', async () => {
    const r = await runCli(['analyze', file, '--json', '--no-cache']);
    const lines: string[] = [];
    renderReport(JSON.parse(r.out) as Report, (l) => lines.push(l));
    assert.deepEqual(lines, ['pi session x', `  ${file}`, '  0 requests', `  error: ${file}:1: ${MALFORMED}`, `  error: ${file}:1: ${NO_HEADER}`]);
  });
});
