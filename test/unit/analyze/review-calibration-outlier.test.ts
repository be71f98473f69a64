/**
 * The token model's slope (tokens per canonical byte) is the median of growth ratios; a ratio
 * above one token per byte is tokens the bytes do not show and is not kept. On the Claude Code
 * auto-compaction recording (test/fixtures/claude-code-autocompact) #2 reports 170,000 more
 * prompt tokens for 283 more bytes: kept, it averaged with the one real ratio (#4 → #5: 68 tokens
 * for 317 bytes) into ~300.6 tokens per byte, and every estimate of the session with it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { analyzeSession, Calibration, MAX_TOKENS_PER_BYTE } from '../../../src/core/analyze.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { mainTranscript } from '../claude-code/helpers.js';

const AUTOCOMPACT = 'test/fixtures/claude-code-autocompact';

describe('review: growth ratios above one token per byte are not calibration', () => {
  it('auto-compaction recording: 68/317 tokens per byte (was ~300.6), from the transcript and from the bodies', async () => {
    const file = mainTranscript(AUTOCOMPACT);
    for (const s of [(await readClaudeSession(file))[0], (await readClaudeSession(file, { requestsDir: join(AUTOCOMPACT, 'requests') }))[0]]) {
      const a = analyzeSession(s);
      assert.equal(a.tokenModel.perByte, 68 / 317);
      assert.equal(a.tokenModel.calibrated, true);
    }
  });

  it('a ratio of exactly one token per byte is kept, one above it is not', () => {
    const req = (bytes: number, tokens: number): any => ({ usage: { uncached: tokens, cacheRead: 0, cacheWrite: 0, output: 1 }, tail: { bytesThrough: bytes }, kind: 'agent', provider: 'p', model: 'm', params: {} });
    const c = new Calibration();
    c.add(req(1000, 300));
    assert.equal(c.add(req(1100, 400)), true); // 100 tokens / 100 bytes = MAX_TOKENS_PER_BYTE
    assert.equal(c.model().perByte, MAX_TOKENS_PER_BYTE);
    c.add(req(1200, 100_400)); // 100,000 tokens / 100 bytes: not kept (the point still is)
    c.add(req(1300, 100_425)); // 0.25
    assert.equal(c.model().perByte, (1 + 0.25) / 2);
  });
});
