/**
 * src/memory.ts: between sessions, a heap that grew by more than 48 MiB of garbage since the
 * last collection there is collected (so the next session starts from the small live heap), and a
 * heap that did not grow is left alone; between sessions, garbage ArrayBuffers (external memory)
 * count with the heap; a collection due before a small session waits until that session is read.
 */
import assert from 'node:assert/strict';
import { getHeapStatistics } from 'node:v8';
import { gcFunction, releaseBetweenSessions, releaseDeferred } from '../../../src/memory.js';

const used = () => getHeapStatistics().used_heap_size;
const MiB = 1024 * 1024;

/**
 * Makes `arrays` × 16 Ki strings (~3 MiB of heap each; the size of a session's objects), drops
 * them and returns by how much the heap grew (MiB), checked to lie in `range`.
 */
function dropGarbage(arrays: number, range: [number, number]): number {
  const before = used();
  let garbage: string[][] | null = Array.from({ length: arrays }, (_, i) => Array.from({ length: 16 * 1024 }, (_, j) => `${i}:${j}:${'x'.repeat(40)}`));
  assert.ok(garbage.length === arrays);
  garbage = null;
  const grown = (used() - before) / MiB;
  assert.ok(grown > range[0] && grown < range[1], `heap grew ${grown.toFixed(0)} MiB`);
  return grown;
}

describe('releasing memory between sessions', () => {
  it('collects ~64 MiB of garbage a finished session left, and does nothing right after', () => {
    releaseBetweenSessions();
    // Garbage the size of a large session's objects (kept alive until here, then dropped).
    let garbage: string[][] | null = Array.from({ length: 64 }, (_, i) => Array.from({ length: 16 * 1024 }, (_, j) => `${i}:${j}:${'x'.repeat(40)}`));
    assert.ok(garbage.length === 64);
    const before = used();
    garbage = null;
    assert.ok(before > 48 * MiB, `heap ${(before / MiB).toFixed(0)} MiB`);
    assert.equal(releaseBetweenSessions(), true);
    const after = used();
    assert.ok(before - after > 40 * MiB, `collected ${((before - after) / MiB).toFixed(0)} MiB`);
    assert.equal(releaseBetweenSessions(), false, 'no growth since: no collection');
  });

  it('before a session as large as the largest one, ~30 MiB of garbage is collected; before a small one it is not; an idle thread keeps less than 4 MiB', () => {
    releaseBetweenSessions();
    const largest = 16 * MiB;
    const drop = () => dropGarbage(10, [8, 48]);
    drop();
    // A small session leaves ~16 MiB to the largest: 4 bytes of heap per byte, up to 48 MiB, may stay.
    assert.equal(releaseBetweenSessions({ bytes: 100 * 1024, largest }), false);
    assert.equal(releaseBetweenSessions({ bytes: largest, largest }), true);
    drop();
    assert.equal(releaseBetweenSessions('idle'), true);
    assert.equal(releaseBetweenSessions('idle'), false, 'nothing since: no collection');
  });

  it('between sessions, garbage ArrayBuffers (outside the heap) count too; mid-session they do not', async () => {
    const collect = gcFunction()!;
    const buffers = () => process.memoryUsage().arrayBuffers;
    releaseBetweenSessions('idle');
    // 64 KiB buffers (a read stream's chunks, rendered --json chunks): 8 MiB of them, a few KiB of
    // heap; moved to the old generation first (two collections while held), so that no young
    // collection frees them before the call.
    const held = () => {
      const bs = Array.from({ length: 128 }, () => Buffer.allocUnsafeSlow(64 * 1024));
      collect();
      collect();
      return bs;
    };
    let garbage: Buffer[] | null = held();
    const before = buffers();
    assert.ok(garbage.length === 128);
    garbage = null;
    assert.equal(releaseBetweenSessions(), false, 'mid-session: the heap alone decides (it grew by less than 48 MiB)');
    assert.equal(releaseBetweenSessions('idle'), true);
    // V8's sweeper thread frees them, possibly after the collection returned.
    for (let i = 0; i < 200 && before - buffers() < 8 * MiB; i++) await new Promise((r) => setTimeout(r, 10));
    const freed = (before - buffers()) / MiB;
    assert.ok(freed >= 8, `freed ${freed.toFixed(1)} MiB of ArrayBuffers`);
    // The baseline taken right after that collection still counted the buffers the sweeper freed
    // later; the next call between sessions lowers it to what is left (as the CLI calls it between
    // every two sessions). Without this call the outcome below depended on the sweeper's speed.
    assert.equal(releaseBetweenSessions({ bytes: 100 * 1024, largest: 16 * MiB }), false);
    garbage = held();
    assert.ok(garbage.length === 128);
    garbage = null;
    assert.equal(releaseBetweenSessions({ bytes: 100 * 1024, largest: 16 * MiB }), false, 'before a small session, up to 48 MiB may stay');
    assert.equal(releaseBetweenSessions({ bytes: 16 * MiB, largest: 16 * MiB }), true, 'before the largest session: 8 MiB of garbage buffers are more than the 4 MiB floor');
    assert.equal(releaseBetweenSessions('idle'), false, 'nothing since: no collection');
  });
  it('a collection due before a small session waits until it is read (releaseDeferred, or the next call without a session); before a large one it runs at once', () => {
    const largest = 8 * MiB;
    // ~36 MiB of garbage: more than a small session may meet beside the largest's peak (4 × ~7.9
    // MiB = ~31.6 MiB), less than GROWTH (48 MiB), so only the deferred decision collects it.
    const drop = () => {
      releaseBetweenSessions('idle');
      dropGarbage(12, [32, 48]);
    };
    drop();
    assert.equal(releaseBetweenSessions({ bytes: 100 * 1024, largest }), false, 'put off: the session is not read yet');
    assert.equal(releaseDeferred(), true, 'once it is read');
    assert.equal(releaseDeferred(), false, 'nothing put off any more');
    drop();
    assert.equal(releaseBetweenSessions({ bytes: 100 * 1024, largest }), false);
    assert.equal(releaseBetweenSessions(), true, 'the next plain call decides as the deferred one would have');
    drop();
    assert.equal(releaseDeferred(), false, 'nothing was put off: the reader does not collect by itself');
    // A session of 13 MiB (its peak, 4 × 13 MiB, is over 48 MiB) starts on a collected heap.
    assert.equal(releaseBetweenSessions({ bytes: 13 * MiB, largest: 16 * MiB }), true);
  });
});
