/**
 * An entry's lifetime is an estimate (a breakpoint's `ttl`, else the family's default: a
 * transcript may not record a 1 h breakpoint, and another request can refresh a shared prefix).
 * When the provider reads the whole entry after that estimate ran out, the read is the evidence:
 * a hit (with a note), not `ttl-expired`. A read that collapsed after the gap stays ttl-expired.
 * Recorded Pi bodies (test/fixtures/pi/long, `PI_CACHE_RETENTION=long`: 1 h breakpoints), #2 and
 * #3 sent 61 minutes apart.
 */
import assert from 'node:assert/strict';
import { analyzeSession, type RequestAnalysis } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_LONG } from './review-helpers.js';

async function later(minutes: number, usage?: Record<string, number>): Promise<RequestAnalysis> {
  const at = (m: any) => {
    m.receivedAt = new Date(Date.parse(m.receivedAt) + minutes * 60_000).toISOString();
    if (usage) m.usage = { ...m.usage, ...usage };
  };
  const dir = captureDir(PI_LONG, [['002-anthropic-messages'], ['003-anthropic-messages', undefined, at]]);
  return analyzeSession(await readCaptureSession(dir)).requests[1];
}

describe('review: a read after the estimated lifetime', () => {
  it('59 minutes later (within the 1 h breakpoint): a hit', async () => {
    const r = await later(59);
    assert.deepEqual([r.verdict, r.ttlMs, r.expectedRead, r.observedRead, r.lostTokens, r.notes], ['hit', 3_600_000, 1581, 1581, 0, []]);
  });

  it('61 minutes later, all 1,581 tokens of the entry read: a hit with a note (was: ttl-expired, expected 0)', async () => {
    const r = await later(61);
    assert.deepEqual([r.verdict, r.ttlMs, r.gapMs, r.expectedRead, r.observedRead, r.lostTokens], ['hit', 3_600_000, 3_660_071, 1581, 1581, 0]);
    assert.deepEqual(r.notes, ["read after the entry's estimated lifetime (61 min since #1, lifetime 60 min): the provider still held it (a longer lifetime than the request shows, or another request refreshed it)"]);
  });

  it('61 minutes later and nothing read: ttl-expired, the entry written again', async () => {
    const r = await later(61, { cache_read_input_tokens: 0, cache_creation_input_tokens: 1616 });
    assert.deepEqual([r.verdict, r.expectedRead, r.observedRead, r.lostTokens, r.notes], ['ttl-expired', 0, 0, 1581, []]);
  });
});
