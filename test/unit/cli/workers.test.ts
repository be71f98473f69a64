import assert from 'node:assert/strict';
import { BYTES_PER_WORKER, MIN_WORKER_CORES, workerCount, workersFor } from '../../../src/cli/workers.js';
import type { Report } from '../../../src/report/json.js';

describe('worker threads', () => {
  it('PREFIX_LENS_WORKERS overrides the rule (at most one per session; 0 = the main thread), none for one session', () => {
    assert.equal(workerCount(1, {}), 0);
    assert.equal(workerCount(5, { PREFIX_LENS_WORKERS: '0' }), 0);
    assert.equal(workerCount(5, { PREFIX_LENS_WORKERS: '3' }), 3);
    assert.equal(workerCount(2, { PREFIX_LENS_WORKERS: '3' }), 2);
    assert.equal(workerCount(5, { PREFIX_LENS_WORKERS: '2' }, [1, 1, 1, 1, 1]), 2); // forced even for a small input
  });

  it('none below 4 cores (one thread is faster there); from 4 cores half of them, at most 4', () => {
    assert.equal(MIN_WORKER_CORES, 4);
    // Without sizes.
    assert.equal(workersFor(1, 40), 0);
    assert.equal(workersFor(2, 40), 0); // the development machine
    assert.equal(workersFor(3, 40), 0);
    assert.equal(workersFor(4, 40), 2);
    assert.equal(workersFor(5, 40), 2);
    assert.equal(workersFor(6, 40), 3);
    assert.equal(workersFor(8, 40), 4);
    assert.equal(workersFor(16, 40), 4);
    assert.equal(workersFor(16, 3), 3);
    assert.equal(workersFor(16, 2), 2);
    assert.equal(workersFor(16, 1), 0);
  });

  it('workers only when the bytes besides the largest session pay for their start', () => {
    const MiB = 1024 * 1024;
    assert.equal(BYTES_PER_WORKER, 4 * MiB);
    // The fixtures (31 sessions of a few KiB): one thread.
    assert.equal(workersFor(8, 31, Array.from({ length: 31 }, () => 20_000)), 0);
    // One 100 MiB session and small ones: the rest is under 4 MiB, one thread.
    assert.equal(workersFor(8, 4, [100 * MiB, MiB, MiB, MiB]), 0);
    // Exactly 4 MiB besides the largest: 2 workers; 8 MiB: 3 (12 cores allow 6, at most 4).
    assert.equal(workersFor(8, 5, [8 * MiB, MiB, MiB, MiB, MiB]), 2);
    assert.equal(workersFor(8, 5, [8 * MiB, MiB, MiB, MiB, MiB - 1]), 0);
    assert.equal(workersFor(12, 9, [8 * MiB, ...Array.from({ length: 8 }, () => MiB)]), 3);
    // The bench corpus (40 sessions, 72 MiB, largest 8.6 MiB): none on 2 cores, cores / 2 up to 4 from 4 cores.
    const bench = [8.6 * MiB, ...Array.from({ length: 39 }, () => (63.8 * MiB) / 39)];
    assert.equal(workersFor(2, 40, bench), 0);
    assert.equal(workersFor(4, 40, bench), 2);
    assert.equal(workersFor(6, 40, bench), 3);
    assert.equal(workersFor(8, 40, bench), 4);
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
