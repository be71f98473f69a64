/**
 * Worker threads for the CLI: several sessions are read and analyzed at once, one per worker
 * (each holds one session at a time), while the main thread writes the results in input order.
 *
 * The worker runs the same bundle as the CLI (`dist/cli.js` starts `workerMain` when it is loaded
 * as a worker with `workerData.prefixLensWorker`), so nothing else has to be shipped. From sources
 * (tsx, tests) the CLI analyzes in its own thread.
 */
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { analyzeRefCached, analyzeRefUncached } from '../cache/results.js';
import type { SessionRef } from '../hosts/registry.js';
import { releaseReaders } from '../hosts/registry.js';
import type { SessionReport } from '../report/json.js';
import { jsonText } from '../sanitize.js';
import { renderSession, type RenderedSession } from './pipeline.js';
import { releaseBetweenSessions, type NextSession } from '../memory.js';
import { WORKER_ARG } from './workerarg.js';

/**
 * A job for a worker: one ref, analyzed through the cache folder when given; `json`: reply with
 * the sessions' `--json` text (transferred bytes) instead of the reports (a structured clone of
 * every request object, then serialized again by the main thread).
 */
interface Job {
  id: number;
  ref: SessionRef;
  cacheDir: string | null;
  json?: boolean;
  /** The ref's bytes and the run's largest (memory.ts: the collection before it). */
  next?: NextSession;
}

type Reply =
  | { id: number; ok: true; reports: SessionReport[] }
  | { id: number; ok: true; rendered: RenderedSession[] }
  | { id: number; ok: false; error: string };

/**
 * How workers are started when the CLI runs from its bin (entry.ts): the bin's script, which loads
 * the analysis bundle with `codeCache` (V8 data of the bundle, made or taken by the main thread)
 * instead of compiling it from source. Without it (the bundle loaded directly) a worker runs this
 * bundle and compiles it.
 */
export interface WorkerBoot {
  script: string;
  codeCache: Uint8Array | null;
}

let boot: WorkerBoot | undefined;

/** Sets how WorkerPool starts its workers (see WorkerBoot); called once by `cli`. */
export function setWorkerBoot(b: WorkerBoot | undefined): void {
  boot = b;
}

/** True in a thread started by WorkerPool. */
export function isAnalysisWorker(): boolean {
  return !isMainThread && (workerData as { prefixLensWorker?: boolean } | null)?.prefixLensWorker === true;
}

/** The worker's loop: analyze each job, reply, release the readers' state between jobs. */
export function workerMain(): void {
  parentPort!.on('message', (job: Job) => {
    // Before a large session, the garbage of the ones before it is collected (memory.ts).
    releaseBetweenSessions(job.next);
    // --json: the main thread stores the output entry, which holds the reports (no result entry too).
    const run = job.cacheDir ? analyzeRefCached(job.ref, { cacheDir: job.cacheDir, reportsInOutput: job.json === true }) : analyzeRefUncached(job.ref);
    void run
      .then(
        async (reports) => {
          if (!job.json) return parentPort!.postMessage({ id: job.id, ok: true, reports } satisfies Reply);
          const rendered: RenderedSession[] = [];
          for (const s of reports) rendered.push(await renderSession(s, jsonText));
          const transfer = rendered.flatMap((r) => r.chunks.map((c) => c.buffer as ArrayBuffer));
          parentPort!.postMessage({ id: job.id, ok: true, rendered } satisfies Reply, transfer);
        },
        (e: unknown) => parentPort!.postMessage({ id: job.id, ok: false, error: e instanceof Error ? e.message : String(e) } satisfies Reply),
      )
      // The session's objects are unreferenced once the reply is posted (its bytes were transferred).
      .then(() => setImmediate(() => releaseBetweenSessions('idle')));
  });
  // OpenCode's database stays open between refs of one store; it is freed when the pool ends.
  process.on('exit', releaseReaders);
}

/**
 * Bytes of sessions besides the largest (which one thread analyzes anyway) per worker, below which
 * the worker is not started: a worker is a new V8 isolate that pays Node's bootstrap, the bundle
 * (from the main thread's V8 data), the JIT warm-up of every hot function and a heap of its own
 * (~0.2–0.3 s CPU each on the development machine, CPU profiles), while the analysis runs at
 * ~5–6 MiB/s CPU there: below ~4 MiB to overlap, the workers cost more CPU than they save wall time.
 */
export const BYTES_PER_WORKER = 4 * 1024 * 1024;

/**
 * Number of workers for `refs` sessions: workersFor on this machine's cores
 * (`os.availableParallelism()`), with the refs' `bytes` (their sizes, budget.ts refBytes).
 * `PREFIX_LENS_WORKERS=N` overrides (at most `refs`; 0 = analyze in the main thread). From sources
 * (tsx, tests) none.
 */
