/**
 * OpenAI: a request that reads only the start of an entry keeps only that start alive. Going
 * back to the whole entry past its idle time is a TTL expiry (recorded Pi OpenAI body #004,
 * the first user message, times and usage edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const MIN = 60_000;
const at = (ms: number) => (m: any) => {
  m.receivedAt = new Date(Date.parse('2026-11-30T09:00:00Z') + ms).toISOString();
};
const usage = (read: number) => (m: any) => {
  m.usage = { prompt_tokens: 2230, completion_tokens: 5, total_tokens: 2235, prompt_tokens_details: { cached_tokens: read } };
};

describe('review: a partial read refreshes only the part read', () => {
  it('#3 (= #1) 15 min after #1, 7 min after #2 read #1 up to message 0: ttl-expired, 1536 expected', async () => {
    const dir = captureDir(PI_MAIN, [
      ['004-openai-completions', undefined, at(0)],
      ['004-openai-completions', (b) => (b.messages[1].content[0].text = 'Hello pi. Say hello.'), (m) => (at(8 * MIN)(m), usage(1536)(m))],
      ['004-openai-completions', undefined, (m) => (at(15 * MIN)(m), usage(1536)(m))],
    ]);
    const a = analyzeSession(await readCaptureSession(dir));
    // #2 read #1's tools and system prompt (1536 tokens) and so refreshed them, not the rest of
    // #1: that idled 15 min (> ~10). It used to count as refreshed whole: 'hit', expected 2176, 0 lost.
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'break', 'ttl-expired']);
    assert.equal(a.requests[2].expectedRead, 1536);
    // #1's 2230 tokens in 128-token steps (2176) minus the 1536 read.
    assert.equal(a.requests[2].lostTokens, 640);
  });
});
