/**
 * A read between half and all of what the cache held is a hit that lost tokens: the shortfall is
 * reported, with a cause where one is known (Anthropic: the 20-block lookback exceeded, the
 * breakpoints moved before the write). Recorded Pi bodies with messages appended and breakpoints
 * placed the way long tool loops and hosts that move them produce.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const anthropicUsage = (read: number, write: number) => (m: any) => (m.usage = { input_tokens: 0, cache_creation_input_tokens: write, cache_read_input_tokens: read, output_tokens: 5 });

/** #006's conversation continued by `steps` assistant/user pairs, one block each; the breakpoint on message `mark`. */
const loop = (steps: number, mark: (b: any) => any) => (b: any) => {
  delete b.messages[12].content[0].cache_control;
  for (let k = 0; k < steps; k++) {
    b.messages.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${k}: calling the next tool.` }] });
    b.messages.push({ role: 'user', content: [{ type: 'text', text: `Result ${k}: ok.` }] });
  }
  mark(b).cache_control = { type: 'ephemeral' };
};
const last = (b: any) => b.messages[b.messages.length - 1].content[0];

describe('review: partial reads report what they lost', () => {
  it('OpenAI: a read of 1536 where 1792 could be read is a hit with 256 tokens lost (was: 0 lost)', async () => {
    const dir = captureDir(PI_MAIN, [['003-openai-completions'], ['004-openai-completions', undefined, (m) => (m.usage.prompt_tokens_details.cached_tokens = 1536)]]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.expectedRead, r.observedRead, r.lostTokens, r.causes], ['hit', 1792, 1536, 256, []]);
    // gpt-5: 256 tokens billed as input ($1.25) instead of read ($0.125) per million.
    assert.equal(r.costUSD!.toFixed(6), '0.000288');
  });

  it('Anthropic: a breakpoint 22 blocks past the last write misses it (lookback 20): lost tokens and the cause', async () => {
    // The provider reads what the system breakpoint reaches: the system entry (1519 observed, ~1679
    // estimated from its bytes).
    const dir = captureDir(PI_MAIN, [['006-anthropic-messages'], ['006-anthropic-messages', loop(11, last), anthropicUsage(1519, 1262)]]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.expectedRead, r.observedRead], ['hit', 1679, 1519]);
    assert.deepEqual(r.causes.map((c) => c.kind), ['lookback-exceeded']);
    assert.equal(r.causes[0].detail, 'the breakpoint at messages[34].content[0] is 22 blocks past the entry #1 wrote at messages[12].content[0] (~2451 tokens); the provider looks back 20 blocks');
    assert.equal(r.lostTokens, 2451 - 1519);
  });

  it('within the lookback (18 blocks past) the entry is read: no loss', async () => {
    const dir = captureDir(PI_MAIN, [['006-anthropic-messages'], ['006-anthropic-messages', loop(9, last), anthropicUsage(2451, 279)]]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.expectedRead, r.lostTokens, r.causes], ['hit', 2451, 0, []]);
  });

  it('Anthropic: the breakpoint moved before the block the entry was written at: only the system entry is read', async () => {
    const dir = captureDir(PI_MAIN, [['006-anthropic-messages'], ['006-anthropic-messages', loop(1, (b) => b.messages[5].content[0]), anthropicUsage(1519, 962)]]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.expectedRead, r.observedRead], ['hit', 1678, 1519]);
    assert.deepEqual(r.causes.map((c) => c.kind), ['breakpoint-moved']);
    assert.equal(r.causes[0].detail, 'no breakpoint at or after messages[12].content[0], where #1 wrote its entry (~2451 tokens): the deepest is at messages[5].content[0]');
    assert.equal(r.lostTokens, 2451 - 1519);
  });
});
