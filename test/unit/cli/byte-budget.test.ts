/**
 * Byte-budget scheduling (src/cli/budget.ts, src/cli/pipeline.ts refResults): parallel analyses
 * in flight never hold more bytes together than the input's largest session (a session alone
 * always starts), results still come in ref order, and small sessions do run side by side.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ByteBudget, refBytes } from '../../../src/cli/budget.js';
import { refResults } from '../../../src/cli/pipeline.js';
import type { SessionRef } from '../../../src/hosts/registry.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

const ref = (path: string, size: number, key = path): SessionRef => ({ host: 'opencode', key, path, id: key, title: null, firstPrompt: null, project: null, mtimeMs: 0, size, parentId: null });

describe('byte-budget scheduling', () => {
  it('counts a ref for its size, split among the refs sharing its path (one database)', () => {
    assert.deepEqual(refBytes([ref('/a.jsonl', 300), ref('/db', 900, 's1'), ref('/db', 900, 's2'), ref('/db', 900, 's3'), ref('/b.jsonl', 0)]), [300, 300, 300, 300, 0]);
  });

  it('admits a session while the ones in flight and it fit the budget, and always when none is in flight', () => {
    const b = new ByteBudget(100);
    assert.equal(b.admits(150), true); // nothing in flight
    b.take(150);
    assert.equal(b.admits(1), false);
    b.free(150);
    b.take(60);
    assert.equal(b.admits(40), true);
    assert.equal(b.admits(41), false);
    b.take(40);
    assert.equal(b.admits(0), true);
    b.free(60);
    assert.equal(b.admits(60), true);
  });

  it('refResults: the sessions in flight hold at most the largest one together; order kept; small ones overlap', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-budget-'));
    try {
      const folder = join(dir, 'sessions', '--home-dev-p--');
      mkdirSync(folder, { recursive: true });
      const targets = [40_000, 160_000, 30_000, 30_000, 90_000, 60_000, 30_000, 20_000];
      const sizes = new Map<string, number>();
      for (let i = 0; i < targets.length; i++) {
        const file = join(folder, `2026-11-20T00-00-0${i}-000Z_019a0bbb-0000-7000-8000-00000000010${i}.jsonl`);
        const w = await writeSession(file, { bytes: targets[i], seed: 11 + i, id: `019a0bbb-0000-7000-8000-00000000010${i}`, cwd: '/home/dev/p', startMs: Date.UTC(2026, 10, 20) + i * 60_000 });
        sizes.set(file, w.bytes);
      }
      const largest = Math.max(...sizes.values());
      let held = 0;
      let inFlight = 0;
      let maxHeld = 0;
      let overlapped = 0;
      const started: string[] = [];
      const waiting: Array<() => void> = [];
      const analyze = (r: SessionRef) => {
        started.push(r.path);
        held += r.size;
        inFlight++;
        assert.ok(inFlight === 1 || held <= largest, `${inFlight} in flight hold ${held} bytes > ${largest}`);
        maxHeld = Math.max(maxHeld, held);
        if (inFlight > 1) overlapped++;
        // Results come back in reverse order of starting whenever several are in flight.
        return new Promise<[]>((ok) => {
          waiting.unshift(() => ok([]));
          setTimeout(() => waiting.shift()?.(), 5);
        });
      };
      const seen: string[] = [];
      for await (const r of refResults([{ path: dir }], { env: {}, onError: (e) => assert.fail(e), parallel: () => ({ analyze, ahead: 4 }) })) {
        seen.push(r.ref!.path);
        held -= r.ref!.size;
        inFlight--;
      }
      assert.deepEqual(seen, started);
      assert.deepEqual([...seen].sort(), [...sizes.keys()].sort());
      // The largest session runs alone; five starts overlapped a smaller one (deterministic: the mock answers in reverse order).
      assert.deepEqual([maxHeld, overlapped], [largest, 5]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
