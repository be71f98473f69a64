// FleetPoller with a hand-driven scheduler: no real timers, no timing assertions.
import assert from 'node:assert/strict';
import type { FleetResult } from '../../../src/phux/client.js';
import { FleetPoller, sameFleetResult, type Scheduler } from '../../../src/phux/poller.js';

class FakeScheduler implements Scheduler {
  pending: Array<{ id: number; fn: () => void; delayMs: number }> = [];
  private nextId = 1;
  set(fn: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.pending.push({ id, fn, delayMs });
    return id;
  }
  clear(handle: unknown): void {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }
  /** Runs the only pending timer and returns its delay. */
  fire(): number {
    assert.equal(this.pending.length, 1, 'exactly one timer should be pending');
    const t = this.pending.shift()!;
    t.fn();
    return t.delayMs;
  }
}

const ok = (terminals: string[], elapsedMs = 5): FleetResult => ({
  state: 'ok',
  panes: terminals.map((t) => ({
    terminal: t,
    session: 's',
    window: 'window-0',
    agent: { id: 'pi', label: 'pi', kind: 'pi' },
    state: 'idle',
    confidence: 1,
    attention: 'none',
    title: null,
    cwd: null,
    sources: [],
    explanation: '',
  })),
  document: { schema_version: 1, agents: [] },
  warnings: [],
  elapsedMs,
});
const notRunning = (elapsedMs = 3): FleetResult => ({ state: 'not-running', panes: [], message: 'phux: no server running at /s', exitCode: 1, elapsedMs });
const timeout = (): FleetResult => ({ state: 'timeout', panes: [], message: 'phux did not answer in 1 s', timeoutMs: 1000, elapsedMs: 1001 });
const invalid = (): FleetResult => ({ state: 'invalid', panes: [], cause: 'json', message: 'bad', issues: [], elapsedMs: 2 });

/** A poller over a scripted list of results; records what onChange saw. */
function scripted(results: FleetResult[], opts: { intervalMs?: number; maxBackoffMs?: number } = {}) {
  const scheduler = new FakeScheduler();
  const seen: FleetResult[] = [];
  let calls = 0;
  const poller = new FleetPoller({
    fetch: async () => {
      const r = results[calls++];
      if (!r) throw new Error('script exhausted');
      return r;
    },
    onChange: (r) => seen.push(r),
    scheduler,
    ...opts,
  });
  return { poller, scheduler, seen, calls: () => calls };
}

describe('FleetPoller', () => {
  it('emits the first result and then only changes (elapsedMs ignored)', async () => {
    const { poller, scheduler, seen } = scripted([ok(['@1'], 5), ok(['@1'], 9), ok(['@1', '@2']), ok(['@1', '@2'], 40)]);
    poller.start();
    await poller.settled();
    for (let i = 0; i < 3; i++) {
      scheduler.fire();
      await poller.settled();
    }
    assert.deepEqual(seen.map((r) => r.panes.map((p) => p.terminal)), [['@1'], ['@1', '@2']]);
    assert.equal(poller.current, seen[1]);
  });

  it('backs off 2×, 4×, 8× … up to the ceiling while phux is not running or times out, and resets on an answer', async () => {
    const { poller, scheduler, seen } = scripted(
      [notRunning(), notRunning(5), timeout(), notRunning(), notRunning(), ok(['@1']), notRunning()],
      { intervalMs: 1000, maxBackoffMs: 10_000 },
    );
    poller.start();
    await poller.settled();
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      delays.push(scheduler.fire());
      await poller.settled();
    }
    delays.push(scheduler.pending[0].delayMs);
    assert.deepEqual(delays, [2000, 4000, 8000, 10_000, 10_000, 1000, 2000]);
    assert.deepEqual(seen.map((r) => r.state), ['not-running', 'timeout', 'not-running', 'ok', 'not-running']);
  });

  it('keeps the normal interval after an invalid answer (phux did answer)', async () => {
    const { poller, scheduler } = scripted([invalid(), invalid()], { intervalMs: 1500 });
    poller.start();
    await poller.settled();
    assert.equal(scheduler.fire(), 1500);
    await poller.settled();
    assert.equal(poller.nextDelayMs, 1500);
  });

  it('stop() clears the pending timer and discards a poll in flight', async () => {
    const scheduler = new FakeScheduler();
    const seen: FleetResult[] = [];
    let release: (r: FleetResult) => void = () => {};
    const poller = new FleetPoller({
      fetch: () => new Promise<FleetResult>((resolve) => (release = resolve)),
      onChange: (r) => seen.push(r),
      scheduler,
    });
    poller.start();
    poller.stop();
    release(ok(['@1']));
    await poller.settled();
    assert.deepEqual([seen.length, scheduler.pending.length, poller.isRunning], [0, 0, false]);

    poller.start();
    release(ok(['@1']));
    await poller.settled();
    assert.equal(scheduler.pending.length, 1);
    poller.stop();
    assert.equal(scheduler.pending.length, 0);
    assert.equal(seen.length, 1);
  });

  it('start() while running does not start a second loop', async () => {
    const { poller, scheduler, calls } = scripted([ok(['@1']), ok(['@1'])]);
    poller.start();
    poller.start();
    await poller.settled();
    assert.deepEqual([calls(), scheduler.pending.length], [1, 1]);
  });

  it('turns a throwing fetch into an invalid result', async () => {
    const { poller, seen } = scripted([]);
    poller.start();
    await poller.settled();
    assert.deepEqual(seen.map((r) => [r.state, r.state === 'invalid' && r.message]), [['invalid', 'script exhausted']]);
  });

  it('sameFleetResult compares everything but elapsedMs', () => {
    assert.equal(sameFleetResult(notRunning(1), notRunning(99)), true);
    assert.equal(sameFleetResult(ok(['@1']), ok(['@2'])), false);
  });
});
