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
