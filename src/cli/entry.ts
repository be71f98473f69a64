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
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCacheDir, useCodeOf } from '../cache/identity.js';
import { loadCached } from './codecache.js';
import { warmJson } from './warm.js';
import { WORKER_ARG } from './workerarg.js';
import { stdoutFailed } from './stdoutError.js';

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

/**
 * True in an analysis worker (workers.ts). The main thread does not load node:worker_threads to
 * know it (with the streams it pulls in, ~15–30 ms CPU of a ~130 ms warm run, CPU profile): a
 * worker is started with WORKER_ARG appended to its argv, and only then is workerData checked.
 */
function isWorker(): boolean {
  if (process.argv[process.argv.length - 1] !== WORKER_ARG) return false;
  const wt = require('node:worker_threads') as typeof import('node:worker_threads');
  return !wt.isMainThread && (wt.workerData as { prefixLensWorker?: boolean } | null)?.prefixLensWorker === true;
}

if (isWorker()) {
  // The bundle's top level starts the worker's loop (main.ts).
  const data = ((require('node:worker_threads') as typeof import('node:worker_threads')).workerData as { codeCache?: Uint8Array | null }).codeCache;
  if (data) loadCached(FULL, '', data);
  else require(FULL);
} else bin();

/** The bin's run: the warm entry, else the full CLI. */
function bin(): void {
  // Entries carry the identity of the bundle that writes them (the full one), not of this one.
  useCodeOf(FULL);
  const cacheDir = defaultCacheDir(process.env);
  warmJson(process.argv.slice(2), {
    cwd: process.cwd(),
    env: process.env,
    cacheDir,
    sink: { line: (t) => write(Buffer.from(`${t}\n`)), bytes: write },
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

/** Set once fd 1 refused a write (EAGAIN: a non-blocking pipe): the rest goes through process.stdout. */
let viaStream = false;

/**
 * The warm entry's stdout: `writeSync` to fd 1, not process.stdout (whose stream classes cost
 * ~10 ms CPU to load, and a warm run writes whole blocks). A pipe or file left non-blocking by
 * another process (EAGAIN) falls back to process.stdout with its backpressure; any other error is
 * stdoutFailed's, as in the full CLI (EPIPE, `| head`, ends the run quietly).
 */
function write(b: Uint8Array): Promise<void> | void {
  let at = 0;
  while (!viaStream && at < b.length) {
    try {
      at += writeSync(1, b, at, b.length - at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') stdoutFailed(e);
      viaStream = true;
      process.stdout.on('error', stdoutFailed);
    }
  }
  if (at >= b.length) return;
  // The stream may keep the chunk after this returns (the warm entry reuses its buffer): a copy.
  const rest = Buffer.from(b.subarray(at));
  return new Promise<void>((ok, fail) => {
    if (process.stdout.write(rest, (e) => (e ? fail(e) : undefined))) ok();
    else process.stdout.once('drain', ok);
  });
}
