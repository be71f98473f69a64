/**
 * Byte-budget scheduling of parallel analysis (issue 9, bounded memory): which sessions may be
 * in flight at once, by the bytes they hold.
 */
import type { SessionRef } from '../hosts/registry.js';

/**
 * Bytes each ref is counted for while it is in flight (byte-budget scheduling, issue 9 bounded
 * memory): its `size`, split evenly among the refs that share one `path` (sessions of one
 * OpenCode database), since a session's memory follows the bytes read for it.
 * @returns bytes per ref, in the order of `refs`
 */
export function refBytes(refs: readonly SessionRef[]): number[] {
  const sharing = new Map<string, number>();
  for (const r of refs) sharing.set(r.path, (sharing.get(r.path) ?? 0) + 1);
  return refs.map((r) => r.size / sharing.get(r.path)!);
}

/**
 * Byte budget of parallel analysis: a session is started while the sessions in flight (started,
 * not yet consumed) and it hold at most `budget` bytes together, and always when none is in
 * flight. With the budget = the largest session's bytes, no two sessions are held at once whose
 * sizes add up to more than the largest alone, so peak memory follows the largest session, not
 * the moment two large ones happen to overlap (which made the peak at 8× the corpus vary by
 * ±25 MiB between runs).
 */
export class ByteBudget {
  private held = 0;
  private inFlight = 0;

  /** @param budget bytes (the largest session's, see refBytes) */
  constructor(readonly budget: number) {}

  /** True when a session of `bytes` may start now. */
  admits(bytes: number): boolean {
    return this.inFlight === 0 || this.held + bytes <= this.budget;
  }

  /** A session of `bytes` started. */
  take(bytes: number): void {
    this.held += bytes;
    this.inFlight++;
  }

  /** A session of `bytes` was consumed and released. */
  free(bytes: number): void {
    this.held -= bytes;
    this.inFlight--;
  }
}
