/**
 * The minimum cacheable length is applied only to a prompt whose size is known: a request the
 * provider reported a cache read (or write) for is never below the minimum; a prompt with a usage
 * field unknown and no estimate calibrated on its lineage is judged by its bytes like any other,
 * and so is the entry it leaves (kept as a cache entry, holding at least its known fields); a
 * read unknown is bounded by the write (explicit breakpoints). Built from the recorded Pi
 * capture bodies (test/fixtures/pi/*\/requests) with their metas' usage edited.
 */
import assert from 'node:assert/strict';
import { analyzeSession, type SessionAnalysis } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_LONG, PI_MAIN, type Step } from './review-helpers.js';

const HAIKU = 'claude-3-5-haiku-20241022'; // minimum 2,048 tokens
const haiku = (b: any) => (b.model = HAIKU);
/** A meta edit: the model haiku (when asked) and the usage fields given set as written. */
const meta =
  (fields: Record<string, unknown>, model?: string) =>
  (m: any): void => {
    if (model) m.model = model;
    Object.assign(m.usage, fields);
  };

async function judge(from: string, steps: Step[]): Promise<SessionAnalysis> {
  return analyzeSession(await readCaptureSession(captureDir(from, steps)));
}

/** [number, verdict, break "segment path @byte", matched, promptTokens, expectedRead, observedRead, lostTokens]. */
function rows(a: SessionAnalysis): unknown[] {
  return a.requests.map((r) => [r.number, r.verdict, r.break ? `${r.break.segment} ${r.break.path} @${r.break.byteOffset}` : null, r.matchedNumber, r.promptTokens, r.expectedRead, r.observedRead, r.lostTokens]);
}

describe('judge: a prompt of unknown size is never below the minimum from a guess', () => {
  it('a cache read reported: not below the minimum, even with a known prompt under it (1,000 < 1,024 on claude-sonnet-4-5, all of it read)', async () => {
    const a = await judge(PI_LONG, [['001-anthropic-messages'], ['002-anthropic-messages', undefined, meta({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 1000 })]]);
    // Was: #2 below-minimum.
    assert.deepEqual(rows(a), [
      ['1', 'cold', null, null, 1547, 0, 0, 0],
      ['2', 'hit', null, '1', 1000, 1547, 1000, 0],
    ]);
  });

  it('cache writes unknown, nothing calibrated: the first request is cold, not below-minimum from the uncalibrated ~1,546 (< 2,048 on haiku); its entry of unknown size is compared with; a system edit at #3 breaks at its byte', async () => {
    const unknownWrite = meta({ cache_creation_input_tokens: '12' }, HAIKU);
    const a = await judge(PI_LONG, [
      ['001-anthropic-messages', haiku, unknownWrite],
      ['002-anthropic-messages', haiku, unknownWrite],
      [
        '003-anthropic-messages',
        (b) => {
          haiku(b);
          b.system[0].text = b.system[0].text.replace('You', 'YOU');
        },
        unknownWrite,
      ],
    ]);
    assert.equal(a.tokenModel.calibrated, false);
    // Was: all three below-minimum, no break.
    assert.deepEqual(rows(a), [
      ['1', 'cold', null, null, 1546, 0, 0, 0],
      ['2', 'hit', null, '1', 1591, 1546, 1547, 0],
      ['3', 'break', 'system system[0].text @618', '2', 1636, 715, 1581, 10],
    ]);
  });

  it('usage unknown but the wire bytes are the whole prompt: 1,656 bytes hold at most 1,656 tokens, below-minimum (< 2,048 on haiku)', async () => {
    const a = await judge(PI_MAIN, [['009-anthropic-messages', haiku, meta({ input_tokens: '12' }, HAIKU)]]);
    assert.deepEqual(rows(a), [['0.1', 'below-minimum', null, null, 355, 0, 0, 0]]);
  });

  it('usage unknown, the estimate calibrated on the lineage (the summary #0.1 before it): below-minimum by the estimate (< 1,024)', async () => {
    const a = await judge(PI_MAIN, [['009-anthropic-messages'], ['010-anthropic-messages', undefined, meta({ input_tokens: '12' })]]);
    assert.deepEqual(
      a.requests.map((r) => [r.number, r.verdict, r.promptTokens]),
      [
        ['0.1', 'below-minimum', 351],
        ['0.2', 'below-minimum', 428],
      ],
    );
  });

  it('the read unknown, the write known: a write of the whole prompt (1,616) is a read that collapsed; the recorded write (35) is a hit', async () => {
    const third = (write?: number): Step => ['003-anthropic-messages', undefined, meta(write === undefined ? { cache_read_input_tokens: '12' } : { cache_read_input_tokens: '12', cache_creation_input_tokens: write })];
    const rewritten = await judge(PI_LONG, [['001-anthropic-messages'], ['002-anthropic-messages'], third(1616)]);
    assert.deepEqual(rows(rewritten)[2], ['3', 'unexplained-miss', null, '2', 1616, 1581, null, 1434]);
    const recorded = await judge(PI_LONG, [['001-anthropic-messages'], ['002-anthropic-messages'], third()]);
    assert.deepEqual(rows(recorded)[2], ['3', 'hit', null, '2', 1615, 1581, null, 0]);
  });
});
