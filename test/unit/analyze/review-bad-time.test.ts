/**
 * An unparsable timestamp gives a NaN send time (Date.parse); the judge takes it as unknown
 * instead of as "expired" (recorded Pi bodies #006–#008, #007's receivedAt edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

describe('review: a send time that is not a number', () => {
  it('#2 with receivedAt "yesterday" and #3 after it are hits, with no NaN gap', async () => {
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages'],
      ['007-anthropic-messages', undefined, (m) => (m.receivedAt = 'yesterday')],
      ['008-anthropic-messages'],
    ]);
    const s = await readCaptureSession(dir);
    // The capture reader reports an unreadable time as unknown …
    assert.equal(s.requests[1].timeMs, null);
    // … and the judge copes with a reader that does not (NaN from Date.parse).
    s.requests[1].timeMs = NaN;
    const a = analyzeSession(s);
    // NaN compared as a time made every entry dead: both were 'ttl-expired', #2's gap NaN.
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'hit', 'hit']);
    assert.equal(a.requests[1].gapMs, null);
    assert.equal(a.requests[2].gapMs, null);
  });
});
