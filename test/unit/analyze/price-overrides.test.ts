/**
 * The user's price overrides (prefixLens.priceOverrides) beat the prices a transcript records
 * (Pi's usage.cost) as well as the bundled table; requests they do not match keep the host's.
 * Recorded Pi main session: host prices on every request; the Claude Code session: the bundled table.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { rulesWithOverrides } from '../../../src/extension/rules.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';

const DIR = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const CC = 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl';

describe('price overrides over host prices', () => {
  it('an override matching claude prices the Pi session\'s Sonnet requests; gpt-5 keeps its recorded prices', async () => {
    const s = await readPiSession(join(DIR, readdirSync(DIR).find((n) => n.endsWith('.jsonl'))!));
    const host = analyzeSession(s).requests;
    const over = analyzeSession(s, rulesWithOverrides({ ttlSeconds: {}, prices: [{ match: 'claude', input: 10, output: 50 }] })).requests;
    assert.deepEqual(host.map((r) => r.priceSource), Array(13).fill('host'));
    assert.deepEqual(over.map((r) => r.priceSource), ['host', 'host', 'host', 'host', 'override', 'override', 'override', 'override', 'override', 'override', 'host', 'host', 'host']);
    // The compaction (#9) and the branch (#10) re-bill nothing (what they send after the change is new), so they cost 0 either way.
    assert.deepEqual([host[8].lostTokens, host[8].costUSD, host[9].lostTokens, host[9].costUSD, over[8].costUSD, over[9].costUSD], [0, 0, 0, 0, 0, 0]);
  });

  it('an override matching claude reprices the Claude Code compaction break (#9: 19,213 tokens re-billed, 5 min writes at 1.25×, reads at 0.1×)', async () => {
    const [s] = await readClaudeSession(CC);
    const table = analyzeSession(s).requests[8];
    const over = analyzeSession(s, rulesWithOverrides({ ttlSeconds: {}, prices: [{ match: 'claude', input: 10, output: 50 }] })).requests[8];
    assert.deepEqual([table.verdict, table.lostTokens, table.priceSource, over.priceSource], ['break', 19213, 'rules', 'override']);
    // 19213 × (3.75 − 0.3) / 1e6 at the bundled rules' Sonnet 4.5 prices; 19213 × (10 × 1.25 − 10 × 0.1) / 1e6 overridden.
    assert.deepEqual([table.costUSD!.toFixed(7), over.costUSD!.toFixed(7)], ['0.0662849', '0.2209495']);
  });
});
