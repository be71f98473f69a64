/**
 * Anthropic: a request that reads only the head of an entry does not keep the entry's
 * conversation alive. A revert to that conversation after its 5 min is a TTL expiry (recorded
 * Pi bodies #006 and #007, an earlier message, times and usage edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const MIN = 60_000;
const at = (ms: number) => (m: any) => {
  m.receivedAt = new Date(Date.parse('2026-11-30T09:00:00Z') + ms).toISOString();
};
const headOnly = (m: any) => {
  m.usage = { input_tokens: 0, cache_creation_input_tokens: 1103, cache_read_input_tokens: 1519, output_tokens: 5 };
};

describe('review: a revert past the lifetime of the entry it reverts to', () => {
  it('#3 continues #1 7 min after it; #2 at 3 min edited message 2 and read only the head', async () => {
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', undefined, at(0)],
      ['007-anthropic-messages', (b) => (b.messages[2].content[0].text = 'Edited earlier message.'), (m) => (at(3 * MIN)(m), headOnly(m))],
      ['007-anthropic-messages', undefined, (m) => (at(7 * MIN)(m), headOnly(m))],
    ]);
    const a = analyzeSession(await readCaptureSession(dir));
    // #1's conversation entry was written at 0 min and never read again: gone at 5 min. It used
    // to count as refreshed by #2 (which read the system entry only), so #3 was a 'hit'.
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'break', 'ttl-expired']);
    assert.equal(a.requests[2].matched, 1);
    // #1's 2451 tokens minus the 1519 read.
    assert.equal(a.requests[2].lostTokens, 932);
  });
});
