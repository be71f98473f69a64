/**
 * A request compared with earlier requests that were too short to be cached breaks nothing: there
 * was no entry to read (recorded Pi main bodies, unedited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';

describe('review: no entry, no break', () => {
  it('the branch summary #12 (1767 tokens) after summaries of 351 and 425 tokens is cold, not a break', async () => {
    const a = analyzeSession(await readCaptureSession('test/fixtures/pi/main/requests'));
    const [s9, s10, s12] = [a.requests[8], a.requests[9], a.requests[11]];
    assert.deepEqual([s9.promptTokens, s10.promptTokens], [351, 425]);
    // Below the 1024-token minimum, #9 and #10 wrote no entry; #12 was a 'break' against #10 and
    // counted in the session's breaks.
    assert.equal(s12.verdict, 'cold');
    assert.equal(s12.break, null);
    assert.equal(s12.matched, null);
    assert.deepEqual(s12.causes, []);
    // #10 itself (below the minimum, the turn-prefix summary of the compaction whose history
    // summary is #9) is not compared with #9: each summary request is a prompt of its own, so what
    // differs between them is no edit of a history (it was "history-rewritten: edit at message 0").
    assert.deepEqual([s10.verdict, s10.number, s10.matched, s10.break, s10.causes], ['below-minimum', '8.2', null, null, []]);
    assert.equal(a.totals.breaks, 3);
  });
});

describe('review: no breakpoint seen is not "no entry"', () => {
  it('top-level automatic caching (no block breakpoint): an edit is still a break against the previous request', async () => {
    const { captureDir, PI_MAIN } = await import('./review-helpers.js');
    const automatic = (b: any) => {
      const strip = (x: any) => {
        if (x && typeof x === 'object') {
          delete x.cache_control;
          Object.values(x).forEach(strip);
        }
      };
      strip(b);
      b.cache_control = { type: 'ephemeral' };
    };
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', automatic],
      ['007-anthropic-messages', (b) => (automatic(b), (b.messages[2].content[0].text = 'Edited.'))],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    // The wire reader places no breakpoint for a top-level cache_control; the 2451-token entry
    // is above the minimum, so it is still a candidate.
    assert.equal(r.verdict, 'break');
    assert.equal(r.matched, 1);
  });
});
