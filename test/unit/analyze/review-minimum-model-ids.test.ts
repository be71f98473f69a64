/**
 * Minimum cacheable length by the model ids the API really uses: Claude 3 Haiku and 3.5 Haiku
 * cache from 2048 tokens (reference/providers.md §1.2, anthropic-sdk-python#1194), and their ids
 * are `claude-3-haiku-…` / `claude-3-5-haiku-…` (Bedrock `anthropic.claude-3-5-haiku-…`), which
 * the rule `haiku-3` never matched: they got the 1024 default, so a 1,500-token prompt the
 * provider (rightly) did not cache read as an unexplained miss instead of below-minimum.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { defaultRules, familyFor, minimumTokens } from '../../../src/core/rules.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_LONG } from './review-helpers.js';

const anthropic = familyFor('claude-3-5-haiku-20241022', 'anthropic-messages', defaultRules);

describe('review: minimum cacheable length by real model ids', () => {
  it('2048 for Claude 3 Haiku and 3.5 Haiku (API and Bedrock ids), unchanged for the others', () => {
    assert.equal(anthropic.id, 'anthropic');
    const ids = ['claude-3-haiku-20240307', 'claude-3-5-haiku-20241022', 'claude-3-5-haiku-latest', 'anthropic.claude-3-5-haiku-20241022-v1:0', 'us.anthropic.claude-3-haiku-20240307-v1:0'];
    assert.deepEqual(ids.map((m) => minimumTokens(anthropic, m)), [2048, 2048, 2048, 2048, 2048]);
    const others = ['claude-haiku-4-5', 'claude-opus-4-7', 'claude-opus-4-5-20251101', 'claude-sonnet-4-5', 'claude-3-7-sonnet-20250219', 'claude-opus-5'];
    assert.deepEqual(others.map((m) => minimumTokens(anthropic, m)), [4096, 2048, 4096, 1024, 1024, 512]);
  });

  it('a 1,581-token prompt on claude-3-5-haiku that read nothing is below-minimum (was: unexplained-miss)', async () => {
    // Pi's recorded long #2 and #3 (the same conversation growing), sent to claude-3-5-haiku, with
    // what that model reports for a prompt under its minimum: all input, nothing cached.
    const haiku = (b: any) => (b.model = 'claude-3-5-haiku-20241022');
    const uncached = (tokens: number) => (m: any) => {
      m.model = 'claude-3-5-haiku-20241022';
      m.usage = { input_tokens: tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 };
    };
    const dir = captureDir(PI_LONG, [['002-anthropic-messages', haiku, uncached(1581)], ['003-anthropic-messages', haiku, uncached(1616)]]);
    const a = analyzeSession(await readCaptureSession(dir));
    assert.deepEqual(a.requests.map((r) => [r.request.model, r.promptTokens, r.verdict, r.expectedRead, r.lostTokens]), [
      ['claude-3-5-haiku-20241022', 1581, 'below-minimum', 0, 0],
      ['claude-3-5-haiku-20241022', 1616, 'below-minimum', 0, 0],
    ]);
  });
});
