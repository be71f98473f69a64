/**
 * The `prefix-lens` bin (dist/cli.js): a small first bundle. `analyze --json <path>…` with nothing
 * changed since the last such run is answered from the caches here (warm.ts), without loading the
 * analysis bundle; everything else loads dist/cli-main.js (src/cli/main.ts, through a V8 code
 * cache: codecache.ts) and runs it.
 *
 * It is also the script of the CLI's analysis workers (workers.ts): a worker loads the analysis
 * bundle with the V8 data the main thread loaded or made (handed over in `workerData`), so no
 * worker compiles the 1.7 MB bundle from source (~125 ms CPU each, CPU profile).
 */
import { join } from 'node:path';
import { isMainThread, workerData } from 'node:worker_threads';
import { defaultCacheDir, useCodeOf } from '../cache/identity.js';
import { loadCached } from './codecache.js';
import { warmJson } from './warm.js';

const FULL = join(__dirname, 'cli-main.js');

/** What the analysis bundle's `cli` takes: how to start a worker through this bin (workers.ts WorkerBoot). */
interface Boot {
  script: string;
  codeCache: Uint8Array | null;
}

/** Loads the analysis bundle (through the V8 code cache, codecache.ts) and runs the CLI. */
function full(cacheDir: string): void {
  const { exports, save, data } = loadCached(FULL, cacheDir);
  process.once('exit', save);
  (exports as { cli: (boot?: Boot) => void }).cli({ script: __filename, codeCache: data });
}

const worker = !isMainThread && (workerData as { prefixLensWorker?: boolean } | null)?.prefixLensWorker === true;
if (worker) {
  // The bundle's top level starts the worker's loop (main.ts).
  const data = (workerData as { codeCache?: Uint8Array | null }).codeCache;
  if (data) loadCached(FULL, '', data);
  else require(FULL);
} else bin();

/** The bin's run: the warm entry, else the full CLI. */
function bin(): void {
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
}
