/** The recordings a ground-truth suite runs on: the committed fixture, and a fresh one CI names. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `[{name: 'committed', dir}]`, plus `{name: 'fresh', dir: $env}` when the environment variable
 * names a recording with a `requests/` folder (CI records one per run: .ci/run).
 */
export function scenarios(committed: string, env: string): Array<{ name: string; dir: string }> {
  const out = [{ name: 'committed', dir: committed }];
  const fresh = process.env[env];
  if (fresh && existsSync(join(fresh, 'requests'))) out.push({ name: 'fresh', dir: fresh });
  return out;
}
