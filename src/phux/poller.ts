/**
 * Polls the fleet (for the VS Code Fleet view) and reports only changes.
 *
 * phux has no fleet-wide push stream in the CLI (reference/phux.md §4: "Poll it; there is no
 * fleet-wide push stream"), so the view polls `phux agent list --json`. While phux is absent,
 * stopped or slow, the delay doubles up to a ceiling so a missing server costs almost nothing.
 * Timers come from an injectable `Scheduler` so tests drive time by hand.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FleetResult } from './client.js';

/** The two timer functions the poller needs; `timerScheduler` wraps the global ones. */
export interface Scheduler {
  /** Calls `fn` once after `delayMs` ms; returns a handle for `clear`. */
  set(fn: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

/** `Scheduler` over the global `setTimeout`/`clearTimeout`; timers are `unref`'d so a poller never keeps a CLI alive. */
export const timerScheduler: Scheduler = {
  set(fn, delayMs) {
    const t = setTimeout(fn, delayMs);
    t.unref?.();
    return t;
  },
  clear(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** Options of `FleetPoller`. */
export interface FleetPollerOptions {
  /** One fleet query, e.g. `() => fetchFleet({ bin })`. Must not throw (a throw is treated as `invalid`). */
  fetch: () => Promise<FleetResult>;
  /** Called with the new result when it differs from the last one reported (see `sameFleetResult`). */
  onChange: (result: FleetResult) => void;
  /** Delay between polls while phux answers (`ok`/`invalid`), ms. Default 2 000. */
  intervalMs?: number;
  /** Ceiling of the backoff delay, ms. Default 30 000. */
  maxBackoffMs?: number;
  /** Timer source. Default `timerScheduler`. */
  scheduler?: Scheduler;
}

/** States that back off: phux absent, no server, or no answer in time. */
const BACKOFF_STATES: ReadonlySet<FleetResult['state']> = new Set(['not-installed', 'not-running', 'timeout']);

/**
 * True when two results describe the same fleet: deep equality of the validated result without
 * `elapsedMs` (which differs on every call).
 */
export function sameFleetResult(a: FleetResult, b: FleetResult): boolean {
  const { elapsedMs: _a, ...restA } = a;
  const { elapsedMs: _b, ...restB } = b;
  return isDeepStrictEqual(restA, restB);
}

/**
 * Polls `fetch` one call at a time: poll, wait, poll. The wait is `intervalMs` after `ok` or
 * `invalid`; after `not-installed`/`not-running`/`timeout` it is `intervalMs × 2^k` for the k-th
 * failure in a row (k = 1, 2, …), capped at `maxBackoffMs`, and resets on the next answer.
 * `onChange` fires for the first result and then only when `sameFleetResult` says it changed.
 */
export class FleetPoller {
  private readonly intervalMs: number;
  private readonly maxBackoffMs: number;
  private readonly scheduler: Scheduler;
  private timer: unknown = undefined;
  private running = false;
  /** Incremented by start/stop so a poll from an earlier run is discarded. */
  private generation = 0;
  private failures = 0;
  private last: FleetResult | undefined;
  private inflight: Promise<void> = Promise.resolve();
  /** Delay chosen after the last completed poll, ms (undefined before the first one). */
  nextDelayMs: number | undefined;

  constructor(private readonly options: FleetPollerOptions) {
    this.intervalMs = options.intervalMs ?? 2_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.scheduler = options.scheduler ?? timerScheduler;
  }

  /** The last result reported through `onChange`, if any. */
  get current(): FleetResult | undefined {
    return this.last;
  }

  /** Whether the poller is started. */
  get isRunning(): boolean {
    return this.running;
  }

  /** Starts polling now (first poll immediately). No-op when already running. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.generation += 1;
    this.inflight = this.poll(this.generation);
  }

  /** Stops polling: clears the pending timer; a poll in flight is discarded when it ends. */
  stop(): void {
    this.running = false;
    this.generation += 1;
    if (this.timer !== undefined) this.scheduler.clear(this.timer);
    this.timer = undefined;
  }

  /** Resolves when the poll in flight (if any) has finished and the next one is scheduled. For tests and shutdown. */
  settled(): Promise<void> {
    return this.inflight;
  }

  private async poll(generation: number): Promise<void> {
    let result: FleetResult;
    try {
      result = await this.options.fetch();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      result = { state: 'invalid', panes: [], cause: 'exit', message, issues: [], elapsedMs: 0 };
    }
    if (generation !== this.generation) return;
    if (!this.last || !sameFleetResult(this.last, result)) {
      this.last = result;
      this.options.onChange(result);
    }
    if (generation !== this.generation) return; // onChange may stop the poller
    if (BACKOFF_STATES.has(result.state)) {
      this.failures += 1;
      this.nextDelayMs = Math.min(this.maxBackoffMs, this.intervalMs * 2 ** this.failures);
    } else {
      this.failures = 0;
      this.nextDelayMs = this.intervalMs;
    }
    this.timer = this.scheduler.set(() => {
      this.timer = undefined;
      if (generation === this.generation) this.inflight = this.poll(generation);
    }, this.nextDelayMs);
  }
}
