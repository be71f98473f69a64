/**
 * Mocha root hooks: the CLI's result cache goes to a temporary folder for the whole run (the tests
 * call the CLI, which caches in $XDG_CACHE_HOME/prefix-lens), never to the user's own cache.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-test-cache-'));
const saved = process.env.XDG_CACHE_HOME;
process.env.XDG_CACHE_HOME = dir;

export const mochaHooks = {
  afterAll(): void {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    rmSync(dir, { recursive: true, force: true });
  },
};
