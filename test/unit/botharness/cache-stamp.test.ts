/**
 * The result cache and BotHarness: a Session's entry depends on two stores, so its ref's stamp joins
 * the log's size and mtime with its ownership row. A refreshed snapshot in botharness.db (log
 * unchanged) is a miss, and the new analysis shows it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeRefCached } from '../../../src/cache/results.js';
import { findSessions, releaseReaders } from '../../../src/hosts/registry.js';
import { writeDb } from './dsh-fixture.js';
import { buildScenarios, PERSONA_ADA_SOUL2, T0, type Built } from './scenarios.js';

describe('result cache of BotHarness sessions', () => {
  let built: Built;
  let cacheDir: string;
  before(async () => {
    built = await buildScenarios();
    cacheDir = mkdtempSync(join(tmpdir(), 'prefix-lens-bh-cache-'));
  });
  after(() => {
    releaseReaders();
    for (const d of [built.main, built.old, cacheDir]) rmSync(d, { recursive: true, force: true });
  });

  it('a snapshot refreshed in botharness.db misses the cache though the log did not change', async () => {
    const results: string[] = [];
    const onResult = (k: 'hit' | 'miss') => results.push(k);
    const [ref] = await findSessions(built.logs['bh-memory']);
    const first = await analyzeRefCached(ref, { cacheDir, onResult });
    assert.equal(first[0].persona!.snapshot.hash, 'e12061dff5db');
    await analyzeRefCached((await findSessions(built.logs['bh-memory']))[0], { cacheDir, onResult });
    const iso = (ms: number) => new Date(ms).toISOString();
    await writeDb(built.main, {
      generation: 57,
      ownership: [{ session_id: 'bh-memory', bot_slug: 'mira', created_at: iso(T0 - 1000), persona_snapshot: PERSONA_ADA_SOUL2, persona_snapshot_at: iso(T0 + 60000) }],
    });
    const [again] = await findSessions(built.logs['bh-memory']);
    assert.notEqual(again.stamp, ref.stamp);
    const third = await analyzeRefCached(again, { cacheDir, onResult });
    assert.deepEqual(results, ['miss', 'hit', 'miss']);
    assert.equal(third[0].persona!.snapshot.hash, '8e986229fc09');
  });
});
