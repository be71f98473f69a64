/**
 * Anthropic 1 h breakpoints: re-billed tokens are written at 2× input, not the 5 min 1.25×
 * (recorded Pi long scenario, PI_CACHE_RETENTION=long, claude-sonnet-4-5: table prices).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';

describe('review: cost of a break under 1 h breakpoints', () => {
  it('the AGENTS.md edit (#4) re-bills 1616 tokens at $6 − $0.30 per million (Sonnet 4.5, 1 h write)', async () => {
    const s = await readCaptureSession('test/fixtures/pi/long/requests');
    const r = analyzeSession(s).requests[3];
    assert.equal(r.verdict, 'break');
    assert.equal(r.lostTokens, 1616);
    // 1616 × (3 × 2 − 3 × 0.1) / 1e6 = 0.0092112; with the 5 min write price it was 0.0055752.
    assert.equal(r.costUSD!.toFixed(7), '0.0092112');
  });
});
