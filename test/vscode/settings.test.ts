import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api } from './helpers.js';

describe('settings', () => {
  after(async () => {
    await vscode.workspace.getConfiguration('prefixLens').update('priceOverrides', undefined, vscode.ConfigurationTarget.Global);
  });

  it('prefixLens.priceOverrides reprices the re-billed tokens of the breaks (OpenCode compaction session, priced from the bundled table)', async () => {
    const a = await api();
    const ref = (await a.sessions.sessions()).find((r) => r.title === 'Recorded: Compaction session turn one.')!;
    const before = (await a.analyze(ref))!;
    assert.ok(before.totals.lostTokens > 0);
    // Every model at $1,000 input per million tokens: re-billed tokens are now priced by the override.
    await vscode.workspace.getConfiguration('prefixLens').update('priceOverrides', [{ match: '.*', input: 1000, output: 1000 }], vscode.ConfigurationTarget.Global);
    const after = (await a.analyze(ref))!;
    assert.equal(after.totals.lostTokens, before.totals.lostTokens);
    assert.ok(after.totals.costUSD > before.totals.costUSD * 10, `${after.totals.costUSD} vs ${before.totals.costUSD}`);
  });
});
