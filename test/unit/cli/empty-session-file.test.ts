/**
 * An empty session file (0 bytes, or only blank lines) named on the command line is an unreadable
 * input like a file of no JSON: an error diagnostic naming the file and line 1, `analyze` of it
 * alone exits 2 (beside a readable session: 0), `check` fails with exit 2. It was a warning and
 * exit 0, as if an empty session had been analyzed. Met in a folder walk, an empty `.jsonl` is no
 * session of any host and is skipped (as another tool's file is): `check` of the folder reports only its sessions.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
      assert.deepEqual(check.err.split('\n'), [`${file}:1: ${MESSAGE}`, 'prefix-lens: 1 input could not be read or held no session']);
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

  it('in a folder walk, empty files are skipped: the folder gives the recorded session alone, check says only its breaks', async () => {
    const root = join(dir, 'walk');
    mkdirSync(join(root, 'sub'), { recursive: true });
    copyFileSync(PI, join(root, 'sub', 'pi.jsonl'));
    writeFileSync(join(root, '0b3c1a8e-1111-4222-8333-444455556666.jsonl'), '');
    writeFileSync(join(root, 'sub', 'blank.jsonl'), '\n \r\n\t\n');
    // Not blank: a first line that is no JSON is still claimed and reported.
    writeFileSync(join(root, 'sub', 'garbage.jsonl'), '  \nnot json');
    const json = await runCli(['analyze', root, '--json', '--no-cache']);
    assert.equal(json.code, 0);
    const report = JSON.parse(json.out) as Report;
    assert.deepEqual(
      report.sessions.map((s) => [s.path.slice(root.length), s.requests.length]).sort(),
      [['/sub/garbage.jsonl', 0], ['/sub/pi.jsonl', 13]],
    );
    const clean = join(dir, 'walk-clean');
    mkdirSync(clean);
    copyFileSync(PI, join(clean, 'pi.jsonl'));
    writeFileSync(join(clean, 'empty.jsonl'), '');
    // What check says of the folder is what it says of the session alone: its 3 breaks (exit 1 with --min-tokens 0), nothing of the empty file.
    const check = await runCli(['check', clean, '--no-cache', '--min-tokens', '0']);
    const alone = await runCli(['check', join(clean, 'pi.jsonl'), '--no-cache', '--min-tokens', '0']);
    assert.equal(check.code, 1);
    assert.deepEqual([check.out, check.err], [alone.out, alone.err]);
    assert.equal(check.out.split('\n').filter((l) => l.endsWith('breaks the cache (history-rewritten): ~0 tokens re-billed, $0')).length, 3);
  });
});