export function workerCount(refs: number, env: NodeJS.ProcessEnv = process.env, bytes?: readonly number[]): number {
  const forced = env.PREFIX_LENS_WORKERS;
  if (forced !== undefined && /^\d+$/.test(forced)) return Math.min(Number(forced), refs);
  if (!__filename.endsWith('.js')) return 0;
  return workersFor(availableParallelism(), refs, bytes);
}

/** Fewest cores on which workers are started (below it the CLI analyzes in its main thread). */
export const MIN_WORKER_CORES = 4;

/**
 * The worker rule of workerCount on `cores` cores: none below MIN_WORKER_CORES, else
 * min(refs, floor(cores / 2), 4), and with `bytes` at most one more than the bytes besides the
 * largest session hold BYTES_PER_WORKER; none below 2 (a small input, or one large session with
 * small ones, is analyzed in the main thread).
 *
 * Why half the cores: one analysis thread already keeps ~1.6 cores busy (V8's parallel and
 * concurrent garbage collector and its compiler threads run beside it). Measured on the bench
 * corpus (scripts/bench/corpus.ts: 40 Pi sessions, 72 MiB) with `npm run bench -- --rounds 1`,
 * 2026-12-02 04:29–04:33 UTC, commit b0c0b91, load average < 3, on the development machine
 * (2 cores): cold `analyze --json` with 2 workers 13,464 ms CPU, 8,096 ms wall, 275 MiB peak RSS;
 * in one thread (`PREFIX_LENS_WORKERS=0 … --no-cache`) 8,630 ms CPU, 5,490 ms wall, 141 MiB. On
 * 2 cores the workers lose CPU, wall time and memory, so none are started below 4 cores. The
 * ≥ 4-core rule (each worker ~1.6 cores, so cores / 2 of them, at most 4: each holds a session)
 * is derived from that figure, not measured: this machine has 2 cores.
 */
export function workersFor(cores: number, refs: number, bytes?: readonly number[]): number {
  if (refs < 2 || cores < MIN_WORKER_CORES) return 0;
  let n = Math.min(refs, Math.floor(cores / 2), 4);
  if (bytes) {
    let total = 0;
    let largest = 0;
    for (const b of bytes) {
      total += b;
      if (b > largest) largest = b;
    }
    n = Math.min(n, 1 + Math.floor((total - largest) / BYTES_PER_WORKER));
  }
  return n < 2 ? 0 : n;
}

/** A fixed set of analysis workers; jobs go to the least busy one. */
export class WorkerPool {
  private readonly workers: Array<{ w: Worker; busy: number }> = [];
  private readonly pending = new Map<number, { resolve: (r: SessionReport[] | { rendered: RenderedSession[] }) => void; reject: (e: Error) => void }>();
  private next = 0;

  /**
   * @param size number of workers (≥ 1)
   * @param cacheDir result cache folder, or null for --no-cache
   */
  constructor(
    size: number,
    private readonly cacheDir: string | null,
  ) {
    for (let i = 0; i < size; i++) {
      const w = boot
        ? new Worker(boot.script, { argv: [WORKER_ARG], workerData: { prefixLensWorker: true, codeCache: boot.codeCache } })
        : new Worker(__filename, { workerData: { prefixLensWorker: true } });
      const slot = { w, busy: 0 };
      w.on('message', (r: Reply) => {
        slot.busy--;
        const p = this.pending.get(r.id);
        this.pending.delete(r.id);
        if (r.ok) p?.resolve('rendered' in r ? { rendered: r.rendered } : r.reports);
        else p?.reject(new Error(r.error));
      });
      w.on('error', (e) => {
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
      });
      this.workers.push(slot);
    }
  }

  /** Number of workers. */
  get size(): number {
    return this.workers.length;
  }

  /**
   * Analyzes one ref in a worker. @throws the worker's error
   * @param next the ref's bytes and the run's largest (the worker's collection before it)
   */
  analyze(ref: SessionRef, json?: false, next?: NextSession): Promise<SessionReport[]>;
  /** Analyzes one ref in a worker and renders its sessions' `--json` text there. */
  analyze(ref: SessionRef, json: true, next?: NextSession): Promise<{ rendered: RenderedSession[] }>;
  analyze(ref: SessionRef, json = false, next?: NextSession): Promise<SessionReport[] | { rendered: RenderedSession[] }> {
    const slot = this.workers.reduce((a, b) => (b.busy < a.busy ? b : a));
    slot.busy++;
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      slot.w.postMessage({ id, ref, cacheDir: this.cacheDir, json, next } satisfies Job);
    });
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((s) => s.w.terminate()));
  }
}
