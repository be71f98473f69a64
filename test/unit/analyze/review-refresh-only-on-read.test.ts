/**
 * OpenAI: an entry's idle time restarts only when a request reads from it. A request that breaks
 * at tool 0 reads nothing, so the entry still expires 10 min after its last use (recorded Pi
 * OpenAI bodies, edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const MIN = 60_000;
const at = (ms: number) => (m: any) => {
  m.receivedAt = new Date(Date.parse('2026-11-30T09:00:00Z') + ms).toISOString();
};
const noRead = (m: any) => {
  m.usage.prompt_tokens_details.cached_tokens = 0;
};

describe('review: an entry is refreshed only by a read', () => {
  it('a revert 12 min after the entry, past a request that read none of it, is ttl-expired, not an unexplained miss', async () => {
    // #1 at 0 min; #2 at 6 min changes tool 0's description (shares no block with #1, reads
    // nothing); #3 at 12 min goes on from #1 with the original tools: #1 idled 12 min (> ~10).
    const dir = captureDir(PI_MAIN, [
      ['001-openai-completions', undefined, at(0)],
      [
        '001-openai-completions',
        (b) => (b.tools[0].function.description = 'Changed: ' + b.tools[0].function.description),
        (m) => (at(6 * MIN)(m), noRead(m)),
      ],
      ['002-openai-completions', undefined, (m) => (at(12 * MIN)(m), noRead(m))],
    ]);
    const a = analyzeSession(await readCaptureSession(dir));
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'break', 'ttl-expired']);
    assert.equal(a.requests[2].matched, 1);
    assert.equal(a.requests[2].expectedRead, 0);
    // #1's prompt is 1567 tokens, of which OpenAI caches 1536 (128-token steps): the tool-0 change
    // re-bills 1536, not 1567.
    assert.equal(a.requests[1].lostTokens, 1536);
  });
});
