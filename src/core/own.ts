/**
 * Tables indexed by untrusted keys (entry types, roles, provider ids, API names, field names read
 * from transcripts). A plain `obj[key]` sees the built-in properties every object inherits
 * (`constructor`, `toString`, `__proto__`, …): a lookup finds a function where it expected a table
 * value, and a write to `__proto__` replaces the prototype instead of adding a key. These helpers
 * only ever see and create own properties. Pure: no I/O.
 */

/** `table[key]` when `key` is an own property of `table`, else undefined (never an inherited built-in). */
export function ownGet<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Sets `table[key] = value` as an own, enumerable property (also for `__proto__`). */
export function ownSet<V>(table: Record<string, V>, key: string, value: V): void {
  Object.defineProperty(table, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Adds 1 to the count at `key` (0 when absent), as an own property. */
export function bump(counts: Record<string, number>, key: string): void {
  ownSet(counts, key, (ownGet(counts, key) ?? 0) + 1);
}
