/**
 * An empty session file (0 bytes, or only blank lines) named on the command line is an unreadable
 * input like a file of no JSON: an error diagnostic naming the file and line 1, `analyze` of it
 * alone exits 2 (beside a readable session: 0), `check` fails with exit 2. It was a warning and
 * exit 0, as if an empty session had been analyzed.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../runCli.js';
import type { Report } from '../../../src/report/json.js';

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';
const MESSAGE = 'empty session file (0 bytes or only blank lines): no header, no entries, nothing to analyze';

describe('an empty session file given as a path', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-empty-session-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [what, bytes] of [['0 bytes', ''], ['only blank lines', '\n  \n\r\n']] as const) {
    it(`${what}: analyze says "empty session file" at <file>:1 and exits 2; check exits 2`, async () => {
      const file = join(dir, `${what.replace(/\W/g, '-')}.jsonl`);
      writeFileSync(file, bytes);

      const text = await runCli(['analyze', file, '--no-cache']);
      assert.equal(text.code, 2);
      assert.ok(text.outLines.includes(`  error: ${file}:1: ${MESSAGE}`), text.out);

      const json = await runCli(['analyze', file, '--json', '--no-cache']);
      assert.equal(json.code, 2);
      const report = JSON.parse(json.out) as Report;
      assert.deepEqual(
        report.sessions.map((s) => [s.host, s.requests.length, s.diagnostics]),
        [['pi', 0, [{ file, line: 1, message: MESSAGE, severity: 'error' }]]],
      );

      const check = await runCli(['check', file, '--no-cache']);
      assert.equal(check.code, 2);
      assert.deepEqual(check.err.split('\n'), [`${file}:1: ${MESSAGE}`, 'prefix-lens: 1 input(s) could not be read']);
    });
  }

  it('beside a readable session, analyze exits 0 (as for any unreadable input) and still names the empty file', async () => {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const pi = join(dir, 'pi.jsonl');
    copyFileSync(PI, pi);
    const r = await runCli(['analyze', empty, pi, '--no-cache']);
    assert.equal(r.code, 0);
    assert.ok(r.outLines.includes(`  error: ${empty}:1: ${MESSAGE}`), r.out);
  });
});
