/**
 * OpenAI caches a token prefix, not blocks: a change near the end of the system prompt still
 * lets the provider read the tools and the system prompt up to the changed byte (recorded Pi
 * OpenAI bodies #002 → #003, the date in #003's system prompt edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

describe('review: implicit caching reads into the first changed block', () => {
  it('a date changed at the end of the system prompt: expected read 1536, not 0', async () => {
    const dir = captureDir(PI_MAIN, [
      ['002-openai-completions'],
      ['003-openai-completions', (b) => (b.messages[0].content = b.messages[0].content.replace(/Current date: \d{4}-\d{2}-\d{2}/, 'Current date: 2020-01-01'))],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.equal(r.verdict, 'break');
    assert.deepEqual([r.break!.segment, r.break!.path], ['system', 'messages[0].content']);
    // Tools + system prompt up to "Current date: 2026-1" ≈ 1560 tokens → 1536 in 128-token steps.
    // Counting whole blocks only, the common prefix was the tools (< 1024 tokens): expected 0.
    assert.equal(r.expectedRead, 1536);
  });
});
