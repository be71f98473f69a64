/**
 * Anthropic: a thinking change invalidates the messages tier only, so a read of the head
 * entries alone confirms the params break (recorded Pi bodies #007 → #008, usage edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

describe('review: a params change with a read of the head only', () => {
  it('#008 (thinking budget 8192 → 16384) reading only the system entry is a params break', async () => {
    // 1519 = the head (tools + system) entry, 2622 = the full expected read; 1519 is above half
    // of 2622, so it used to count as "the provider still read the cache" and the verdict was hit.
    const headOnly = { input_tokens: 0, cache_creation_input_tokens: 1223, cache_read_input_tokens: 1519, output_tokens: 5 };
    const dir = captureDir(PI_MAIN, [['007-anthropic-messages'], ['008-anthropic-messages', undefined, (m) => (m.usage = headOnly)]]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.equal(r.verdict, 'break');
    assert.deepEqual([r.break!.segment, r.break!.path], ['params', 'thinking']);
    assert.deepEqual(r.causes.map((c) => [c.kind, c.certainty]), [['params-changed', 'certain']]);
    assert.equal(r.expectedRead, 2622);
    // Re-billed: the entry's 2622 tokens minus the 1519 read (within the 1223 written).
    assert.equal(r.lostTokens, 1103);
  });

  it('the same request reading its full prefix stays a hit with a likely params cause', async () => {
    const dir = captureDir(PI_MAIN, [['007-anthropic-messages'], ['008-anthropic-messages']]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.equal(r.verdict, 'hit');
    assert.deepEqual(r.causes.map((c) => [c.kind, c.certainty]), [['params-changed', 'likely']]);
  });
});

describe('review: each cache-relevant parameter invalidates its own tier (provider-rules.json params)', () => {
  const noRead = (m: any) => (m.usage.prompt_tokens_details ? (m.usage.prompt_tokens_details.cached_tokens = 0) : (m.usage.input_tokens_details.cached_tokens = 0));

  it('OpenAI service_tier default → flex: nothing can be read, a params break (was: unexplained miss)', async () => {
    const dir = captureDir(PI_MAIN, [
      ['003-openai-completions', (b) => (b.service_tier = 'default')],
      ['004-openai-completions', (b) => (b.service_tier = 'flex'), noRead],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.break!.segment, r.break!.path, r.break!.before, r.break!.after], ['break', 'params', 'service_tier', 'default', 'flex']);
    assert.equal(r.causes[0].detail, 'service_tier: default → flex (invalidates the whole prefix)');
  });

  it('OpenAI Responses reasoning.effort low → high with the read gone: a params break on that member', async () => {
    const effort = (e: string) => (b: any) => (b.reasoning = { effort: e, summary: 'auto' });
    const dir = captureDir(PI_MAIN, [
      ['014-openai-responses', effort('low')],
      ['015-openai-responses', effort('high'), noRead],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.break!.segment, r.break!.path], ['break', 'params', 'reasoning.effort']);
    assert.deepEqual(r.causes.map((c) => c.detail), ['reasoning.effort: low → high (invalidates the whole prefix)']);
  });

  it('Anthropic speed invalidates the system tier: a read of the system entry contradicts it, a read of 0 confirms it', async () => {
    const read = (n: number) => (m: any) => (m.usage = { input_tokens: 0, cache_creation_input_tokens: 2622 - n, cache_read_input_tokens: n, output_tokens: 5 });
    const run = async (n: number) =>
      analyzeSession(await readCaptureSession(captureDir(PI_MAIN, [['006-anthropic-messages'], ['007-anthropic-messages', (b) => (b.speed = 'fast'), read(n)]]))).requests[1];
    // 1519 = the system entry: a change that invalidates the system tier cannot have read it (a
    // messages-tier parameter would have been confirmed by this read).
    const kept = await run(1519);
    assert.equal(kept.verdict, 'hit');
    assert.deepEqual(kept.causes.map((c) => [c.certainty, c.detail]), [['likely', 'speed: (none) → fast (invalidates the system tier and what follows) (the provider still read the cache)']]);
    const gone = await run(0);
    assert.deepEqual([gone.verdict, gone.break!.path], ['break', 'speed']);
  });
});
