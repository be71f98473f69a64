/**
 * Runs jobs on the analysis worker thread (dist/worker.js), one at a time, in order; urgent jobs
 * (what the user asked for) go before background ones (lazy summaries). Cancelling a running job
 * terminates the worker; the next job starts a fresh one.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type * as vscode from 'vscode';
import type { WorkerJob, WorkerRequest, WorkerResponse } from './workerProtocol.js';

type Ok<J extends WorkerJob['op']> = Extract<WorkerResponse, { ok: true; op: J }>;

interface Pending {
  req: WorkerRequest;
  resolve: (r: WorkerResponse) => void;
  reject: (e: Error) => void;
  token?: vscode.CancellationToken;
  urgent: boolean;
}

/** Thrown for a job that was cancelled (by its token or by `dispose`). */
export class CancelledError extends Error {
  constructor() {
    super('cancelled');
  }
}

export class AnalysisWorker {
  private worker: Worker | undefined;
  private queue: Pending[] = [];
  private running: Pending | undefined;
  private nextId = 1;
  /** Jobs finished and worker threads started, for the log and tests. */
  readonly stats = { jobs: 0, workersStarted: 0, cancelled: 0 };

  /**
   * @param distDir folder of worker.js
   * @param resultsDir folder of the shared result cache (src/cache/results.ts) analyze jobs use
   */
  constructor(
    private readonly distDir: string,
    private readonly log: (line: string) => void,
    private readonly resultsDir?: string,
  ) {}

  /**
   * Queues a job. @param urgent run before queued background jobs
   * @throws CancelledError when `token` is cancelled first; Error with the worker's message when the job failed
   */
  run<J extends WorkerJob>(job: J, opts: { token?: vscode.CancellationToken; urgent?: boolean } = {}): Promise<Ok<J['op']>> {
    return new Promise<WorkerResponse>((resolve, reject) => {
      if (opts.token?.isCancellationRequested) return reject(new CancelledError());
      const withCache = (job.op === 'analyze' || job.op === 'live' || job.op === 'diagnose') && this.resultsDir && !job.cacheDir ? { ...job, cacheDir: this.resultsDir } : job;
      const p: Pending = { req: { ...withCache, id: this.nextId++ } as WorkerRequest, resolve, reject, token: opts.token, urgent: opts.urgent === true };
      opts.token?.onCancellationRequested(() => this.cancel(p));
      // Urgent jobs go before the background ones, in the order they came (two listings finish in order).
      if (opts.urgent) {
        const firstBackground = this.queue.findIndex((q) => !q.urgent);
        this.queue.splice(firstBackground < 0 ? this.queue.length : firstBackground, 0, p);
      } else this.queue.push(p);
      this.pump();
    }).then((r) => {
      if (!r.ok) throw new Error(r.error);
      return r as Ok<J['op']>;
    });
  }

  /** Jobs waiting (not counting the running one). */
  get queued(): number {
    return this.queue.length;
  }

  /** True while a job runs or waits. */
  get busy(): boolean {
    return this.running !== undefined || this.queue.length > 0;
  }

  private cancel(p: Pending): void {
    this.stats.cancelled++;
    if (this.running === p) {
      this.log(`job ${p.req.id} (${p.req.op}) cancelled: worker terminated`);
      this.running = undefined;
      void this.worker?.terminate();
      this.worker = undefined;
      p.reject(new CancelledError());
      this.pump();
      return;
    }
    const i = this.queue.indexOf(p);
    if (i >= 0) {
      this.queue.splice(i, 1);
      p.reject(new CancelledError());
    }
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(join(this.distDir, 'worker.js'));
    this.stats.workersStarted++;
    w.on('message', (r: WorkerResponse) => {
      const p = this.running;
      if (!p || p.req.id !== r.id) return;
      this.running = undefined;
      this.stats.jobs++;
      p.resolve(r);
      this.pump();
    });
    w.on('error', (e) => this.fail(w, e));
    w.on('exit', (code) => {
      if (this.worker === w) this.fail(w, new Error(`analysis worker exited with code ${code}`));
    });
    this.worker = w;
    return w;
  }

  private fail(w: Worker, e: Error): void {
    if (this.worker !== w) return;
    this.worker = undefined;
    this.log(`analysis worker failed: ${e.message}`);
    const p = this.running;
    this.running = undefined;
    p?.reject(e);
    this.pump();
  }

  private pump(): void {
    if (this.running || !this.queue.length) return;
    const p = this.queue.shift()!;
    this.running = p;
    this.ensureWorker().postMessage(p.req);
  }

  /** Terminates the worker; queued and running jobs are rejected with CancelledError. */
  dispose(): void {
    const all = [...(this.running ? [this.running] : []), ...this.queue];
    this.queue = [];
    this.running = undefined;
    void this.worker?.terminate();
    this.worker = undefined;
    for (const p of all) p.reject(new CancelledError());
  }
}
