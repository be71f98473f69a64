/**
 * Verdicts that the recordings do not reach on their own (their requests are seconds apart and
 * the synthetic cache never misses): the recorded bodies with their times or usage changed.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import type { Session } from '../../../src/core/model.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';

const MIN = 60_000;

/** Shifts the send time of request `index` (1-based) and every later one by `ms`. */
function delay(s: Session, index: number, ms: number): Session {
  for (const r of s.requests) if (r.index >= index && r.timeMs !== null) r.timeMs += ms;
  return s;
}

/** What the provider reports for request `index` when its entry is gone: nothing read (the tokens written or billed as input instead). */
function missed(s: Session, index: number, written: boolean): Session {
  const r = s.requests[index - 1];
  const u = r.usage!;
  r.usage = written ? { ...u, cacheWrite: u.cacheWrite! + u.cacheRead!, cacheRead: 0 } : { ...u, uncached: u.uncached! + u.cacheRead!, cacheRead: 0 };
  return s;
}

describe('verdicts on edited recordings', () => {
  it('an OpenAI request 11 min after the previous one finds its entry expired (in-memory cache ~10 min)', async () => {
    // The recorded (synthetic) read is replaced by what an expired entry gives: nothing (a full
    // read after the gap would be the provider holding the entry longer: a hit, see
    // review-read-past-lifetime.test.ts).
    const a = analyzeSession(missed(delay(await readCaptureSession('test/fixtures/pi/main/requests'), 3, 11 * MIN), 3, false));
    assert.deepEqual(a.requests.slice(0, 4).map((r) => r.verdict), ['cold', 'hit', 'ttl-expired', 'hit']);
    // 95 ms apart in the recording, then 11 min later.
    assert.equal(a.requests[2].gapMs, 11 * MIN + 95);
  });

  it('Anthropic: 6 min is past the 5 min TTL; with PI_CACHE_RETENTION=long (1 h breakpoints) it is not', async () => {
    const short = analyzeSession(missed(delay(await readCaptureSession('test/fixtures/pi/main/requests'), 7, 6 * MIN), 7, true));
    assert.equal(short.requests[6].verdict, 'ttl-expired');
    assert.equal(short.requests[6].expectedRead, 0);
    const long = analyzeSession(delay(await readCaptureSession('test/fixtures/pi/long/requests'), 3, 6 * MIN));
    assert.equal(long.requests[2].verdict, 'hit');
    assert.equal(long.requests[2].expectedRead, 1581);
    assert.equal(long.requests[2].observedRead, 1581);
  });

  it('a hit read that collapses with the prefix unchanged is an unexplained miss, with its cost in tokens', async () => {
    const s = await readCaptureSession('test/fixtures/pi/main/requests');
    const u = s.requests[2].usage!;
    s.requests[2].usage = { ...u, uncached: u.uncached! + u.cacheRead!, cacheRead: 0 };
    const a = analyzeSession(s);
    assert.equal(a.requests[2].verdict, 'unexplained-miss');
    assert.equal(a.requests[2].break, null);
    assert.equal(a.requests[2].lostTokens, 1536);
  });
});
