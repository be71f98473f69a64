/**
 * The user's price overrides (prefixLens.priceOverrides) beat the prices a transcript records
 * (Pi's usage.cost) as well as the bundled table; requests they do not match keep the host's.
 * Recorded Pi main session: host prices on every request.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { rulesWithOverrides } from '../../../src/extension/rules.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';

const DIR = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';

describe('price overrides over host prices', () => {
  it('an override matching claude reprices breaks #9 and #10 (5 min writes at 1.25×, reads at 0.1×); gpt-5 keeps its recorded prices', async () => {
    const s = await readPiSession(join(DIR, readdirSync(DIR).find((n) => n.endsWith('.jsonl'))!));
    const host = analyzeSession(s).requests;
    const over = analyzeSession(s, rulesWithOverrides({ ttlSeconds: {}, prices: [{ match: 'claude', input: 10, output: 50 }] })).requests;
    assert.deepEqual(host.map((r) => r.priceSource), Array(13).fill('host'));
    assert.deepEqual(over.map((r) => r.priceSource), ['host', 'host', 'host', 'host', 'override', 'override', 'override', 'override', 'override', 'override', 'host', 'host', 'host']);
    // Recorded: 1211 and 594 tokens lost at the host's Sonnet prices.
    assert.deepEqual([host[8].lostTokens, host[8].costUSD, host[9].lostTokens, host[9].costUSD], [1211, 0.00417795, 594, 0.0020493]);
    // 1211 × (10 × 1.25 − 10 × 0.1) / 1e6 and 594 × 11.5 / 1e6.
    assert.deepEqual([over[8].costUSD!.toFixed(7), over[9].costUSD!.toFixed(7)], ['0.0139265', '0.0068310']);
    assert.equal(over[12].costUSD, host[12].costUSD);
    assert.equal(over[12].costUSD, 0.00072);
  });
});
