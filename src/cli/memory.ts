/**
 * Releasing a finished session's memory before the next one (issue 9, bounded memory).
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

/** Heap growth since the last collection here that makes the next one worth it (bytes). */
const GROWTH = 48 * 1024 * 1024;

let gc: (() => void) | null | undefined;
let usedAfter = 0;

/**
 * The `gc()` function, exposed for a new context (V8 only defines it in contexts created after
 * the flag is set), or null when the runtime refuses.
 */
function gcFunction(): (() => void) | null {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const f = runInNewContext('gc') as unknown;
      gc = typeof f === 'function' ? (f as () => void) : null;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/**
 * Called between sessions (nothing of the previous one still referenced): collects the heap when
 * it grew by more than GROWTH since the last collection here.
 * @returns true when it collected
 */
export function releaseBetweenSessions(): boolean {
  const used = getHeapStatistics().used_heap_size;
  if (used - usedAfter < GROWTH) return false;
  const f = gcFunction();
  if (!f) return false;
  f();
  usedAfter = getHeapStatistics().used_heap_size;
  return true;
}
