/**
 * Anthropic with 1 h breakpoints on the head and 5 min ones on the conversation: after 6 min the
 * conversation entry is gone and only the head is read. That is a TTL expiry with its cost, not
 * a hit (recorded Pi bodies #006 → #007, breakpoint TTLs, times and usage edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const MIN = 60_000;
const at = (ms: number) => (m: any) => {
  m.receivedAt = new Date(Date.parse('2026-11-30T09:00:00Z') + ms).toISOString();
};
const headFor1h = (b: any) => {
  b.tools[3].cache_control = { type: 'ephemeral', ttl: '1h' };
  b.system[0].cache_control = { type: 'ephemeral', ttl: '1h' };
};

describe('review: mixed breakpoint lifetimes', () => {
  it('6 min later only the 1 h head entry is alive: ttl-expired with the conversation re-billed', async () => {
    const headOnly = { input_tokens: 0, cache_creation_input_tokens: 1103, cache_read_input_tokens: 1519, output_tokens: 5 };
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', headFor1h, at(0)],
      ['007-anthropic-messages', headFor1h, (m) => (at(6 * MIN)(m), (m.usage = headOnly))],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    // Was 'hit' with nothing lost: the entry's lifetime was the longest of its breakpoints (1 h).
    assert.equal(r.verdict, 'ttl-expired');
    assert.equal(r.expectedRead, 1519);
    // #006's conversation entry (2451 tokens, its whole prompt) minus the 1519 read.
    assert.equal(r.lostTokens, 932);
  });
});
