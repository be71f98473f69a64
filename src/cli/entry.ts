/**
 * The `prefix-lens` bin (dist/cli.js): a small first bundle. `analyze --json <path>…` with nothing
 * changed since the last such run is answered from the caches here (warm.ts), without loading the
 * analysis bundle; everything else loads dist/cli-main.js (src/cli/main.ts, through a V8 code
 * cache: codecache.ts) and runs it.
 */
import { join } from 'node:path';
import { defaultCacheDir, useCodeOf } from '../cache/identity.js';
import { loadCached } from './codecache.js';
import { warmJson } from './warm.js';

const FULL = join(__dirname, 'cli-main.js');

/** Loads the analysis bundle (through the V8 code cache, codecache.ts) and runs the CLI. */
function full(cacheDir: string): void {
  const { exports, save } = loadCached(FULL, cacheDir);
  process.once('exit', save);
  (exports as { cli: () => void }).cli();
}

const write = (b: Uint8Array | string) =>
  new Promise<void>((ok, fail) => {
    // Backpressure on a pipe; a write error (EPIPE: `| head`) ends the run quietly, as the full CLI does.
    if (process.stdout.write(b, (e) => (e ? fail(e) : undefined))) ok();
    else process.stdout.once('drain', ok);
  });

// Entries carry the identity of the bundle that writes them (the full one), not of this one.
useCodeOf(FULL);
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});
const cacheDir = defaultCacheDir(process.env);
warmJson(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  cacheDir,
  sink: { line: (t) => write(`${t}\n`), bytes: write },
}).then(
  (code) => {
    if (code === null) full(cacheDir);
    else process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`prefix-lens: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 2;
  },
);
