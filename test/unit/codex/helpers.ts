/** Shared helpers for the Codex tests. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The rollouts of a recording (`<dir>/codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), sorted. */
export function rollouts(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.jsonl')) found.push(join(d, e.name));
    }
  };
  walk(join(dir, 'codex', 'sessions'));
  return found.sort();
}

/** The one rollout of a recording. */
export function rollout(dir: string): string {
  const found = rollouts(dir);
  assert.equal(found.length, 1, `one rollout in ${dir}`);
  return found[0];
}
