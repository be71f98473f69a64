/**
 * Mocha root hooks: the CLI's result cache and capture folder go to temporary folders for the whole
 * run (the tests call the CLI, which caches in $XDG_CACHE_HOME/prefix-lens and looks for captures in
 * $XDG_STATE_HOME/prefix-lens/captures), never to the user's own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-test-cache-'));
const saved = process.env.XDG_CACHE_HOME;
process.env.XDG_CACHE_HOME = dir;
// The default capture folder ($XDG_STATE_HOME/prefix-lens/captures) is looked into by analyze:
// the tests get an empty one, never the user's captures.
const stateDir = mkdtempSync(join(tmpdir(), 'prefix-lens-test-state-'));
const savedState = process.env.XDG_STATE_HOME;
process.env.XDG_STATE_HOME = stateDir;

export const mochaHooks = {
  afterAll(): void {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    if (savedState === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = savedState;
    rmSync(dir, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  },
};
