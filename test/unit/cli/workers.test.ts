import assert from 'node:assert/strict';
import { workerCount } from '../../../src/cli/workers.js';
import type { Report } from '../../../src/report/json.js';

describe('worker threads', () => {
  it('one per core for several sessions (at most 4), none for one; PREFIX_LENS_WORKERS overrides', () => {
    assert.equal(workerCount(1, {}), 0);
    assert.equal(workerCount(5, { PREFIX_LENS_WORKERS: '0' }), 0);
    assert.equal(workerCount(5, { PREFIX_LENS_WORKERS: '3' }), 3);
    assert.equal(workerCount(2, { PREFIX_LENS_WORKERS: '3' }), 2);
  });

  it('the built CLI gives byte-identical --json with 2 workers, with the cache cold and warm, as in one thread', async function () {
    this.timeout(90_000); // five CLI runs over every fixture, on a shared 2-core machine
    const { execa } = await import('execa'); // ESM-only package
    const run = async (workers: string, ...extra: string[]) => {
      const r = await execa('node', ['dist/cli.js', 'analyze', '--json', ...extra, 'test/fixtures'], { env: { PREFIX_LENS_WORKERS: workers }, reject: false });
      assert.equal(r.exitCode, 0, r.stderr);
      return r.stdout;
    };
    const single = await run('0', '--no-cache');
    const report = JSON.parse(single) as Report;
    assert.deepEqual(report.sessions.map((s) => s.requests.length), [2, 1, 12, 1, 4, 9, 4, 1, 2, 6, 5, 1, 9, 8, 5, 6, 5, 1, 9, 8, 5, 8, 13, 8, 13, 10, 1, 3, 1, 3, 1]); // BotHarness (DSH), Claude Code (main + sub-agent, auto-compaction), Codex (main; parent, sub-agent, fork), OpenCode, OpenCode through the capture proxy (reconstructed here), Pi, Pi through the capture proxy, PI-Desktop (3 sessions, each with its sub-agent)
    assert.equal(await run('2', '--no-cache'), single);
    assert.equal(await run('2'), single); // cold cache (written by the workers)
    assert.equal(await run('2'), single); // warm
    assert.equal(await run('0'), single); // warm, read in the main thread
  });
});
