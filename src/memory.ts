/**
 * Releasing a finished session's memory before the next one (issue 9, bounded memory). Node
 * builtins only, below every layer that reads sessions (the result cache and the persisted tail
 * call it between a read and its analysis; the CLI's pipeline and workers between sessions).
 *
 * V8 sizes the next full collection from the live heap at the last one (it lets the old space
 * grow to a multiple of it), so after a large session a thread's heap keeps growing over the
 * garbage of the sessions that follow instead of reusing it; the peak then depends on how many
 * sessions ran and in which order. A full collection between sessions, once the heap holds much
 * more than it did after the last one, starts every session from the small live heap between
 * sessions: measured on the bench corpus, peak RSS at 4× the corpus came down to that at 1×.
 * A collection of a heap of dead objects costs little (marking visits live objects only).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const MiB = 1024 * 1024;
/** Heap growth since the last collection here that makes the next one worth it (bytes). */
const GROWTH = 48 * MiB;
/** Heap growth below which a collection is never worth it, whatever session comes next (bytes). */
const FLOOR = 4 * MiB;
/**
 * Heap a session holds at its peak per byte of its file, about (the 100 MiB Pi session: ~4 at
 * the read's last full collection, 406 MiB committed; the bench corpus's 8.6 MiB one: ~5).
 */
const HEAP_PER_BYTE = 4;

/** The session about to start and the largest one of the run: bytes of their files (cli/budget.ts refBytes). */
export interface NextSession {
  bytes: number;
  largest: number;
}

let gc: (() => void) | null | undefined;
let usedAfter = 0;
/**
 * Memory outside the V8 heap after the last collection here: this thread's ArrayBuffer backing
 * stores (Node's allocator: the read stream's chunks, JsonLiteral and compacted block bytes,
 * rendered `--json` chunks) and the isolate's external memory (which also holds buffers another
 * thread allocated and transferred here: a worker's rendered chunks in the main thread). It is
 * malloc'd and freed only when its objects are collected, which V8 does by itself only after
 * ~64 MiB more of it; between sessions (`next` given) its growth counts with the heap's, so the
 * garbage of finished sessions is returned to malloc before the next one allocates (a thread's
 * malloc arena otherwise grows over it: with 2 workers, peak RSS at 8× a corpus rose by tens of
 * MiB over 1×, README Memory). Mid-session calls (no `next`) count the heap only. V8 frees dead
 * backing stores on its sweeper thread, possibly after the collection returned, and updates its
 * external figure only at a later collection, so both baselines are lowered to what a later call
 * sees when that is less.
 */
let buffersAfter = 0;
let externalAfter = 0;

/**
 * The `gc()` function: the global one when the process was started with `--expose-gc`, else one
 * exposed for a new context (V8 only defines it in contexts created after the flag is set, and
 * the flag is unset again right after), or null when the runtime refuses.
 */
export function gcFunction(): (() => void) | null {
  if (gc === undefined) {
    const global = (globalThis as { gc?: unknown }).gc;
    if (typeof global === 'function') return (gc = global as () => void);
    try {
      setFlagsFromString('--expose-gc');
      const f = runInNewContext('gc') as unknown;
      // Set back at once: the function stays, and the flags are again those the bundle's V8 code
      // cache entry is made and checked under (cli/codecache.ts: data made under other flags is rejected).
      setFlagsFromString('--no-expose-gc');
      gc = typeof f === 'function' ? (f as () => void) : null;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/**
 * A between-session collection put off until the next session has been read (see
 * releaseBetweenSessions): the session it was sized for.
 */
let deferred: NextSession | null = null;

/**
 * Called between sessions (nothing of the previous one still referenced): collects the heap when
 * it grew by more than GROWTH since the last collection here; with `next`, already when the
 * growth and the next session's peak (HEAP_PER_BYTE × its bytes) would hold more than the
 * largest session's peak alone (but not for less than FLOOR). So a large session starts on a
 * collected heap, and the peak of a run is that of its largest session, not of whichever large
 * session met the most garbage (one thread, 8× the bench corpus: 16–19 MiB over 1×).
 *
 * Before a session whose own peak is below GROWTH (HEAP_PER_BYTE × its bytes: a session file of
 * less than 12 MiB), the collection is put off to the next call without `next`, once that session
 * is read (releaseDeferred in the Pi reader after its reconstruction, else the call after the read
 * in results.ts or tail.ts), which then decides as this call would have, the read's own garbage
 * counted too. Such a session is read beside at most ~GROWTH of garbage, a bound that does not
 * grow with the run; a larger one still starts on a collected heap. Why: between sessions no
 * object of the analysis is alive, so a full collection there frees the maps V8's optimized code
 * of the reader, chain and judge was built on, and that code is thrown away and compiled again for
 * the next session (`--trace-deopt` on the bench corpus: ~370 functions per run, ~810 TurboFan
 * compilations); with the session's entries and blocks alive, ~70 and ~460. Measured on the bench
 * corpus, one thread, `--no-cache`, paired runs: CPU 0.78×, wall 0.82×, peak RSS 158 against 143
 * MiB (benchmark log, 2026-12-03 12:49).
 * `'idle'`: the thread has nothing to do until its next session (a worker that replied), and
 * keeps no more than FLOOR of garbage meanwhile: the sessions of other threads then run beside
 * a collected heap, not beside whatever this one last left.
 * @returns true when it collected
 */
export function releaseBetweenSessions(next?: NextSession | 'idle'): boolean {
  const resumed = next === undefined && deferred !== null;
  if (resumed) next = deferred!;
  deferred = null;
  const h = getHeapStatistics();
  const allowed = next === 'idle' ? FLOOR : next ? Math.min(GROWTH, Math.max(FLOOR, HEAP_PER_BYTE * (next.largest - next.bytes))) : GROWTH;
  let growth = h.used_heap_size - usedAfter;
  if (next) {
    // Between sessions the memory outside the heap counts too: see buffersAfter.
    const buffers = process.memoryUsage().arrayBuffers;
    if (buffers < buffersAfter) buffersAfter = buffers;
    if (h.external_memory < externalAfter) externalAfter = h.external_memory;
    growth += Math.max(0, buffers - buffersAfter, h.external_memory - externalAfter);
  }
  if (growth < allowed) return false;
  if (next && next !== 'idle' && !resumed && HEAP_PER_BYTE * next.bytes < GROWTH) {
    deferred = next;
    return false;
  }
  const f = gcFunction();
  if (!f) return false;
  f();
  const after = getHeapStatistics();
  usedAfter = after.used_heap_size;
  externalAfter = after.external_memory;
  buffersAfter = process.memoryUsage().arrayBuffers;
  return true;
}

/**
 * Runs the collection releaseBetweenSessions put off, if any (and if it is still due), and
 * nothing else: for a reader once its session is read while its objects are still alive (the Pi
 * reader after its reconstruction). A plain mid-session call there would collect a heap that
 * still holds the entry tree, and V8 would size the next collection from that larger live heap
 * (the 100 MiB bench session: peak RSS 427 MiB against 378).
 * @returns true when it collected
 */
export function releaseDeferred(): boolean {
  return deferred ? releaseBetweenSessions() : false;
}
