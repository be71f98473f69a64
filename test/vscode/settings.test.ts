import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, testEnv, until } from './helpers.js';

describe('settings', () => {
  after(async () => {
    await vscode.workspace.getConfiguration('prefixLens').update('priceOverrides', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('prefixLens').update('sessionFolders.codex', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('prefixLens').update('sessionFolders.pi', undefined, vscode.ConfigurationTarget.Global);
  });

  it('prefixLens.priceOverrides reprices the re-billed tokens of the breaks (the Claude Code session\'s /compact, priced from the bundled table)', async () => {
    const a = await api();
    const ref = (await a.sessions.sessions()).find((r) => r.host === 'claude-code' && r.id.startsWith('8aa2b6b2'))!;
    const before = (await a.analyze(ref))!;
    assert.equal(before.totals.lostTokens, 19213);
    // Every model at $1,000 input per million tokens: re-billed tokens are now priced by the override.
    await vscode.workspace.getConfiguration('prefixLens').update('priceOverrides', [{ match: '.*', input: 1000, output: 1000 }], vscode.ConfigurationTarget.Global);
    const after = (await a.analyze(ref))!;
    assert.equal(after.totals.lostTokens, before.totals.lostTokens);
    assert.ok(after.totals.costUSD > before.totals.costUSD * 10, `${after.totals.costUSD} vs ${before.totals.costUSD}`);
  });

  it('prefixLens.sessionFolders.codex adds a folder: its rollouts are listed, and one written there later appears by itself (the folder is watched)', async () => {
    const a = await api();
    const dir = join(testEnv.tmp, 'more-codex');
    const day = join(dir, 'sessions/2026/12/01');
    mkdirSync(day, { recursive: true });
    const codex = async () => (await a.sessions.sessions()).filter((r) => r.host === 'codex');
    assert.equal((await codex()).length, 1, 'the fixture home has one Codex session');
    const listed = a.sessions.lastListing;
    await vscode.workspace.getConfiguration('prefixLens').update('sessionFolders.codex', [join(testEnv.tmp, 'more-codex')], vscode.ConfigurationTarget.Global);
    await until('the listing after the setting changed', () => a.sessions.lastListing !== listed, 20_000);
    assert.equal((await codex()).length, 1, 'an empty configured folder adds nothing');
    // The three rollouts of the codex-agents recording (a parent and two sub-agents), written after the listing.
    const src = join(testEnv.repo, 'test/fixtures/codex-agents/codex/sessions/2026/12/01');
    for (const f of readdirSync(src)) copyFileSync(join(src, f), join(day, f));
    // A new watcher starts asynchronously and may miss writes of its first moments: the files are
    // touched again every 2 s (what an agent appending to its rollout does), never re-listed by hand.
    let polls = 0;
    const found = await until('the Sessions view to list the rollouts written in the configured folder', async () => {
      const refs = (await codex()).filter((r) => r.path.startsWith(dir));
      if (++polls % 20 === 0) for (const f of readdirSync(day)) utimesSync(join(day, f), new Date(), new Date());
      return refs.length === 3 ? refs : null;
    }, 20_000);
    const requests = await Promise.all(found.map(async (r) => (await a.analyze(r))!.requests.length));
    assert.deepEqual(requests.sort(), [1, 2, 4]);
  });

  it('a configured folder that cannot be read is said above the Sessions tree and in the log; the other sessions stay listed', async () => {
    const a = await api();
    const missing = join(testEnv.tmp, 'no-such-pi-folder');
    const count = (await a.sessions.sessions()).length;
    const listed = a.sessions.lastListing;
    await vscode.workspace.getConfiguration('prefixLens').update('sessionFolders.pi', [missing], vscode.ConfigurationTarget.Global);
    await until('the listing after the setting changed', () => a.sessions.lastListing !== listed, 20_000);
    assert.deepEqual(a.sessions.discoveryWarnings, [`folder configured for Pi: ${missing}: no such file or directory`]);
    assert.equal(a.sessionsTree.message, '1 folder not read: see Output ▸ Prefix Lens');
    assert.equal((await a.sessions.sessions()).length, count);
    const again = a.sessions.lastListing;
    await vscode.workspace.getConfiguration('prefixLens').update('sessionFolders.pi', undefined, vscode.ConfigurationTarget.Global);
    await until('the listing after the setting was removed', () => a.sessions.lastListing !== again, 20_000);
    assert.deepEqual([a.sessions.discoveryWarnings, a.sessionsTree.message], [[], undefined]);
  });
});
