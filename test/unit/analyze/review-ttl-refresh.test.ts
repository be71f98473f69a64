/**
 * Anthropic: reading an entry refreshes its lifetime, also when the entry is found by lookback at
 * a position the reading request does not mark itself (recorded Pi bodies, edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const MIN = 60_000;
const at = (ms: number) => (m: any) => {
  m.receivedAt = new Date(Date.parse('2026-11-30T09:00:00Z') + ms).toISOString();
};

/** #006 answered differently: the user goes on from #006's last message (a rewind to it). */
const branchFrom006 = (b: any) => {
  delete b.messages[12].content[0].cache_control;
  b.messages.push({ role: 'assistant', content: [{ type: 'text', text: 'Sure, reading it.' }] });
  b.messages.push({ role: 'user', content: [{ type: 'text', text: 'Actually, never mind.', cache_control: { type: 'ephemeral' } }] });
};

describe('review: Anthropic TTL refreshed on a lookback read', () => {
  it('an entry read 4 min after it was written is still alive 8 min after it was written', async () => {
    // #1 (#006) writes its last-message entry X at 0 min; #2 (#007) reads X by lookback at 4 min,
    // which refreshes X until 9 min; #3 rewinds to #006's last message at 8 min and reads X again.
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', undefined, at(0)],
      ['007-anthropic-messages', undefined, at(4 * MIN)],
      [
        '006-anthropic-messages',
        branchFrom006,
        (m) => {
          at(8 * MIN)(m);
          m.usage = { input_tokens: 0, cache_creation_input_tokens: 20, cache_read_input_tokens: 2451, output_tokens: 5 };
        },
      ],
    ]);
    const a = analyzeSession(await readCaptureSession(dir));
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'hit', 'break']);
    // 2451 = the estimate of X's prefix (as #2 expected it); it was 1519 (the system entry only)
    // when X was taken as expired at 5 min.
    assert.equal(a.requests[1].expectedRead, 2451);
    assert.equal(a.requests[2].expectedRead, 2451);
  });
});
