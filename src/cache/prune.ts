/**
 * Removes what no later run reads from a result cache folder: the `v<N>` folders of older cache
 * versions (after CACHE_VERSION is bumped every entry there is a miss forever: the bench corpus
 * leaves ~90 MB per version), run manifests of an older layout in the current `runs/` folder
 * (`*.json`: the hashed-stamp layout before the `.manifest` files), and temporary files a killed
 * writer left (`*.tmp` older than an hour: a live writer renames its own within seconds).
 *
 * Best effort and quiet: the cache is ours (never a host's folder), and a file that cannot be
 * removed (permissions, another process) only keeps its space.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CACHE_VERSION } from './identity.js';

/** Age (ms) after which a `*.tmp` file is an abandoned write. */
const STALE_TMP_MS = 60 * 60 * 1000;

/**
 * Prunes `cacheDir` (e.g. `$XDG_CACHE_HOME/prefix-lens`, the extension's `globalStorage/results`).
 * Asynchronous (the extension host runs it; an old version folder holds thousands of files).
 * @returns the paths removed (for a log line and the tests)
 */
export async function pruneCache(cacheDir: string, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  const remove = async (p: string) => {
    try {
      await rm(p, { recursive: true, force: true });
      removed.push(p);
    } catch {
      // kept: best effort
    }
  };
  const list = (dir: string): Promise<string[]> => readdir(dir).catch(() => []);
  const stale = (p: string): Promise<boolean> => stat(p).then((s) => now - s.mtimeMs > STALE_TMP_MS, () => false);
  for (const name of await list(cacheDir)) {
    const m = /^v(\d+)$/.exec(name);
    if (m && Number(m[1]) < CACHE_VERSION) await remove(join(cacheDir, name));
  }
  const current = join(cacheDir, `v${CACHE_VERSION}`);
  for (const name of await list(current)) if (name.endsWith('.tmp') && (await stale(join(current, name)))) await remove(join(current, name));
  const runs = join(current, 'runs');
  for (const name of await list(runs)) {
    if (name.endsWith('.json') || (name.endsWith('.tmp') && (await stale(join(runs, name))))) await remove(join(runs, name));
  }
  return removed;
}
