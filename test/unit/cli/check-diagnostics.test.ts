/**
 * `check` on a session it could read with damage (a malformed line skipped, a cut last line)
 * names each diagnostic on stderr as `<file>:<line>: <message>`, beside its verdict: the exit code
 * is the breaks' (1) or 0, as without the damage. Before, only `analyze` said so.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../runCli.js';

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';

describe('check names the diagnostics of a session it read with damage', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-check-diag-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a malformed line 11: on stderr with its line, the 3 breaks still reported (exit 1)', async () => {
    const lines = readFileSync(PI, 'utf8').split('\n');
    const file = join(dir, 'mid.jsonl');
    writeFileSync(file, [...lines.slice(0, 10), '{not json', ...lines.slice(10)].join('\n'));
    // --min-tokens 0: these breaks re-billed nothing, and every break is to fail here.
    const r = await runCli(['check', file, '--no-cache', '--min-tokens', '0']);
    assert.equal(r.code, 1);
    assert.deepEqual(r.err.trim().split('\n'), [`${file}:11: malformed JSON line skipped: Expected property name or '}' in JSON at position 1`]);
    assert.deepEqual(r.out.trim().split('\n').map((l) => l.replace(/ pi session .*request/, ' request')), [
      `${file}:34: request #9 breaks the cache (history-rewritten): ~0 tokens re-billed, $0`,
      `${file}:39: request #10 breaks the cache (history-rewritten): ~0 tokens re-billed, $0`,
      `${file}:46: request #13 breaks the cache (history-rewritten): ~0 tokens re-billed, $0`,
      '3 requests break the cache',
    ]);
  });

  it('a cut last line: the warning on stderr, also when the result comes from the cache', async () => {
    const text = readFileSync(PI, 'utf8');
    const file = join(dir, 'cut.jsonl');
    writeFileSync(file, text.slice(0, text.length - 40));
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = join(dir, 'cache');
    try {
      for (const args of [['--no-cache'], [], []]) {
        const r = await runCli(['check', file, '--min-tokens', '0', ...args]);
        assert.equal(r.code, 1);
        assert.match(r.err, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:45: truncated last line \\(no newline at end of file; the host may still be writing it\\)`));
        assert.equal(r.out.trim().split('\n').at(-1), '2 requests break the cache');
      }
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });
});
